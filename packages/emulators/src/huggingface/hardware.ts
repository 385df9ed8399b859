/**
 * Hardware the emulated provider offers (`GET /v2/provider/{ns}`): vendors → regions → computes,
 * each with its hourly price and the namespace quota, and the catalog of tested model recipes.
 * Defaults follow the published price table (reference §4.2, mid-2026 snapshot).
 * Must not know: HTTP, endpoints' states.
 */

export type ComputeStatus = "available" | "low_availability" | "not_available" | "reserved" | "deprecated";

export interface ComputeOption {
  readonly vendor: string;
  readonly region: string;
  /** Human name of the region (e.g. "N. Virginia"). */
  readonly regionLabel?: string;
  readonly accelerator: "cpu" | "gpu" | "neuron";
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly numAccelerators: number;
  readonly numCpus?: number;
  readonly memoryGb: number;
  /** Total over all accelerators; null on CPU hardware. */
  readonly gpuMemoryGb: number | null;
  readonly architecture: string;
  readonly status: ComputeStatus;
  /** USD per replica per hour. */
  readonly pricePerHour: number;
  /** The namespace's quota for this instance type, in accelerators. */
  readonly maxAccelerators: number;
}

/** A model the endpoint catalog knows, with the tested hardware recipe deploy uses. */
export interface CatalogItem {
  readonly repoId: string;
  readonly task: string;
  readonly accelerator: "cpu" | "gpu" | "neuron";
  readonly vendor: string;
  readonly region: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  /** The `model.image` the recipe deploys (default vLLM). */
  readonly image?: Readonly<Record<string, unknown>>;
}

const gpu = (
  region: string,
  regionLabel: string,
  instanceType: string,
  instanceSize: string,
  count: number,
  gpuMemoryGb: number,
  architecture: string,
  pricePerHour: number,
  status: ComputeStatus = "available",
): ComputeOption => ({
  vendor: "aws",
  region,
  regionLabel,
  accelerator: "gpu",
  instanceType,
  instanceSize,
  numAccelerators: count,
  numCpus: 8 * count,
  memoryGb: 32 * count,
  gpuMemoryGb: gpuMemoryGb * count,
  architecture,
  status,
  pricePerHour,
  maxAccelerators: status === "reserved" ? 0 : 8,
});

export const DEFAULT_HARDWARE: readonly ComputeOption[] = [
  {
    vendor: "aws",
    region: "us-east-1",
    regionLabel: "N. Virginia",
    accelerator: "cpu",
    instanceType: "intel-spr",
    instanceSize: "x1",
    numAccelerators: 1,
    memoryGb: 2,
    gpuMemoryGb: null,
    architecture: "Intel Sapphire Rapids",
    status: "available",
    pricePerHour: 0.033,
    maxAccelerators: 60,
  },
  gpu("us-east-1", "N. Virginia", "nvidia-t4", "x1", 1, 16, "Nvidia T4", 0.5),
  gpu("us-east-1", "N. Virginia", "nvidia-l4", "x1", 1, 24, "Nvidia L4", 0.8),
  gpu("us-east-1", "N. Virginia", "nvidia-l4", "x4", 4, 24, "Nvidia L4", 3.8),
  gpu("us-east-1", "N. Virginia", "nvidia-l40s", "x1", 1, 48, "Nvidia L40S", 1.8),
  gpu("us-east-1", "N. Virginia", "nvidia-a100", "x1", 1, 80, "Nvidia A100", 2.5),
  gpu("us-east-1", "N. Virginia", "nvidia-h200", "x1", 1, 141, "Nvidia H200", 5),
  gpu("us-east-1", "N. Virginia", "nvidia-h200", "x8", 8, 141, "Nvidia H200", 40, "reserved"),
  gpu("eu-west-1", "Ireland", "nvidia-l4", "x1", 1, 24, "Nvidia L4", 0.8),
];

export const DEFAULT_CATALOG: readonly CatalogItem[] = [
  {
    repoId: "Qwen/Qwen3-0.6B",
    task: "text-generation",
    accelerator: "gpu",
    vendor: "aws",
    region: "us-east-1",
    instanceType: "nvidia-l4",
    instanceSize: "x1",
  },
  {
    repoId: "meta-llama/Llama-3.2-1B-Instruct",
    task: "text-generation",
    accelerator: "gpu",
    vendor: "aws",
    region: "us-east-1",
    instanceType: "nvidia-l4",
    instanceSize: "x1",
  },
];

/** `aws-us-east-1-nvidia-l4-x1`: the hardware id the API reports. */
export function computeId(option: {
  vendor: string;
  region: string;
  instanceType: string;
  instanceSize: string;
}): string {
  return `${option.vendor}-${option.region}-${option.instanceType}-${option.instanceSize}`;
}

export function findCompute(
  hardware: readonly ComputeOption[],
  wanted: { vendor: string; region: string; instanceType: string; instanceSize: string },
): ComputeOption | undefined {
  return hardware.find(
    (option) =>
      option.vendor === wanted.vendor &&
      option.region === wanted.region &&
      option.instanceType === wanted.instanceType &&
      option.instanceSize === wanted.instanceSize,
  );
}
