/**
 * The emulated Hugging Face account world: endpoints by namespace and name, their lifecycle on the
 * emulator's virtual clock (scheduled transitions, idle scale-to-zero, wake on request, slow state
 * changes), quota, and the billing meter fed at the exact instants states change. `settle()`
 * applies everything due up to "now", in time order; every request and `advance()` calls it.
 * Must not know: HTTP, wire shapes, tokens (callers pass who acts).
 */

import type { EngineHandler } from "../engine/handler.js";
import { mulberry32 } from "../engine/prng.js";
import type { BillingMeter } from "./billing-meter.js";
import type { ControlFaults } from "./control-faults.js";
import type { EmulatorTime } from "./emulator-time.js";
import { changesDeployment, mergeUpdate, readConfig, type EndpointConfig } from "./endpoint-config.js";
import {
  TRANSITIONS,
  countsAgainstQuota,
  defaultMessage,
  isBilled,
  type EndpointState,
} from "./endpoint-states.js";
import { findCompute, type ComputeOption } from "./hardware.js";

const MINUTE_MS = 60_000;

export interface LifecycleTimings {
  /** pending → initializing. */
  readonly pendingMs: number;
  /** initializing → running after a create, resume or update of a failed endpoint. */
  readonly initializingMs: number;
  /** scaledToZero → running after a request (or resume) wakes it. */
  readonly scaleUpMs: number;
  /** updating → running. */
  readonly updatingMs: number;
}

export interface EndpointRecord {
  readonly namespace: string;
  /**
   * Incarnation: the creation instant, ISO-8601 UTC at ms precision; every create gets a later
   * millisecond than the one before (a paused virtual clock would otherwise give a recreate the same).
   */
  readonly createdAt: string;
  /** The six digits below the millisecond, written only when an answer spells ns precision. */
  readonly createdAtSubMs: string;
  /** The random host-like label of `status.url`; new for every incarnation. */
  readonly label: string;
  readonly createdBy: string;
  config: EndpointConfig;
  state: EndpointState;
  message: string;
  /** Bumped on every state change; a scheduled transition for an older value is dropped. */
  stateSeq: number;
  stateSinceMs: number;
  updatedAtMs: number;
  updatedBy: string;
  /** Last data-plane request start or end (idle scale-to-zero counts from here). */
  lastActivityMs: number;
  /** Data-plane requests being served now (an open stream keeps the endpoint busy). */
  inFlight: number;
  engine: EngineHandler;
  deleted: boolean;
}

export type OpResult =
  | { readonly ok: true; readonly record: EndpointRecord }
  | { readonly ok: false; readonly status: number; readonly message: string };

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly record: EndpointRecord;
  /** Dropped unless the record is still in this state generation (undefined: always runs). */
  readonly expectSeq: number | undefined;
  readonly run: (at: number) => void;
}

export interface WorldDeps {
  readonly time: EmulatorTime;
  readonly timings: LifecycleTimings;
  readonly hardware: readonly ComputeOption[];
  readonly faults: ControlFaults;
  readonly meter: BillingMeter;
  readonly seed: number;
  readonly makeEngine: (repository: string) => EngineHandler;
}

const fail = (status: number, message: string): OpResult => ({ ok: false, status, message });

export class HuggingFaceWorld {
  readonly #deps: WorldDeps;
  readonly #records = new Map<string, EndpointRecord>();
  #queue: Scheduled[] = [];
  #seq = 0;
  #created = 0;
  #lastCreatedMs = Number.NEGATIVE_INFINITY;
  readonly #random: () => number;
  readonly #spellingRandom: () => number;
  readonly #listeners: (() => void)[] = [];

  constructor(deps: WorldDeps) {
    this.#deps = deps;
    this.#random = mulberry32(deps.seed);
    // Its own stream, so varying time spellings leaves the labels of a seed unchanged.
    this.#spellingRandom = mulberry32(deps.seed ^ 0x5eed7113);
  }

  /** Called after every settle (the data plane re-checks held requests). */
  onSettle(listener: () => void): void {
    this.#listeners.push(listener);
  }

