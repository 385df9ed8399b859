/**
 * The emulated Jobs of every namespace and their lifecycle on the emulator's virtual clock:
 * SCHEDULING for `schedulingMs` (+ the slow-scheduling fault), then RUNNING; the exposed port
 * answers `loadMs` later (vLLM loading the model) unless a job-error fault makes it ERROR with a
 * message; `timeoutSeconds` after it started RUNNING it is stopped with ERROR "Job timed out after N
 * seconds" ([?]: the real stage on timeout is undocumented). Cancel ends it (at once, or after the
 * slow-state-change delay). The meter is fed at the exact instants stages change; `settle()`
 * applies everything due up to "now" in time order. Log lines are recorded and pushed to listeners.
 * Must not know: HTTP, wire shapes, tokens (callers pass who acts).
 */

import type { EngineHandler } from "../engine/handler.js";
import type { EmulatorTime } from "../huggingface/emulator-time.js";
import { EXPOSED_PORT_USD_PER_HOUR, findFlavor, type JobFlavor } from "./flavors.js";
import { JOB_TRANSITIONS, isBilledStage, isLiveStage, type JobStage } from "./job-stages.js";
import { readJobSpec, type JobSpec } from "./job-spec.js";
import type { JobsFaults } from "./jobs-faults.js";
import type { JobsMeter } from "./jobs-meter.js";

export interface JobTimings {
  /** SCHEDULING → RUNNING. */
  readonly schedulingMs: number;
  /** RUNNING → the exposed port answers (model load). */
  readonly loadMs: number;
}

export interface LogLine {
  readonly data: string;
  readonly timestamp: string;
}

export interface JobRecord {
  readonly id: string;
  readonly namespace: string;
  readonly createdBy: string;
  readonly spec: JobSpec;
  labels: Record<string, string>;
  readonly flavor: JobFlavor;
  readonly createdAtMs: number;
  stage: JobStage;
  message: string | null;
  startedAtMs: number | undefined;
  finishedAtMs: number | undefined;
  /** Whether the exposed port answers (RUNNING and loaded). */
  portUp: boolean;
  readonly scheduleEndMs: number;
  cancelAtMs: number | undefined;
  cancelBy: string | undefined;
  failure: string | undefined;
  readonly logs: LogLine[];
  readonly engine: EngineHandler;
}

export type JobResult =
  | { readonly ok: true; readonly record: JobRecord }
  | { readonly ok: false; readonly status: number; readonly message: string };

export interface JobsWorldOptions {
  readonly time: EmulatorTime;
  readonly timings: JobTimings;
  readonly flavors: readonly JobFlavor[];
  readonly faults: JobsFaults;
  readonly meter: JobsMeter;
  readonly makeEngine: (model: string) => EngineHandler;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The model a `vllm serve MODEL …` command serves (also `python -m vllm… --model MODEL`). */
export function servedModel(command: readonly string[]): string {
  const serve = command.indexOf("serve");
  const flag = command.indexOf("--model");
  const named = command.indexOf("--served-model-name");
  if (named >= 0 && command[named + 1] !== undefined) return command[named + 1] ?? "model";
  if (serve >= 0 && command[serve + 1] !== undefined && !command[serve + 1]?.startsWith("-"))
    return command[serve + 1] ?? "model";
  if (flag >= 0 && command[flag + 1] !== undefined) return command[flag + 1] ?? "model";
  return "model";
}

export class JobsWorld {
  readonly #o: JobsWorldOptions;
  readonly #jobs: JobRecord[] = [];
  readonly #logListeners = new Set<(record: JobRecord, line: LogLine | undefined) => void>();
  #serial = 0;

  constructor(options: JobsWorldOptions) {
    this.#o = options;
  }

  /** Listener gets each new log line, and `undefined` when a job stops being live. */
  onLog(listener: (record: JobRecord, line: LogLine | undefined) => void): () => void {
    this.#logListeners.add(listener);
    return () => this.#logListeners.delete(listener);
  }

