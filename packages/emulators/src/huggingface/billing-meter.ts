/**
 * What Hugging Face would have charged: for endpoints, every started minute of each continuous
 * billed stretch (initializing, running, updating) × replicas × `pricePerHour`; for the Inference
 * Providers router, tokens × the model's per-million-token prices. Read on the emulator's clock, so
 * an open stretch counts up to "now".
 * Must not know: HTTP, how states change (the world opens and closes stretches).
 */

const MINUTE_MS = 60_000;

export interface BilledStretch {
  readonly namespace: string;
  readonly name: string;
  /** The incarnation (`status.createdAt`) the stretch belongs to. */
  readonly createdAt: string;
  readonly startMs: number;
  /** Undefined while the stretch is open. */
  readonly endMs: number | undefined;
  readonly replicas: number;
  readonly pricePerHour: number;
}

interface OpenStretch {
  namespace: string;
  name: string;
  createdAt: string;
  startMs: number;
  endMs: number | undefined;
  replicas: number;
  pricePerHour: number;
}

export interface RouterCharge {
  readonly namespace: string;
  readonly model: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly microUsd: number;
}

export class BillingMeter {
  readonly #now: () => number;
  readonly #stretches: OpenStretch[] = [];
  readonly #router: RouterCharge[] = [];

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Starts a billed stretch (the world calls this when an endpoint enters a billed state). */
  open(
    key: { namespace: string; name: string; createdAt: string },
    atMs: number,
    replicas: number,
    pricePerHour: number,
  ): void {
    this.#stretches.push({ ...key, startMs: atMs, endMs: undefined, replicas, pricePerHour });
  }

  close(key: { namespace: string; name: string; createdAt: string }, atMs: number): void {
    for (const stretch of this.#stretches) {
      if (
        stretch.endMs === undefined &&
        stretch.namespace === key.namespace &&
        stretch.name === key.name &&
        stretch.createdAt === key.createdAt
      )
        stretch.endMs = atMs;
    }
  }

  chargeTokens(charge: RouterCharge): void {
    this.#router.push(charge);
  }

  /** Every stretch so far (a copy). */
  stretches(): BilledStretch[] {
    return this.#stretches.map((stretch) => ({ ...stretch }));
  }

  #select(namespace: string, name: string | undefined): OpenStretch[] {
    return this.#stretches.filter(
      (stretch) => stretch.namespace === namespace && (name === undefined || stretch.name === name),
    );
  }

  /** Started minutes billed (replica-minutes) to a namespace, or to one endpoint name (all incarnations). */
  billedMinutes(namespace: string, name?: string): number {
    const now = this.#now();
    return this.#select(namespace, name).reduce(
      (sum, stretch) =>
        sum + Math.ceil(((stretch.endMs ?? now) - stretch.startMs) / MINUTE_MS) * stretch.replicas,
      0,
    );
  }

  /** Micro-USD charged for endpoints: Σ started minutes × replicas × pricePerHour / 60, rounded once. */
  totalMicroUsd(namespace: string, name?: string): number {
    const now = this.#now();
    const exact = this.#select(namespace, name).reduce((sum, stretch) => {
      const minutes = Math.ceil(((stretch.endMs ?? now) - stretch.startMs) / MINUTE_MS);
      return sum + (minutes * stretch.replicas * Math.round(stretch.pricePerHour * 1e6)) / 60;
    }, 0);
    return Math.round(exact);
  }

  /** Micro-USD charged to a namespace by the Inference Providers router. */
  routerMicroUsd(namespace: string): number {
    return this.#router
      .filter((charge) => charge.namespace === namespace)
      .reduce((sum, charge) => sum + charge.microUsd, 0);
  }

  routerCharges(): RouterCharge[] {
    return [...this.#router];
  }
}
