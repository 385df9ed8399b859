/**
 * The Runpod crash tests' world: the sponsor as a real `pair serve` child process (sponsor-process.ts)
 * with one managed Runpod node (`gpu-rp`, a `pod:` section: PAIR creates the pod on demand) against
 * the Runpod emulator running in the test process over HTTPS. The child reaches the emulator's pods
 * through `providers.runpod.proxy_url` (the emulator serves them at `/proxy/{pod_id}-{port}`); the
 * Runpod API key and the vLLM key are in the real OS credential store. The emulator's clock is the
 * child's virtual wall time (SCALE times real time from the same origin), so a pod's minutes bill in
 * seconds while the child keeps its default pass interval (10 s real) and poll (1 s real).
 * Must not know: what a test asserts.
 */

import { randomBytes } from "node:crypto";
import { startRunpodEmulator, type RunpodEmulator, type RunpodEmulatorOptions } from "@pair/emulators";
import type { TestCa } from "@pair/testkit";
import { NODE, podLines } from "../rented/runpod-harness.js";
import { SCALE, sponsorProcess, type SponsorProcess } from "./sponsor-process.js";

export { NODE, SERVED } from "../rented/runpod-harness.js";

/** The pod's start (virtual): provision 5 s + image 20 s + model 40 s = 65 s, 3.25 s real. */
export const POD_TIMINGS = { provisionMs: 5_000, imagePullMs: 20_000, modelLoadMs: 40_000 } as const;

export interface RunpodSponsorChild extends SponsorProcess {
  readonly emu: RunpodEmulator;
  /** Create requests (`POST /v2/pods`) the emulator received, whatever became of them. */
  createsReceived(): number;
  /** Pods not TERMINATED. */
  livePods(): ReturnType<RunpodEmulator["pods"]["list"]>;
  /** What the emulator billed for every pod so far, micro-USD. */
  meterMicroUsd(): number;
}

export async function runpodSponsorChild(
  ca: TestCa,
  options: {
    /** The `lifecycle:` flow mapping of the node. */
    readonly lifecycle?: string;
    /** The pod's `idle_timeout_min` (default 1: 3 s real). */
    readonly idleMin?: number;
    readonly emulator?: Partial<RunpodEmulatorOptions>;
  } = {},
): Promise<RunpodSponsorChild> {
  const apiKey = `rp_test_${randomBytes(12).toString("hex")}`;
  const vllmKey = `sk-vllm-${randomBytes(12).toString("hex")}`;
  const leaf = await ca.issue();
  const originMs = Date.now();
  const emu = await startRunpodEmulator({
    apiKey,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    secrets: { vllm_key: vllmKey },
    // The same virtual time as the child's scaled-clock preload.
    now: () => Math.round(originMs + (Date.now() - originMs) * SCALE),
    timings: POD_TIMINGS,
    ...options.emulator,
  });
  const child = await sponsorProcess(ca, {
    node: NODE,
    secrets: { runpod: apiKey, vllm: vllmKey },
    originMs,
    configLines: (refs) => [
      "rented_nodes:",
      `  - name: ${NODE}`,
      "    provider: runpod",
      `    credential: ${refs["runpod"]}`,
      `    vllm_api_key: ${refs["vllm"]}`,
      "    timeouts: { cold_start_s: 60 }",
      `    lifecycle: ${options.lifecycle ?? "{ exit_timeout_s: 30 }"}`,
      "    budget: { unlimited: true }",
      "    pod:",
      ...podLines(options.idleMin ?? 1),
      "providers:",
      "  runpod:",
      `    api: ${emu.apiBaseUrl}`,
      `    proxy_url: "${emu.apiBaseUrl}/proxy/{pod_id}-{port}"`,
    ],
    nowMs: () => emu.clock.now(),
    close: () => emu.close(),
  });
  return Object.assign(child, {
    emu,
    createsReceived: () => emu.requests().filter((r) => r.method === "POST" && r.path === "/v2/pods").length,
    livePods: () => emu.pods.list().filter((p) => p.wire.status !== "TERMINATED"),
    meterMicroUsd: () => emu.meter.grandTotalMicroUsd(),
  });
}
