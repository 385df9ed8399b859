/**
 * What a Runpod pod node costs before any pod is placed, from the v2 GPU catalogue: the MOST
 * expensive of its `gpu_types` at its `cloud_type` (capacity fallback may place any of them), times
 * `gpu_count`, plus its container disk and volume while running. Cautious on purpose: the ledger
 * authorizes the first pod at this price; the placed pod's own `cost` replaces it once known. A GPU
 * type the catalogue does not price makes the whole estimate unknown (never a lower guess).
 * Must not know: HTTP, the ledger, the controller.
 */

import type { GpuCatalogEntry } from "@pair/runpod";
import type { RunpodPodNode } from "../config/index.js";

/** Disk and volume while a pod runs: $0.10 per GB-month (runpod-api.md §4), a month being 720 h. */
export const STORAGE_MICRO_USD_PER_GB_HOUR = 100_000 / 720;
const USD = 1_000_000;

type PodSizing = Pick<
  RunpodPodNode["pod"],
  "gpuTypes" | "gpuCount" | "cloudType" | "containerDiskGb" | "volumeGb"
>;

/** Container disk plus volume of one pod, micro-USD per hour. */
export function storageMicroUsdPerHour(pod: Pick<PodSizing, "containerDiskGb" | "volumeGb">): number {
  return (pod.containerDiskGb + pod.volumeGb) * STORAGE_MICRO_USD_PER_GB_HOUR;
}

export type CatalogPrice =
  | { readonly ok: true; readonly microUsdPerHour: number; readonly gpuType: string }
  | { readonly ok: false; readonly reason: string };

export function podPriceFromCatalog(entries: readonly GpuCatalogEntry[], pod: PodSizing): CatalogPrice {
  const cloud = pod.cloudType === "COMMUNITY" ? "community" : "secure";
  let top: { usd: number; gpuType: string } | undefined;
  for (const gpuType of pod.gpuTypes) {
    const usd = entries.find((e) => e.id === gpuType)?.price[cloud];
    if (usd === undefined)
      return { ok: false, reason: `the GPU catalogue has no ${cloud} price for "${gpuType}"` };
    if (top === undefined || usd > top.usd) top = { usd, gpuType };
  }
  if (top === undefined) return { ok: false, reason: "no gpu_types to price" };
  return {
    ok: true,
    microUsdPerHour: Math.round(top.usd * pod.gpuCount * USD + storageMicroUsdPerHour(pod)),
    gpuType: top.gpuType,
  };
}
