/** An in-process Runpod control plane on a virtual clock, for tests that need no socket. */

import { BillingMeter } from "../../src/runpod/billing.js";
import { GpuCatalog, type GpuTypeConfig } from "../../src/runpod/catalog.js";
import { FIXED_START_MS, VirtualClock } from "../../src/runpod/clock.js";
import { RunpodControlPlane, type ControlPlaneSettings } from "../../src/runpod/control-plane.js";
import { DEFAULT_TIMINGS } from "../../src/runpod/options.js";
import type { PodWire } from "../../src/runpod/pod-wire.js";

export const L40S = "NVIDIA L40S";
export const A40 = "NVIDIA A40";

export function planeFixture(
  settings: Partial<ControlPlaneSettings> = {},
  gpuTypes: readonly GpuTypeConfig[] = [
    { id: L40S, securePriceUsdPerHr: 0.79, capacityGpus: 2 },
    { id: A40, securePriceUsdPerHr: 0.35, capacityGpus: 0 },
  ],
) {
  const clock = new VirtualClock(() => FIXED_START_MS);
  const catalog = new GpuCatalog(gpuTypes);
  const meter = new BillingMeter();
  const plane = new RunpodControlPlane(
    {
      timings: DEFAULT_TIMINGS,
      secrets: new Map([["vllm_key", "sk-from-secret"]]),
      missingSecret: "error",
      defaultModel: "m",
      seed: 1,
      errorDialect: "v2",
      ...settings,
    },
    clock,
    catalog,
    meter,
  );
  const advance = (ms: number): void => {
    clock.advance(ms);
    plane.sync();
  };
  const create = (body: Record<string, unknown> = {}): PodWire => {
    const outcome = plane.create({
      name: "pair-test",
      image: "vllm/vllm-openai:v0.11.0",
      gpu: { id: L40S },
      ...body,
    });
    if (!outcome.ok) throw new Error(`create failed: ${JSON.stringify(outcome.problem)}`);
    return outcome.value;
  };
  const status = (id: string): string => {
    const outcome = plane.get(id);
    return outcome.ok ? outcome.value.status : `absent (${outcome.problem.status})`;
  };
  return { clock, catalog, meter, plane, advance, create, status };
}
