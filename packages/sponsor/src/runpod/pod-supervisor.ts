/**
 * RunpodPodSupervisor: the Runpod-specific pod lifecycle on top of the hosting contract. It never
 * calls the provider to create or stop: it asks a HostingController, so every create has its intent
 * and obligation committed first, and every terminate is an obligation closed only by evidence.
 * - Single flight: one pod per cold model; concurrent `acquire` calls share one start.
 * - Readiness: `/v1/models` through the proxy with the vLLM key; a crash loop (more restarts than the
 *   limit inside the window), a refused key, ERROR/EXITED, or a missed startup deadline → terminate.
 * - Idle reaping: never below the measured cold-start time, never while a stream lease is held. Only
 *   a create this process sent is measured: after a restart, create → ready would include the time
 *   the sponsor was down.
 * - Orphans: `reconcileOnce` records pods with our owner tag that no record holds, then stops them;
 *   other owners' pods are never touched.
 * It owns no timer: the daemon calls `tick()` again after `requeueAfterMs`. State that matters is in
 * the store, so a new supervisor over a restarted controller adopts the pod it finds there.
 * Must not know: HTTP, the key's value (the probe holds it), the store's implementation.
 */

import type {
  Clock,
  ComputeAuthorization,
  DeploymentId,
  DeploymentRecord,
  DeploymentSpec,
  HostingController,
  ResourceKey,
  StopReason,
} from "@pair/provision";
import { liveRecords } from "@pair/provision";
import { readRunpodModel, type RunpodModel } from "@pair/runpod";
import type { RunpodProvider } from "@pair/runpod";
import type { ReadinessProbe } from "@pair/runpod";

export interface RunpodPodSupervisorOptions {
  readonly controller: HostingController;
  /** The same provider the controller drives; read for container restarts (`startedAt`). */
  readonly provider: Pick<RunpodProvider, "describePod">;
  readonly clock: Clock;
  readonly probe: ReadinessProbe;
  /** One spec per served model (`spec.model`), its RunpodModel in `spec.settings`. */
  readonly specs: readonly DeploymentSpec[];
  /** Permission to spend for one more pod of this model, from the spending ledger. */
  authorize(model: string): ComputeAuthorization | undefined;
}

export type ModelState = "cold" | "starting" | "ready" | "stopping";

export type AcquireResult =
  | { readonly kind: "ready"; readonly key: ResourceKey; readonly address: string }
  | { readonly kind: "failed"; readonly reason: string };

export interface StreamLease {
  release(): void;
}

export interface TerminateDecision {
  readonly id: DeploymentId;
  readonly model: string;
  readonly reason: StopReason;
  readonly why: string;
}

export interface TickReport {
  readonly requeueAfterMs: number;
  readonly terminated: readonly TerminateDecision[];
  readonly readied: readonly string[];
}

/** What this process knows about one pod beyond the store (lost on restart, rebuilt by ticks). */
interface PodWatch {
  readyAtMs?: number;
  address?: string;
  lastUsedMs: number;
  streams: number;
  /** Container starts seen (`startedAt`) and when each was first seen. */
  starts: Map<string, number>;
}

interface Waiter {
  resolve(result: AcquireResult): void;
}

export class RunpodPodSupervisor {
  readonly #o: RunpodPodSupervisorOptions;
  readonly #models = new Map<string, { spec: DeploymentSpec; model: RunpodModel }>();
  readonly #waiters = new Map<string, Waiter[]>();
  /** Models whose declare + create is in flight, and that work. */
  readonly #creating = new Map<string, Promise<void>>();
  readonly #watches = new Map<DeploymentId, PodWatch>();
  /** Measured cold start per model: create intent → first ready probe. */
  readonly #coldStartMs = new Map<string, number>();
  /** Wall time this supervisor (this process) began: creates sent before it are not measured. */
  readonly #startedAtMs: number;

