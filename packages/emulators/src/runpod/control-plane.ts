/**
 * The emulated Runpod control plane, in process and without sockets: pods, their lifecycle under
 * the virtual clock, GPU capacity, and billing. Level-triggered: every read first replays the timed
 * transitions that fell due (`sync`), charging the meter span by span, so state and cost depend
 * only on the clock, never on when somebody looked. Operations return result unions carrying the
 * problem the HTTP layer sends.
 * Must not know: HTTP, TLS, rate limits, engines (it announces when a container stops serving).
 */

import { mulberry32 } from "../engine/prng.js";
import type { BillingMeter } from "./billing.js";
import {
  NOT_BILLED,
  RUNNING_DISK_MICRO_USD_PER_GB_MONTH,
  STOPPED_VOLUME_MICRO_USD_PER_GB_MONTH,
  HOURS_PER_MONTH,
  type BillingRates,
} from "./billing.js";
import type { GpuCatalog } from "./catalog.js";
import type { RunpodClock } from "./clock.js";
import { readCreateRequest } from "./create-request.js";
import {
  ALLOWED_ACTIONS,
  actionTarget,
  holdsGpu,
  type PodAction,
  type PodEvent,
  type PodStatus,
} from "./pod-lifecycle.js";
import type { PodRecord } from "./pod-record.js";
import { computeMicroUsdPerHr, renderPod, type PodWire } from "./pod-wire.js";
import {
  NO_FREE_GPUS_DETAIL,
  noCapacity,
  POD_NOT_FOUND,
  problem,
  type ErrorDialect,
  type Problem,
} from "./problem.js";
import { expandSecrets } from "./secrets.js";
import { readVllmSettings } from "./vllm-args.js";

export interface LifecycleTimings {
  /** PROVISIONING → STARTING: finding a host. */
  readonly provisionMs: number;
  /** STARTING → RUNNING: image pull and container start. */
  readonly imagePullMs: number;
  /** RUNNING → the vLLM server listens (weights download and load); the proxy answers 502 until then. */
  readonly modelLoadMs: number;
  /** A `restart` action: STARTING → RUNNING again. */
  readonly restartMs: number;
  /** Crash loop: how long the container stays RUNNING before it crashes, and how long it takes to restart. */
  readonly crashLoopUpMs: number;
  readonly crashLoopDownMs: number;
  /** A terminated pod stays visible (status TERMINATED) this long, then is gone (404, absent from lists). */
  readonly terminatedVisibleMs: number;
}

export interface ControlPlaneSettings {
  readonly timings: LifecycleTimings;
  /** The console's secret table: name → value. */
  readonly secrets: ReadonlyMap<string, string>;
  /** A referenced secret that does not exist: "error" (the pod ends in ERROR at start) or "empty". */
  readonly missingSecret: "error" | "empty";
  /** Served model name when a pod's args name none. */
  readonly defaultModel: string;
  /** Seed of the pod id sequence. */
  readonly seed: number;
  /** Error shapes spoken (v2 by default). */
  readonly errorDialect: ErrorDialect;
}

/** Switches for pods created from now on (fault injection). */
export interface NewPodFaults {
  crashLoop: boolean;
  extraStartMs: number;
}

export type Outcome<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: Problem };

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

export class RunpodControlPlane {
  readonly #settings: ControlPlaneSettings;
  readonly #clock: RunpodClock;
  readonly #catalog: GpuCatalog;
  readonly #meter: BillingMeter;
  readonly #pods = new Map<string, PodRecord>();
  readonly #random: () => number;
  readonly newPodFaults: NewPodFaults = { crashLoop: false, extraStartMs: 0 };
  /** Called when a pod's container stops serving (stop, crash, restart, terminate, exit). */
  onServingEnded: (podId: string) => void = () => undefined;

  constructor(settings: ControlPlaneSettings, clock: RunpodClock, catalog: GpuCatalog, meter: BillingMeter) {
    this.#settings = settings;
    this.#clock = clock;
    this.#catalog = catalog;
    this.#meter = meter;
    this.#random = mulberry32(settings.seed);
  }

  // ---- reads ----------------------------------------------------------------------------------

