/**
 * One emulated pod as the control plane keeps it: the configuration it was created with (returned
 * as is by the API, env references unexpanded), its status and the next timed event, the
 * container's expanded environment (never rendered), and the fault switches acting on it.
 * Mutable; only the control plane changes it.
 * Must not know: HTTP, billing arithmetic, engines.
 */

import type { CreatePodInput } from "./create-request.js";
import type { PodEvent, PodStatus } from "./pod-lifecycle.js";
import type { VllmSettings } from "./vllm-args.js";

export interface PodRecord {
  readonly id: string;
  readonly spec: CreatePodInput;
  readonly dataCenterId: string;
  readonly createdAtMs: number;
  status: PodStatus;
  statusSinceMs: number;
  /** Why the status last changed, e.g. "Exited by user", "Exited by Runpod" (emulator-only detail). */
  lastStatusChange: string;
  /** The next timed transition, if any. */
  due: { readonly atMs: number; readonly event: PodEvent } | undefined;
  /** When the container last started (RUNNING entered), for `startedAt` and `runtime.uptime`. */
  startedAtMs: number | undefined;
  /** From when the vLLM server listens; undefined while it does not (loading done later, crash loop, stopped). */
  servingFromMs: number | undefined;
  /** Increments each time the container starts: a proxy's engine belongs to one incarnation. */
  containerEpoch: number;
  /** Times the container restarted on its own (crash loop). */
  crashRestarts: number;
  crashLoop: boolean;
  /** Extra image-pull/boot time for this pod (the slow-start fault). */
  extraStartMs: number;
  /** Billing has been charged up to here. */
  billedUntilMs: number;
  /** The container's environment with secret references expanded. */
  readonly containerEnv: Readonly<Record<string, string>>;
  readonly missingSecrets: readonly string[];
  readonly vllm: VllmSettings;
}
