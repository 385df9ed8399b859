/**
 * The emulated GPU catalogue: GPU type ids, prices (micro-USD per GPU-hour, integers) and how many
 * GPUs of each type are free right now. Creating or starting a pod reserves GPUs here; stopping,
 * terminating or failing releases them. Prices come from the reference's fixed table (§7, the
 * observed figures); they are placeholders, never read as facts about the live service.
 * Must not know: pods, HTTP, time.
 */

export interface GpuTypeConfig {
  /** The id a create request names, e.g. "NVIDIA L40S". */
  readonly id: string;
  readonly displayName?: string;
  /** On-demand price per GPU-hour in the secure cloud, USD. */
  readonly securePriceUsdPerHr: number;
  /** Community-cloud price per GPU-hour, USD (default: the secure price). */
  readonly communityPriceUsdPerHr?: number;
  /** GPUs of this type free at start (default 8). */
  readonly capacityGpus?: number;
  /** Largest `gpu.count` one pod may ask for (default 8). */
  readonly maxCountPerPod?: number;
  /** Data centre pods of this type land in (default "EU-RO-1"). */
  readonly dataCenterId?: string;
}

export const DEFAULT_GPU_TYPES: readonly GpuTypeConfig[] = [
  {
    id: "NVIDIA RTX A4000",
    displayName: "RTX A4000",
    securePriceUsdPerHr: 0.25,
    communityPriceUsdPerHr: 0.17,
  },
  { id: "NVIDIA GeForce RTX 4090", displayName: "RTX 4090", securePriceUsdPerHr: 0.59 },
  { id: "NVIDIA A40", displayName: "A40", securePriceUsdPerHr: 0.35 },
  { id: "NVIDIA L40S", displayName: "L40S", securePriceUsdPerHr: 0.79 },
  { id: "NVIDIA H100 80GB HBM3", displayName: "H100 SXM", securePriceUsdPerHr: 2.69 },
];

export interface GpuType {
  readonly id: string;
  readonly displayName: string;
  readonly securePriceMicroUsdPerHr: number;
  readonly communityPriceMicroUsdPerHr: number;
  readonly maxCountPerPod: number;
  readonly dataCenterId: string;
}

function toMicroUsd(path: string, usd: number | undefined, fallback: number): number {
  if (usd === undefined) return fallback;
  if (typeof usd !== "number" || !(usd >= 0 && usd <= 1000)) {
    throw new RangeError(
      `runpod emulator option ${path}: expected a price in [0, 1000] USD, got ${String(usd)}`,
    );
  }
  return Math.round(usd * 1_000_000);
}

function count(path: string, value: number | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > 1_000_000) {
    throw new RangeError(
      `runpod emulator option ${path}: expected an integer ≥ ${min}, got ${String(value)}`,
    );
  }
  return value;
}

/** GPU types with their free GPU counts. */
export class GpuCatalog {
  readonly #types = new Map<string, GpuType>();
  readonly #free = new Map<string, number>();

  constructor(configs: readonly GpuTypeConfig[]) {
    if (configs.length === 0) throw new RangeError("runpod emulator option gpuTypes: expected at least one");
    configs.forEach((config, index) => {
      const path = `gpuTypes[${index}]`;
      if (typeof config.id !== "string" || config.id.trim() === "" || this.#types.has(config.id)) {
        throw new RangeError(`runpod emulator option ${path}.id: expected a unique, non-empty id`);
      }
      const secure = toMicroUsd(`${path}.securePriceUsdPerHr`, config.securePriceUsdPerHr, -1);
      if (secure < 0) throw new RangeError(`runpod emulator option ${path}.securePriceUsdPerHr: required`);
      this.#types.set(config.id, {
        id: config.id,
        displayName: config.displayName ?? config.id,
        securePriceMicroUsdPerHr: secure,
        communityPriceMicroUsdPerHr: toMicroUsd(
          `${path}.communityPriceUsdPerHr`,
          config.communityPriceUsdPerHr,
          secure,
        ),
        maxCountPerPod: count(`${path}.maxCountPerPod`, config.maxCountPerPod, 1, 8),
        dataCenterId: config.dataCenterId ?? "EU-RO-1",
      });
      this.#free.set(config.id, count(`${path}.capacityGpus`, config.capacityGpus, 0, 8));
    });
  }

  type(id: string): GpuType | undefined {
    return this.#types.get(id);
  }

  ids(): string[] {
    return [...this.#types.keys()];
  }

  free(id: string): number {
    return this.#free.get(id) ?? 0;
  }

  /** Sets how many GPUs of a type are free (a fault switch: 0 is "out of capacity"). */
  setFree(id: string, gpus: number): void {
    if (!this.#types.has(id)) throw new RangeError(`runpod emulator: unknown GPU type "${id}"`);
    this.#free.set(id, count(`capacity of ${id}`, gpus, 0, 0));
  }

  /** Takes `gpus` GPUs of a type; false (and nothing taken) when fewer are free. */
  reserve(id: string, gpus: number): boolean {
    const free = this.free(id);
    if (free < gpus) return false;
    this.#free.set(id, free - gpus);
    return true;
  }

  release(id: string, gpus: number): void {
    this.#free.set(id, this.free(id) + gpus);
  }

  /**
   * `GET /v2/catalog/gpus` as the emulator answers it. The reference (§10) documents only
   * `price.{secure,community}` (USD per GPU-hour) and `maxCount`; the `{"gpus":[…]}` wrapper (like
   * `{"pods":[…]}`), `id`, `displayName`, `memoryInGb` absent, and `availability.{free}` with
   * `include=AVAILABILITY` are the emulator's GUESSES, not the documented shape.
   */
  wire(includeAvailability: boolean): { gpus: Record<string, unknown>[] } {
    return {
      gpus: [...this.#types.values()].map((t) => ({
        id: t.id,
        displayName: t.displayName,
        maxCount: t.maxCountPerPod,
        price: {
          secure: t.securePriceMicroUsdPerHr / 1_000_000,
          community: t.communityPriceMicroUsdPerHr / 1_000_000,
        },
        ...(includeAvailability ? { availability: { free: this.free(t.id) } } : {}),
      })),
    };
  }
}
