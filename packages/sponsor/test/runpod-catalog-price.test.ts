// The cautious pre-pod price of a Runpod pod node from the GPU catalogue: the most expensive of its
// GPU types at its cloud type × gpu_count + disk and volume; unknown (never lower) when a type is unpriced.
import type { GpuCatalogEntry } from "@pair/runpod";
import { describe, expect, it } from "vitest";
import { podPriceFromCatalog } from "../src/runpod/runpod-catalog-price.js";

const entry = (id: string, secure?: number, community?: number): GpuCatalogEntry => ({
  id,
  displayName: undefined,
  maxCount: 8,
  price: { secure, community },
});
const CATALOG = [entry("A4000", 0.25, 0.17), entry("L40S", 0.79, 0.6), entry("A40", 0.35)];
const pod = {
  gpuTypes: ["A4000", "L40S"],
  gpuCount: 2,
  cloudType: "SECURE" as const,
  containerDiskGb: 50,
  volumeGb: 22,
};

describe("podPriceFromCatalog", () => {
  it("takes the most expensive type at the cloud type, times gpu_count, plus storage", () => {
    expect(podPriceFromCatalog(CATALOG, pod)).toEqual({
      ok: true,
      microUsdPerHour: 2 * 790_000 + 10_000, // 72 GB × 0.10 $/GB-month / 720 h = 0.01 $/h
      gpuType: "L40S",
    });
    expect(podPriceFromCatalog(CATALOG, { ...pod, cloudType: "COMMUNITY", gpuCount: 1 })).toMatchObject({
      ok: true,
      microUsdPerHour: 600_000 + 10_000,
    });
  });

  it("is unknown when any of its types has no price at its cloud type, or is missing", () => {
    expect(podPriceFromCatalog(CATALOG, { ...pod, gpuTypes: ["A40"], cloudType: "COMMUNITY" })).toEqual({
      ok: false,
      reason: 'the GPU catalogue has no community price for "A40"',
    });
    expect(podPriceFromCatalog(CATALOG, { ...pod, gpuTypes: ["L40S", "H200"] })).toMatchObject({ ok: false });
  });
});