  all(): readonly JobRecord[] {
    return this.#jobs;
  }

  list(namespace: string): JobRecord[] {
    this.settle();
    return this.#jobs.filter((job) => job.namespace === namespace);
  }

  get(namespace: string, id: string): JobRecord | undefined {
    this.settle();
    return this.#jobs.find((job) => job.namespace === namespace && job.id === id);
  }

  byId(id: string): JobRecord | undefined {
    this.settle();
    return this.#jobs.find((job) => job.id === id);
  }

  create(namespace: string, body: unknown, by: string): JobResult {
    this.settle();
    const parsed = readJobSpec(body);
    if (!parsed.ok) return { ok: false, status: 400, message: parsed.message };
    const spec = parsed.value;
    const flavor = findFlavor(this.#o.flavors, spec.flavor);
    if (!flavor)
      return {
        ok: false,
        status: 400,
        message: `Invalid flavor '${spec.flavor}'; see GET /api/jobs/hardware for the flavors offered`,
      };
    if (flavor.available === false)
      return {
        ok: false,
        status: 400,
        message: `Flavor '${flavor.name}' has no capacity available right now; try another flavor or later`,
      };
    const now = this.#o.time.nowMs();
    this.#serial += 1;
    const id =
      Math.floor(now / 1000)
        .toString(16)
        .padStart(8, "0")
        .slice(-8) + this.#serial.toString(16).padStart(16, "0");
    const record: JobRecord = {
      id,
      namespace,
      createdBy: by,
      spec,
      labels: { ...spec.labels },
      flavor,
      createdAtMs: now,
      stage: "SCHEDULING",
      message: null,
      startedAtMs: undefined,
      finishedAtMs: undefined,
      portUp: false,
      scheduleEndMs: now + this.#o.timings.schedulingMs + this.#o.faults.extraSchedulingMs,
      cancelAtMs: undefined,
      cancelBy: undefined,
      failure: undefined,
      logs: [],
      engine: this.#o.makeEngine(servedModel([...spec.command, ...spec.arguments])),
    };
    this.#jobs.push(record);
    return { ok: true, record };
  }

  cancel(namespace: string, id: string, by: string): JobResult {
    const record = this.get(namespace, id);
    if (!record)
      return { ok: false, status: 404, message: `Job '${id}' not found in namespace '${namespace}'` };
    if (!isLiveStage(record.stage)) return { ok: true, record };
    const now = this.#o.time.nowMs();
    record.cancelAtMs = Math.min(record.cancelAtMs ?? Infinity, now + this.#o.faults.slowMs);
    record.cancelBy = by;
    this.settle();
    return { ok: true, record };
  }

  setLabels(namespace: string, id: string, labels: Record<string, string>): JobResult {
    const record = this.get(namespace, id);
    if (!record)
      return { ok: false, status: 404, message: `Job '${id}' not found in namespace '${namespace}'` };
    record.labels = { ...labels };
    return { ok: true, record };
  }

  /** A job deleted outside the API (the web UI, HF staff): stage DELETED, billing ends. Test hook. */
  markDeleted(id: string): boolean {
    const record = this.byId(id);
    if (!record || record.stage === "DELETED") return false;
    this.#enter(record, "DELETED", this.#o.time.nowMs(), "Job was deleted");
    return true;
  }

  /** The container's environment: env, secrets (decrypted), and HF's own variables. Test hook. */
  containerEnv(id: string): Record<string, string> | undefined {
    const record = this.#jobs.find((job) => job.id === id);
    if (!record) return undefined;
    return {
      ...record.spec.environment,
      ...record.spec.secrets,
      JOB_ID: record.id,
      ACCELERATOR: record.flavor.gpu === null ? "none" : record.flavor.name,
      CPU_CORES: record.flavor.cpu.split(" ")[0] ?? "1",
      MEMORY: `${record.flavor.ram.split(" ")[0] ?? "1"}Gi`,
    };
  }

  /** Applies every transition due up to now, in time order. */
  settle(): void {
    const now = this.#o.time.nowMs();
    for (const record of this.#jobs) {
      for (let guard = 0; guard < 8 && isLiveStage(record.stage); guard++) {
        const next = this.#nextEvent(record);
        if (next === undefined || next.atMs > now) break;
        next.apply();
      }
    }
  }

  #nextEvent(record: JobRecord): { atMs: number; apply: () => void } | undefined {
    const events: { atMs: number; apply: () => void }[] = [];
    if (record.cancelAtMs !== undefined) {
      const at = record.cancelAtMs;
      events.push({
        atMs: at,
        apply: () => this.#enter(record, "CANCELED", at, `Canceled by ${record.cancelBy ?? "user"}`),
      });
    }
    if (record.stage === "SCHEDULING") {
      const at = record.scheduleEndMs;
      events.push({ atMs: at, apply: () => this.#start(record, at) });
    }
    if (record.stage === "RUNNING" && record.startedAtMs !== undefined) {
      const started = record.startedAtMs;
      if (!record.portUp) {
        const at = started + this.#o.timings.loadMs;
        events.push({ atMs: at, apply: () => this.#loaded(record, at) });
      }
      const timeoutAt = started + record.spec.timeoutSeconds * 1000;
      events.push({
        atMs: timeoutAt,
        apply: () =>
          this.#enter(
            record,
            "ERROR",
            timeoutAt,
            `Job timed out after ${record.spec.timeoutSeconds} seconds`,
          ),
      });
    }
    // Earliest first; on a tie, the order above (cancel wins).
    return events.reduce<{ atMs: number; apply: () => void } | undefined>(
      (best, event) => (best === undefined || event.atMs < best.atMs ? event : best),
      undefined,
    );
  }

  #start(record: JobRecord, atMs: number): void {
    record.failure = this.#o.faults.takeDeployFailure();
    record.startedAtMs = atMs;
    this.#enter(record, "RUNNING", atMs, null);
    this.#log(record, atMs, `===== Job started at ${iso(atMs)} =====`);
    this.#log(record, atMs, `$ ${[...record.spec.command, ...record.spec.arguments].join(" ")}`);
  }

  #loaded(record: JobRecord, atMs: number): void {
    if (record.failure !== undefined) {
      this.#log(record, atMs, `ERROR: ${record.failure}`);
      this.#enter(record, "ERROR", atMs, record.failure);
      return;
    }
    record.portUp = true;
    this.#log(record, atMs, "INFO:     Application startup complete.");
  }

  #enter(record: JobRecord, stage: JobStage, atMs: number, message: string | null): void {
    if (!JOB_TRANSITIONS[record.stage].includes(stage))
      throw new Error(`jobs emulator: illegal stage change ${record.stage} → ${stage} for job ${record.id}`);
    const wasBilled = isBilledStage(record.stage);
    record.stage = stage;
    record.message = message;
    if (wasBilled && !isBilledStage(stage)) this.#o.meter.close(record.id, atMs);
    if (!wasBilled && isBilledStage(stage))
      this.#o.meter.open(
        record.namespace,
        record.id,
        atMs,
        record.flavor.pricePerHour,
        record.spec.exposePorts.length > 0 ? EXPOSED_PORT_USD_PER_HOUR : 0,
      );
    if (!isLiveStage(stage)) {
      record.portUp = false;
      record.finishedAtMs ??= atMs;
      record.cancelAtMs = undefined;
      if (message !== null) this.#log(record, atMs, message);
      record.engine.close();
      for (const listener of this.#logListeners) listener(record, undefined);
    }
  }

  #log(record: JobRecord, atMs: number, data: string): void {
    const line = { data, timestamp: iso(atMs) };
    record.logs.push(line);
    for (const listener of this.#logListeners) listener(record, line);
  }
}
