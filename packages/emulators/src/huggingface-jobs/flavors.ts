/**
 * The Jobs hardware the emulator offers (`GET /api/jobs/hardware`), with the published hourly
 * prices (reference §5.6 [D][C], billed per started minute) and the exposed-port surcharge
 * (§5.7 [D]: a flat $0.01 per hour per job with at least one exposed port, while running).
 * A flavor marked unavailable is refused on create (the emulator's "no capacity").
 * Must not know: HTTP, jobs.
 */

export interface JobFlavor {
  readonly name: string;
  readonly prettyName: string;
  readonly cpu: string;
  readonly ram: string;
  /** null for CPU flavors. */
  readonly gpu: { readonly model: string; readonly quantity: number; readonly vramGb: number } | null;
  readonly pricePerHour: number;
  /** false: creates asking for it are refused with 400 (no capacity). Default true. */
  readonly available?: boolean;
}

/** USD per hour added while a job with an exposed port runs (reference §5.7 [D]). */
export const EXPOSED_PORT_USD_PER_HOUR = 0.01;

const gpu = (model: string, quantity: number, vramGb: number) => ({ model, quantity, vramGb });

export const DEFAULT_FLAVORS: readonly JobFlavor[] = [
  { name: "cpu-basic", prettyName: "CPU Basic", cpu: "2 vCPU", ram: "16 GB", gpu: null, pricePerHour: 0.01 },
  {
    name: "cpu-upgrade",
    prettyName: "CPU Upgrade",
    cpu: "8 vCPU",
    ram: "32 GB",
    gpu: null,
    pricePerHour: 0.03,
  },
  {
    name: "t4-small",
    prettyName: "Nvidia T4 - small",
    cpu: "4 vCPU",
    ram: "15 GB",
    gpu: gpu("T4", 1, 16),
    pricePerHour: 0.4,
  },
  {
    name: "l4x1",
    prettyName: "1x Nvidia L4",
    cpu: "8 vCPU",
    ram: "30 GB",
    gpu: gpu("L4", 1, 24),
    pricePerHour: 0.8,
  },
  {
    name: "a10g-small",
    prettyName: "Nvidia A10G - small",
    cpu: "4 vCPU",
    ram: "15 GB",
    gpu: gpu("A10G", 1, 24),
    pricePerHour: 1.0,
  },
  {
    name: "a100-large",
    prettyName: "Nvidia A100 - large",
    cpu: "12 vCPU",
    ram: "142 GB",
    gpu: gpu("A100", 1, 80),
    pricePerHour: 2.5,
  },
  {
    name: "h200x8",
    prettyName: "8x Nvidia H200",
    cpu: "184 vCPU",
    ram: "2048 GB",
    gpu: gpu("H200", 8, 1128),
    pricePerHour: 40.0,
    available: false,
  },
];

export function findFlavor(flavors: readonly JobFlavor[], name: string): JobFlavor | undefined {
  return flavors.find((flavor) => flavor.name === name);
}

/** One entry of `GET /api/jobs/hardware`, in HF's wire shape. */
export function renderFlavor(flavor: JobFlavor): Record<string, unknown> {
  const microPerMinute = Math.round((flavor.pricePerHour * 1e6) / 60);
  return {
    name: flavor.name,
    prettyName: flavor.prettyName,
    cpu: flavor.cpu,
    ram: flavor.ram,
    accelerator:
      flavor.gpu === null
        ? null
        : {
            type: "gpu",
            model: flavor.gpu.model,
            quantity: String(flavor.gpu.quantity),
            vram: `${flavor.gpu.vramGb} GB`,
            manufacturer: "Nvidia",
          },
    unitCostMicroUSD: microPerMinute,
    unitCostUSD: microPerMinute / 1e6,
    unitLabel: "minute",
  };
}