  constructor(options: RunpodPodSupervisorOptions) {
    this.#o = options;
    this.#startedAtMs = this.#now();
    for (const spec of options.specs) {
      const model = readRunpodModel(spec);
      if (!model.ok) throw new RangeError(`RunpodPodSupervisor: ${model.error}`);
      if (this.#models.has(spec.model))
        throw new RangeError(`RunpodPodSupervisor: model ${spec.model} is declared twice`);
      this.#models.set(spec.model, { spec, model: model.value });
    }
  }

  /** What the Jobs list shows for a model. */
  state(model: string): ModelState {
    if (this.#creating.has(model)) return "starting";
    const record = this.#current(model);
    if (record === undefined)
      return liveRecords(this.#o.controller.state).some((d) => d.spec?.model === model) ? "stopping" : "cold";
    return this.#watches.get(record.id)?.readyAtMs === undefined ? "starting" : "ready";
  }

  /** The measured cold-start time of a model, once one pod of it became ready in this process. */
  coldStartMs(model: string): number | undefined {
    return this.#coldStartMs.get(model);
  }

  /**
   * A serving pod for the model. The first caller of a cold model starts one; every caller waits on
   * the same start (resolved by `tick()`), never a second create.
   */
  acquire(model: string): Promise<AcquireResult> {
    const plan = this.#models.get(model);
    if (plan === undefined) return Promise.resolve({ kind: "failed", reason: `no Runpod model ${model}` });
    const record = this.#current(model);
    const watch = record === undefined ? undefined : this.#watches.get(record.id);
    if (record?.key !== undefined && watch?.readyAtMs !== undefined && watch.address !== undefined) {
      watch.lastUsedMs = this.#now();
      return Promise.resolve({ kind: "ready", key: record.key, address: watch.address });
    }
    const waiting = new Promise<AcquireResult>((resolve) => {
      const list = this.#waiters.get(model) ?? [];
      list.push({ resolve });
      this.#waiters.set(model, list);
    });
    if (record === undefined && !this.#creating.has(model)) {
      // Registered before the first await: a concurrent caller sees the start and only waits.
      const start = this.#start(model, plan.spec).finally(() => this.#creating.delete(model));
      this.#creating.set(model, start);
    } else if (record?.phase === "Uncertain" && record.intent?.answer === "refused") {
      this.#settle(model, {
        kind: "failed",
        reason: `the last create for ${model} was refused; a new one waits until reconciliation settles it`,
      });
    }
    return waiting;
  }

  /** Resolves once every create in flight has its answer (for shutdown, and for tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.#creating.values()]);
  }

  /** Hold a ready pod against idle reaping for the length of one stream. */
  openStream(model: string): StreamLease | undefined {
    const record = this.#current(model);
    const watch = record === undefined ? undefined : this.#watches.get(record.id);
    if (watch?.readyAtMs === undefined) return undefined;
    watch.streams += 1;
    watch.lastUsedMs = this.#now();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        watch.streams -= 1;
        watch.lastUsedMs = this.#now();
      },
    };
  }

  /** One pass: reconcile (orphans included), then readiness, health, deadlines and idleness per pod. */
  async tick(): Promise<TickReport> {
    const reconciled = await this.#o.controller.reconcileOnce();
    const terminated: TerminateDecision[] = [];
    const readied: string[] = [];
    const live = new Set<DeploymentId>();
    for (const [model, plan] of this.#models) {
      const record = this.#current(model);
      if (record === undefined) {
        if (!this.#creating.has(model)) this.#settleStopped(model);
        continue;
      }
      live.add(record.id);
      const decision = await this.#check(model, plan.model, record, readied);
      if (decision !== undefined) {
        terminated.push(decision);
        this.#settle(model, { kind: "failed", reason: decision.why });
        await this.#o.controller.requireStop(decision.id, decision.reason);
      }
    }
    for (const id of this.#watches.keys()) if (!live.has(id)) this.#watches.delete(id);
    return { requeueAfterMs: reconciled.requeueAfterMs, terminated, readied };
  }

  async #check(
    model: string,
    settings: RunpodModel,
    record: DeploymentRecord,
    readied: string[],
  ): Promise<TerminateDecision | undefined> {
    const now = this.#now();
    const watch = this.#watch(record.id, now);
    const stop = (reason: StopReason, why: string): TerminateDecision => ({
      id: record.id,
      model,
      reason,
      why,
    });
    const status = record.observed?.status;
    if (status === "EXITED" || status === "ERROR")
      return stop(
        "unhealthy",
        `pod ${record.key?.incarnation ?? "?"} is ${status}: still billed, terminated`,
      );
    if (record.key !== undefined) {
      const crash = await this.#crashLoop(record.key, settings, watch, now);
      if (crash !== undefined) return stop("unhealthy", crash);
    }
    if (watch.readyAtMs === undefined) {
      if (status === "RUNNING" && record.observed?.address !== undefined) {
        const result = await this.#o.probe.probe(record.observed.address, model);
        if (result === "key-refused")
          return stop("unhealthy", `pod ${record.key?.incarnation ?? "?"} refused the vLLM API key`);
        if (result === "ready") {
          watch.readyAtMs = now;
          watch.address = record.observed.address;
          watch.lastUsedMs = now;
          const sentAtMs = record.intent?.sentAtMs;
          if (sentAtMs !== undefined && sentAtMs >= this.#startedAtMs && record.origin === "create")
            this.#coldStartMs.set(model, now - sentAtMs);
          readied.push(model);
          if (record.key !== undefined)
            this.#settle(model, { kind: "ready", key: record.key, address: record.observed.address });
          return undefined;
        }
      }
      const since = record.intent?.sentAtMs ?? record.declaredAtMs;
      if (now - since >= settings.startupDeadlineMs)
        return stop(
          "unhealthy",
          `${model} was not serving ${settings.startupDeadlineMs} ms after its create`,
        );
      return undefined;
    }
    const idleAfterMs = Math.max(settings.idleTimeoutMs, this.#coldStartMs.get(model) ?? 0);
    if (watch.streams === 0 && now - watch.lastUsedMs >= idleAfterMs)
      return stop("idle", `${model} was idle for ${now - watch.lastUsedMs} ms (limit ${idleAfterMs} ms)`);
    return undefined;
  }

  /** More container starts than the limit inside the window, as `startedAt` values show. */
  async #crashLoop(
    key: ResourceKey,
    settings: RunpodModel,
    watch: PodWatch,
    now: number,
  ): Promise<string | undefined> {
    let startedAt: string | null | undefined;
    try {
      startedAt = (await this.#o.provider.describePod(key))?.startedAt;
    } catch {
      return undefined; // no answer is no evidence of a crash; the deadline still applies
    }
    if (typeof startedAt === "string" && !watch.starts.has(startedAt)) watch.starts.set(startedAt, now);
    const recent = [...watch.starts.values()].filter((seenAt) => now - seenAt <= settings.crashWindowMs);
    const restarts = recent.length - 1;
    return restarts > settings.crashRestartLimit
      ? `pod ${key.incarnation} restarted ${restarts} times within ${settings.crashWindowMs} ms (limit ${settings.crashRestartLimit})`
      : undefined;
  }

  async #start(model: string, spec: DeploymentSpec): Promise<void> {
    const declared = this.#o.controller.declare(spec, this.#o.authorize(model));
    if (!declared.ok) {
      this.#settle(model, { kind: "failed", reason: `cannot declare ${model}: ${declared.error.code}` });
      return;
    }
    const started = await this.#o.controller.start(declared.value);
    if (!started.ok) {
      this.#settle(model, { kind: "failed", reason: `cannot start ${model}: ${started.error.code}` });
      return;
    }
    for (const event of started.value.events)
      if (event.type === "CreateOutcomeUncertain" && event.answer === "refused")
        this.#settle(model, { kind: "failed", reason: `Runpod refused ${model}: ${event.detail}` });
    // created or lost: tick() resolves the waiters once the pod serves (lost: once reconciliation finds it).
  }

  /** The model's live, wanted record (not being stopped). */
  #current(model: string): DeploymentRecord | undefined {
    const candidates = liveRecords(this.#o.controller.state).filter(
      (d) => d.origin === "create" && d.spec?.model === model && d.phase !== "StopRequired",
    );
    return candidates.sort((a, b) => b.declaredAtMs - a.declaredAtMs)[0];
  }

  /** No live record and waiters left over (their pod was stopped meanwhile): tell them. */
  #settleStopped(model: string): void {
    if ((this.#waiters.get(model)?.length ?? 0) > 0)
      this.#settle(model, { kind: "failed", reason: `the pod for ${model} is gone; ask again to start one` });
  }

  #settle(model: string, result: AcquireResult): void {
    const waiters = this.#waiters.get(model) ?? [];
    this.#waiters.delete(model);
    for (const w of waiters) w.resolve(result);
  }

  #watch(id: DeploymentId, now: number): PodWatch {
    let watch = this.#watches.get(id);
    if (watch === undefined) {
      watch = { lastUsedMs: now, streams: 0, starts: new Map() };
      this.#watches.set(id, watch);
    }
    return watch;
  }

  #now(): number {
    return this.#o.clock.now().wallMs;
  }
}