  list(): PodWire[] {
    const now = this.sync();
    return [...this.#pods.values()].map((pod) => renderPod(pod, now));
  }

  get(id: string): Outcome<PodWire> {
    const now = this.sync();
    const pod = this.#pods.get(id);
    return pod ? { ok: true, value: renderPod(pod, now) } : { ok: false, problem: POD_NOT_FOUND() };
  }

  /** The internal record (inspection and the proxy); undefined once purged. */
  record(id: string): PodRecord | undefined {
    this.sync();
    return this.#pods.get(id);
  }

  /** True when the pod's vLLM server accepts connections now. */
  isServing(pod: PodRecord): boolean {
    return (
      pod.status === "RUNNING" && pod.servingFromMs !== undefined && pod.servingFromMs <= this.#clock.now()
    );
  }

  // ---- writes ---------------------------------------------------------------------------------

  create(body: Record<string, unknown>): Outcome<PodWire> {
    const now = this.sync();
    const reading = readCreateRequest(body, this.#catalog);
    if (!reading.ok) return { ok: false, problem: problem(reading.status, reading.detail, reading.errors) };
    const { input } = reading;
    if (!this.#catalog.reserve(input.gpuType.id, input.gpuCount)) {
      return { ok: false, problem: noCapacity(this.#settings.errorDialect) };
    }
    const expanded = expandSecrets(input.env, this.#settings.secrets);
    const pod: PodRecord = {
      id: this.#newId(),
      spec: input,
      dataCenterId: input.dataCenterIds[0] ?? input.gpuType.dataCenterId,
      createdAtMs: now,
      status: "PROVISIONING",
      statusSinceMs: now,
      lastStatusChange: "Rented by user",
      due: { atMs: now + this.#settings.timings.provisionMs, event: "provisioned" },
      startedAtMs: undefined,
      servingFromMs: undefined,
      containerEpoch: 0,
      crashRestarts: 0,
      crashLoop: this.newPodFaults.crashLoop,
      extraStartMs: this.newPodFaults.extraStartMs,
      billedUntilMs: now,
      containerEnv: expanded.env,
      missingSecrets: expanded.missing,
      vllm: readVllmSettings(input.args, expanded.env, this.#settings.defaultModel),
    };
    this.#pods.set(pod.id, pod);
    return { ok: true, value: renderPod(pod, now) };
  }

  /** `POST /v2/pods/{id}/action`: the updated pod, or `undefined` after terminate (204). */
  act(id: string, action: PodAction): Outcome<PodWire | undefined> {
    const now = this.sync();
    const pod = this.#pods.get(id);
    if (!pod || pod.status === "TERMINATED") return { ok: false, problem: POD_NOT_FOUND() };
    if (!ALLOWED_ACTIONS[pod.status].includes(action)) {
      return {
        ok: false,
        problem: problem(409, `action '${action}' is not valid for a pod in status ${pod.status}`),
      };
    }
    const target = actionTarget(action);
    const timings = this.#settings.timings;
    switch (action) {
      case "start":
        if (!this.#catalog.reserve(pod.spec.gpuType.id, pod.spec.gpuCount)) {
          return { ok: false, problem: problem(500, NO_FREE_GPUS_DETAIL) };
        }
        this.#enter(pod, target, now, "Started by user", {
          atMs: now + timings.imagePullMs + pod.extraStartMs,
          event: "container-started",
        });
        break;
      case "restart":
        this.#enter(pod, target, now, "Restarted by user", {
          atMs: now + timings.restartMs,
          event: "container-started",
        });
        break;
      case "stop":
        this.#enter(pod, target, now, "Exited by user", undefined);
        break;
      case "terminate":
        this.#enter(pod, target, now, "Terminated by user", {
          atMs: now + timings.terminatedVisibleMs,
          event: "purged",
        });
        return { ok: true, value: undefined };
    }
    return { ok: true, value: renderPod(pod, now) };
  }

  /** `DELETE /v2/pods/{id}`: terminate from any status. */
  remove(id: string): Outcome<undefined> {
    const outcome = this.act(id, "terminate");
    return outcome.ok ? { ok: true, value: undefined } : outcome;
  }

  // ---- faults acting on one pod -----------------------------------------------------------------

  /** The pod exits without anybody asking (host trouble, out of funds): EXITED, volume still billed. */
  exitWithoutRequest(id: string): void {
    const now = this.sync();
    const pod = this.#required(id);
    if (!holdsGpu(pod.status)) throw new Error(`runpod emulator: pod ${id} is ${pod.status}, it cannot exit`);
    this.#enter(pod, "EXITED", now, "Exited by Runpod", undefined);
  }

  /** Makes the pod's container crash shortly after every start (on: at once if it is RUNNING). */
  setCrashLoop(id: string, on: boolean): void {
    const now = this.sync();
    const pod = this.#required(id);
    pod.crashLoop = on;
    if (on && pod.status === "RUNNING") pod.due = { atMs: now, event: "container-crashed" };
    if (!on && pod.due?.event === "container-crashed") pod.due = undefined;
    this.sync();
  }

  /** Replays every timed transition due by now and charges billing up to now; returns now. */
  sync(): number {
    const now = this.#clock.now();
    for (const pod of [...this.#pods.values()]) {
      while (pod.due && pod.due.atMs <= now) {
        const { atMs, event } = pod.due;
        this.#charge(pod, atMs);
        this.#fire(pod, event, atMs);
      }
      if (this.#pods.has(pod.id)) this.#charge(pod, now);
    }
    return now;
  }

  // ---- internals ------------------------------------------------------------------------------

  #required(id: string): PodRecord {
    const pod = this.#pods.get(id);
    if (!pod) throw new Error(`runpod emulator: no pod ${id}`);
    return pod;
  }

  #newId(): string {
    for (;;) {
      let id = "";
      for (let i = 0; i < 14; i++) id += ID_ALPHABET[Math.floor(this.#random() * ID_ALPHABET.length)];
      if (!this.#pods.has(id)) return id;
    }
  }

  #rates(pod: PodRecord): BillingRates {
    const volumeGb = pod.spec.mounts.persistent?.size ?? 0;
    if (holdsGpu(pod.status)) {
      return {
        computeMicroUsdPerMonth: computeMicroUsdPerHr(pod) * HOURS_PER_MONTH,
        storageMicroUsdPerMonth: (pod.spec.disk + volumeGb) * RUNNING_DISK_MICRO_USD_PER_GB_MONTH,
      };
    }
    if (pod.status === "EXITED" || pod.status === "ERROR") {
      return {
        computeMicroUsdPerMonth: 0,
        storageMicroUsdPerMonth: volumeGb * STOPPED_VOLUME_MICRO_USD_PER_GB_MONTH,
      };
    }
    return NOT_BILLED;
  }

  #charge(pod: PodRecord, toMs: number): void {
    if (toMs <= pod.billedUntilMs) return;
    this.#meter.accrue(pod.id, this.#rates(pod), pod.billedUntilMs, toMs);
    pod.billedUntilMs = toMs;
  }

  /** Moves a pod to a status, releasing its GPUs when it stops holding them. */
  #enter(pod: PodRecord, status: PodStatus, atMs: number, reason: string, due: PodRecord["due"]): void {
    const wasServing = pod.servingFromMs !== undefined;
    if (holdsGpu(pod.status) && !holdsGpu(status))
      this.#catalog.release(pod.spec.gpuType.id, pod.spec.gpuCount);
    pod.status = status;
    pod.statusSinceMs = atMs;
    pod.lastStatusChange = reason;
    pod.due = due;
    if (status !== "RUNNING") pod.servingFromMs = undefined;
    if (wasServing && pod.servingFromMs === undefined) this.onServingEnded(pod.id);
  }

  #fire(pod: PodRecord, event: PodEvent, atMs: number): void {
    const timings = this.#settings.timings;
    switch (event) {
      case "provisioned":
        this.#enter(pod, "STARTING", atMs, "Provisioned", {
          atMs: atMs + timings.imagePullMs + pod.extraStartMs,
          event: "container-started",
        });
        return;
      case "container-started": {
        if (pod.missingSecrets.length > 0 && this.#settings.missingSecret === "error") {
          this.#enter(pod, "ERROR", atMs, `secret not found: ${pod.missingSecrets.join(", ")}`, undefined);
          return;
        }
        const due = pod.crashLoop
          ? { atMs: atMs + timings.crashLoopUpMs, event: "container-crashed" as const }
          : undefined;
        this.#enter(pod, "RUNNING", atMs, "Container started", due);
        pod.startedAtMs = atMs;
        pod.containerEpoch += 1;
        pod.servingFromMs = pod.crashLoop ? undefined : atMs + timings.modelLoadMs;
        return;
      }
      case "container-crashed":
        pod.crashRestarts += 1;
        this.#enter(pod, "STARTING", atMs, "Container exited with an error; restarting", {
          atMs: atMs + timings.crashLoopDownMs,
          event: "container-started",
        });
        return;
      case "purged":
        pod.due = undefined;
        this.#pods.delete(pod.id);
        return;
    }
  }
}