  list(namespace: string): EndpointRecord[] {
    this.settle();
    return [...this.#records.values()].filter((record) => record.namespace === namespace);
  }

  all(): EndpointRecord[] {
    this.settle();
    return [...this.#records.values()];
  }

  get(namespace: string, name: string): EndpointRecord | undefined {
    this.settle();
    return this.#records.get(`${namespace}/${name}`);
  }

  byLabel(label: string): EndpointRecord | undefined {
    this.settle();
    return [...this.#records.values()].find((record) => record.label === label);
  }

  computeOf(config: EndpointConfig): ComputeOption | undefined {
    return findCompute(this.#deps.hardware, config);
  }

  /** Accelerators of `instanceType` (at `vendor`) the namespace's endpoints hold now. */
  quotaUsed(namespace: string, vendor: string, instanceType: string): number {
    let used = 0;
    for (const record of this.#records.values()) {
      const { config } = record;
      if (record.namespace !== namespace || !countsAgainstQuota(record.state)) continue;
      if (config.vendor !== vendor || config.instanceType !== instanceType) continue;
      used += (this.computeOf(config)?.numAccelerators ?? 0) * Math.max(1, config.minReplica);
    }
    return used;
  }

  #quotaProblem(namespace: string, config: EndpointConfig, option: ComputeOption): string | undefined {
    const used = this.quotaUsed(namespace, config.vendor, config.instanceType);
    const needed = option.numAccelerators * Math.max(1, config.minReplica);
    if (used + needed <= option.maxAccelerators) return undefined;
    return `Quota exceeded for ${config.instanceType} in namespace '${namespace}': ${used} of ${option.maxAccelerators} accelerators in use, ${needed} requested. Pause or delete an endpoint, or request a quota increase.`;
  }

  create(namespace: string, body: unknown, by: string): OpResult {
    this.settle();
    const read = readConfig(body);
    if (!read.ok) return fail(400, read.message);
    const { config } = read;
    const option = this.computeOf(config);
    if (!option)
      return fail(
        400,
        `Compute ${config.vendor}/${config.region}/${config.instanceType}/${config.instanceSize} is not offered; see GET /v2/provider/${namespace}`,
      );
    if (option.status === "not_available" || option.status === "deprecated")
      return fail(400, `Compute ${option.instanceType} ${option.instanceSize} is ${option.status}`);
    if (config.accelerator !== option.accelerator)
      return fail(400, `compute.accelerator: ${option.instanceType} is a ${option.accelerator} instance`);
    if (this.#records.has(`${namespace}/${config.name}`))
      return fail(409, `An endpoint named '${config.name}' already exists in namespace '${namespace}'`);
    const quota = this.#quotaProblem(namespace, config, option);
    if (quota) return fail(400, quota);
    const now = this.#deps.time.nowMs();
    const createdMs = Math.max(now, this.#lastCreatedMs + 1);
    this.#lastCreatedMs = createdMs;
    this.#created += 1;
    const record: EndpointRecord = {
      namespace,
      createdAt: new Date(createdMs).toISOString(),
      createdAtSubMs: String((this.#created * 7919) % 1_000_000).padStart(6, "0"),
      label: this.#label(),
      createdBy: by,
      config,
      state: "pending",
      message: defaultMessage("pending"),
      stateSeq: 0,
      stateSinceMs: now,
      updatedAtMs: now,
      updatedBy: by,
      lastActivityMs: now,
      inFlight: 0,
      engine: this.#deps.makeEngine(config.repository),
      deleted: false,
    };
    this.#records.set(`${namespace}/${config.name}`, record);
    this.#afterEntering(record, now);
    return { ok: true, record };
  }

  update(namespace: string, name: string, patch: unknown, by: string): OpResult {
    const record = this.get(namespace, name);
    if (!record) return this.#notFound(namespace, name);
    if (typeof patch !== "object" || patch === null || Array.isArray(patch))
      return fail(400, "body: expected a JSON object");
    const merged = mergeUpdate(record.config.json, {
      ...(patch as Record<string, unknown>),
      name: record.config.name,
    });
    const read = readConfig(merged);
    if (!read.ok) return fail(400, read.message);
    const option = this.computeOf(read.config);
    if (!option)
      return fail(400, `Compute ${read.config.instanceType} ${read.config.instanceSize} is not offered`);
    return this.#maybeSlow(record, by, () => this.#applyUpdate(record, read.config, by));
  }

  pause(namespace: string, name: string, by: string): OpResult {
    const record = this.get(namespace, name);
    if (!record) return this.#notFound(namespace, name);
    return this.#maybeSlow(record, by, () => {
      if (record.state !== "paused") this.#transition(record, "paused", this.#deps.time.nowMs());
    });
  }

  resume(namespace: string, name: string, by: string): OpResult {
    const record = this.get(namespace, name);
    if (!record) return this.#notFound(namespace, name);
    const refusal = this.#resumeRefusal(record);
    if (refusal) return refusal;
    return this.#maybeSlow(record, by, () => {
      if (this.#resumeRefusal(record)) return;
      const now = this.#deps.time.nowMs();
      if (record.state === "paused") this.#transition(record, "pending", now);
      else if (record.state === "scaledToZero") this.#transition(record, "initializing", now);
    });
  }

  #resumeRefusal(record: EndpointRecord): OpResult | undefined {
    switch (record.state) {
      case "running":
        return fail(400, `Endpoint '${record.config.name}' is already running`);
      case "failed":
        return fail(
          400,
          `Endpoint '${record.config.name}' failed to deploy and cannot be resumed: update its configuration or create a new one`,
        );
      case "paused": {
        const option = this.computeOf(record.config);
        const quota = option ? this.#quotaProblem(record.namespace, record.config, option) : undefined;
        return quota ? fail(400, quota) : undefined;
      }
      default:
        return undefined;
    }
  }

  scaleToZero(namespace: string, name: string, by: string): OpResult {
    const record = this.get(namespace, name);
    if (!record) return this.#notFound(namespace, name);
    const refusal = this.#scaleToZeroRefusal(record);
    if (refusal) return refusal;
    return this.#maybeSlow(record, by, () => {
      if (this.#scaleToZeroRefusal(record) || record.state === "scaledToZero") return;
      this.#transition(record, "scaledToZero", this.#deps.time.nowMs());
    });
  }

  #scaleToZeroRefusal(record: EndpointRecord): OpResult | undefined {
    switch (record.state) {
      case "running":
      case "updating":
      case "initializing":
      case "scaledToZero":
        return undefined;
      case "paused":
        return fail(400, `Endpoint '${record.config.name}' is paused: resume it first`);
      case "pending":
      case "failed":
      case "updateFailed":
        return fail(
          400,
          `Endpoint '${record.config.name}' is ${record.state}: only a running endpoint can be scaled to zero`,
        );
    }
  }

  delete(namespace: string, name: string, by: string): OpResult {
    const record = this.get(namespace, name);
    if (!record) return this.#notFound(namespace, name);
    return this.#maybeSlow(record, by, () => {
      if (record.deleted) return;
      const now = this.#deps.time.nowMs();
      if (isBilled(record.state)) this.#deps.meter.close(this.#meterKey(record), now);
      record.deleted = true;
      record.engine.close();
      this.#records.delete(`${record.namespace}/${record.config.name}`);
    });
  }

  /** A data-plane request reached a scaled-to-zero endpoint: a replica starts. */
  wake(record: EndpointRecord): void {
    if (record.state === "scaledToZero" && !record.deleted)
      this.#transition(record, "initializing", this.#deps.time.nowMs(), "Endpoint is scaling up");
  }

  /** A data-plane request started (+1) or ended (-1) on the endpoint. */
  noteRequest(record: EndpointRecord, delta: 1 | -1): void {
    this.settle();
    record.inFlight = Math.max(0, record.inFlight + delta);
    record.lastActivityMs = this.#deps.time.nowMs();
  }

  /** Applies everything due up to now, earliest first, then tells the listeners. */
  settle(): void {
    for (let step = 0; step < 100_000; step++) {
      const now = this.#deps.time.nowMs();
      const next = this.#nextDue(now);
      if (!next) break;
      next();
    }
    for (const listener of this.#listeners) listener();
  }

  #nextDue(now: number): (() => void) | undefined {
    let best: { at: number; fire: () => void } | undefined;
    const head = this.#queue[0];
    if (head && head.at <= now) {
      best = {
        at: head.at,
        fire: () => {
          this.#queue.shift();
          if (head.record.deleted) return;
          if (head.expectSeq !== undefined && head.expectSeq !== head.record.stateSeq) return;
          head.run(head.at);
        },
      };
    }
    for (const record of this.#records.values()) {
      const due = this.#idleDue(record);
      if (due !== undefined && due <= now && (!best || due < best.at)) {
        best = {
          at: due,
          fire: () =>
            this.#transition(record, "scaledToZero", due, "Endpoint scaled to zero after being idle"),
        };
      }
    }
    return best?.fire;
  }

  #idleDue(record: EndpointRecord): number | undefined {
    const timeout = record.config.scaleToZeroTimeout;
    if (record.state !== "running" || timeout === undefined || record.inFlight > 0) return undefined;
    return Math.max(record.lastActivityMs, record.stateSinceMs) + Math.round(timeout * MINUTE_MS);
  }

  #schedule(record: EndpointRecord, at: number, guarded: boolean, run: (at: number) => void): void {
    const entry: Scheduled = {
      at,
      seq: ++this.#seq,
      record,
      expectSeq: guarded ? record.stateSeq : undefined,
      run,
    };
    this.#queue.push(entry);
    this.#queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
  }

  /** With the slow-state-changes fault, the change lands later; the answer shows the old state. */
  #maybeSlow(record: EndpointRecord, by: string, apply: () => void): OpResult {
    const delay = this.#deps.faults.slowMs;
    const stamp = (): void => {
      record.updatedBy = by;
    };
    if (delay === 0) {
      apply();
      stamp();
    } else {
      this.#schedule(record, this.#deps.time.nowMs() + delay, false, () => {
        apply();
        stamp();
      });
    }
    return { ok: true, record };
  }

  #applyUpdate(record: EndpointRecord, config: EndpointConfig, by: string): void {
    const now = this.#deps.time.nowMs();
    const before = record.config;
    record.config = config;
    record.updatedAtMs = now;
    record.updatedBy = by;
    if (before.repository !== config.repository) {
      record.engine.close();
      record.engine = this.#deps.makeEngine(config.repository);
    }
    if (isBilled(record.state)) {
      // The price or replica count may have changed: a new stretch at the new rate.
      this.#deps.meter.close(this.#meterKey(record), now);
      this.#deps.meter.open(this.#meterKey(record), now, this.#replicas(record), this.#price(record));
    }
    if (!changesDeployment(before, config)) return;
    if (record.state === "running" || record.state === "updateFailed")
      this.#transition(record, "updating", now);
    else if (record.state === "failed") this.#transition(record, "pending", now);
  }

  #transition(record: EndpointRecord, to: EndpointState, at: number, message?: string): void {
    const from = record.state;
    if (!TRANSITIONS[from].includes(to))
      throw new Error(`Hugging Face emulator bug: transition ${from} → ${to} is not in the table`);
    const key = this.#meterKey(record);
    if (isBilled(from) && !isBilled(to)) this.#deps.meter.close(key, at);
    if (!isBilled(from) && isBilled(to))
      this.#deps.meter.open(key, at, this.#replicas(record), this.#price(record));
    record.state = to;
    record.stateSeq += 1;
    record.stateSinceMs = at;
    record.updatedAtMs = at;
    record.message = message ?? defaultMessage(to);
    this.#afterEntering(record, at, from);
  }

  /** Schedules what follows entering a state. */
  #afterEntering(record: EndpointRecord, at: number, from?: EndpointState): void {
    const { timings } = this.#deps;
    switch (record.state) {
      case "pending":
        this.#schedule(record, at + timings.pendingMs, true, (t) =>
          this.#transition(record, "initializing", t),
        );
        return;
      case "initializing": {
        const duration = from === "scaledToZero" ? timings.scaleUpMs : timings.initializingMs;
        this.#schedule(record, at + duration, true, (t) => {
          const failure = this.#deps.faults.takeDeployFailure();
          if (failure !== undefined) this.#transition(record, "failed", t, failure);
          else this.#transition(record, "running", t);
        });
        return;
      }
      case "updating":
        this.#schedule(record, at + timings.updatingMs, true, (t) => {
          const failure = this.#deps.faults.takeDeployFailure();
          if (failure !== undefined) this.#transition(record, "updateFailed", t, failure);
          else this.#transition(record, "running", t);
        });
        return;
      case "running":
        record.lastActivityMs = at;
        return;
      case "updateFailed":
      case "paused":
      case "failed":
      case "scaledToZero":
        return;
    }
  }

  #meterKey(record: EndpointRecord): { namespace: string; name: string; createdAt: string } {
    return { namespace: record.namespace, name: record.config.name, createdAt: record.createdAt };
  }

  #replicas(record: EndpointRecord): number {
    return Math.max(1, record.config.minReplica);
  }

  #price(record: EndpointRecord): number {
    return this.computeOf(record.config)?.pricePerHour ?? 0;
  }

  #notFound(namespace: string, name: string): OpResult {
    return fail(404, `Endpoint '${name}' not found in namespace '${namespace}'`);
  }

  /**
   * Fraction digits for the times of the next answer: HF writes `status.createdAt` with nanoseconds
   * (reference §2.4, e.g. `2023-10-26T12:41:53.263078506Z`), while huggingface_hub's fixtures and
   * other HF APIs write milliseconds; a client must treat them as one instant. Seeded, so a run replays.
   */
  timeDigits(): 3 | 6 | 9 {
    const draw = this.#spellingRandom();
    return draw < 1 / 3 ? 3 : draw < 2 / 3 ? 6 : 9;
  }

  #label(): string {
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    let label = "";
    while (label.length < 16) label += alphabet[Math.floor(this.#random() * alphabet.length)] ?? "x";
    return label;
  }
}
