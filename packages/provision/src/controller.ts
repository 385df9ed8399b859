/**
 * The controller shell: runs the contract's decisions against a provider port, with an injected
 * clock, id source and store. It commits every decision (compare-and-set on the state version)
 * before it performs the command that decision asked for, so intent is durable before any side
 * effect, and it feeds what the provider answered back into `decide()`.
 * It owns no timer: the daemon calls `reconcileOnce()` again after `requeueAfterMs`.
 * Must not know: HTTP, SQLite, wall clocks (all come through ports).
 */

import type { DeploymentSpec } from "./deployment.js";
import { decide } from "./decide.js";
import type { ComputeAuthorization, StopReason } from "./evidence.js";
import type { Command, Decision, HostingEvent, Input, LeaseClaim, Refusal } from "./inputs.js";
import { evaluatePolicy, validatePolicy, type HostingPolicy } from "./policy.js";
import type { CreateOutcome, ProviderPort, ResumeOutcome, StopOutcome } from "./provider-port.js";
import { validateCapabilities } from "./provider-port.js";
import { reconcile, type ReconcilePlan } from "./reconcile.js";
import { restore } from "./restore.js";
import { err, ok, type Result } from "./result.js";
import {
  DEFAULT_MAX_STOP_RETRY_MS,
  nextStopAttemptAtMs,
  validateStopBackoff,
  type StopBackoff,
} from "./stop-backoff.js";
import { liveRecords, type DeploymentId, type HostingState, type TransferTarget } from "./state.js";
import type { ResourceKey } from "./identity.js";
import type { Clock } from "./time.js";

/** Durable home of the contract's state. Implementations: `MemoryHostingStore`, the SQLite store. */
export interface HostingStore {
  /** The last committed state (the empty state for a new store). */
  load(): HostingState;
  /** Atomically replace the state, only if the stored version is still `expectedVersion`. */
  commit(next: HostingState, expectedVersion: number): "committed" | "conflict";
}

/** Ids are inputs: the daemon passes random ones, tests pass counters. */
export interface IdSource {
  next(kind: "deployment" | "request"): string;
}

export interface ControllerOptions {
  /** This controller (one sponsor process). */
  readonly controllerId: string;
  /** Written into every resource we create; only resources with it are adopted or stopped. */
  readonly ownerTag: string;
  /** The provider account this controller manages. */
  readonly account: string;
  readonly provider: ProviderPort;
  readonly store: HostingStore;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly policy: HostingPolicy;
  readonly leaseTtlMs: number;
  /** Requeue while something starts, is uncertain or stops. */
  readonly busyRequeueMs: number;
  /** Requeue when all is quiet: the periodic pass that repairs missed events. */
  readonly idleRequeueMs: number;
  /**
   * The wait after the first unconfirmed stop attempt of one resource; it doubles with each further
   * attempt (`stop-backoff.ts`), up to `maxStopRetryMs`, and never undercuts a provider's retry-after.
   */
  readonly stopRetryMs: number;
  /** The longest wait between two stop attempts (default 60 s: a billed resource keeps being stopped). */
  readonly maxStopRetryMs?: number;
  /** One sink for everything that happened (ledger, history, logs). */
  readonly onEvent?: (event: HostingEvent) => void;
}

export interface ReconcileReport {
  readonly listed: boolean;
  readonly complete: boolean;
  readonly plan?: ReconcilePlan;
  readonly refusals: readonly Refusal[];
  readonly requeueAfterMs: number;
}

const MAX_CONFLICT_RETRIES = 3;

export class HostingController {
  readonly #o: ControllerOptions;
  #state: HostingState;
  /** Wall time of this open: stop attempts before it (a previous process's) set no backoff. */
  readonly #openedAtMs: number;

  private constructor(options: ControllerOptions, state: HostingState) {
    this.#o = options;
    this.#state = state;
    this.#openedAtMs = options.clock.now().wallMs;
  }

  /**
   * Open a controller on a store. Every open is a restart: leases and liveness are dropped, a
   * create in flight becomes Uncertain, and obligations stay as they were.
   */
  static open(options: ControllerOptions): HostingController {
    const problems = [
      ...validatePolicy(options.policy),
      ...validateCapabilities(options.provider.capabilities),
      ...(options.leaseTtlMs > 0 ? [] : ["leaseTtlMs: must be > 0"]),
      ...(options.busyRequeueMs > 0 ? [] : ["busyRequeueMs: must be > 0"]),
      ...(options.idleRequeueMs > 0 ? [] : ["idleRequeueMs: must be > 0"]),
      ...validateStopBackoff(backoffOf(options)),
    ];
    if (problems.length > 0) throw new RangeError(`HostingController options: ${problems.join("; ")}`);
    for (let attempt = 0; ; attempt += 1) {
      const loaded = options.store.load();
      const restored = restore(loaded, options.clock.now().wallMs);
      if (options.store.commit(restored.state, loaded.version) === "committed") {
        for (const event of restored.events) options.onEvent?.(event);
        return new HostingController(options, restored.state);
      }
      if (attempt >= MAX_CONFLICT_RETRIES)
        throw new Error("HostingController.open: store kept changing under us");
    }
  }

  get state(): HostingState {
    return this.#state;
  }

  /** Read the store again: another process may have committed since. */
  refresh(): HostingState {
    this.#state = this.#o.store.load();
    return this.#state;
  }

  /** Decide, commit, publish. On a version conflict, reload and decide again on the fresh state. */
  apply(input: Input): Result<Decision, Refusal> {
    for (let attempt = 0; ; attempt += 1) {
      const decision = decide(this.#state, input);
      if (!decision.ok) return decision;
      if (this.#o.store.commit(decision.value.state, this.#state.version) === "committed") {
        this.#state = decision.value.state;
        for (const event of decision.value.events) this.#o.onEvent?.(event);
        return decision;
      }
      this.#state = this.#o.store.load();
      if (attempt >= MAX_CONFLICT_RETRIES)
        return err({ code: "invalid-input", detail: "store kept changing under us" });
    }
  }

  declare(
    spec: DeploymentSpec,
    authorization: ComputeAuthorization | undefined,
  ): Result<DeploymentId, Refusal> {
    return this.#declare({ type: "Declare", spec }, authorization);
  }

  /** Declare a spell of a resource that exists already (this exact key): resumed by `resume(id)`. */
  declareResume(
    key: ResourceKey,
    authorization: ComputeAuthorization | undefined,
  ): Result<DeploymentId, Refusal> {
    return this.#declare({ type: "DeclareResume", key }, authorization);
  }

  #declare(
    what:
      | { readonly type: "Declare"; readonly spec: DeploymentSpec }
      | { readonly type: "DeclareResume"; readonly key: ResourceKey },
    authorization: ComputeAuthorization | undefined,
  ): Result<DeploymentId, Refusal> {
    const id = this.#o.ids.next("deployment");
    const result = this.apply({
      ...what,
      id,
      ownerTag: this.#o.ownerTag,
      capabilities: this.#o.provider.capabilities,
      authorization,
      policy: this.#o.policy,
      at: this.#o.clock.now(),
    });
    return result.ok ? ok(id) : result;
  }

  /** Take (or renew) the lease on one deployment. */
  lease(id: DeploymentId): Result<LeaseClaim, Refusal> {
    const record = this.#state.deployments[id];
    const now = this.#o.clock.now();
    const held = record?.lease;
    if (
      held?.controllerId === this.#o.controllerId &&
      now.monoMs < held.expiresAtMonoMs - this.#o.leaseTtlMs / 2
    )
      return ok({ controllerId: held.controllerId, epoch: held.epoch });
    const result = this.apply({
      type: "AcquireLease",
      id,
      controllerId: this.#o.controllerId,
      ttlMs: this.#o.leaseTtlMs,
      at: now,
    });
    if (!result.ok) return result;
    const granted = result.value.state.deployments[id]?.lease;
    if (granted === undefined) return err({ code: "no-lease", id });
    return ok({ controllerId: granted.controllerId, epoch: granted.epoch });
  }

  /** Record the intent, then create. The obligation is durable before the provider is called. */
  start(id: DeploymentId): Promise<Result<Decision, Refusal>> {
    return this.#begin(id, "BeginCreate");
  }

  /**
   * Record the intent, then resume the declared resume's key: the obligation is durable before the
   * provider is called; an accepted resume is described at once, so a ready resource is Active.
   */
  resume(id: DeploymentId): Promise<Result<Decision, Refusal>> {
    return this.#begin(id, "BeginResume");
  }

  async #begin(id: DeploymentId, type: "BeginCreate" | "BeginResume"): Promise<Result<Decision, Refusal>> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    const begun = this.apply({
      type,
      id,
      lease: claim.value,
      requestId: this.#o.ids.next("request"),
      at: this.#o.clock.now(),
    });
    if (!begun.ok) return begun;
    return this.#run(begun.value.commands, claim.value, begun);
  }

  /** Retry an Uncertain create: refused unless the provider honours idempotency keys. */
  async retryCreate(id: DeploymentId): Promise<Result<Decision, Refusal>> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    const retried = this.apply({ type: "RetryCreate", id, lease: claim.value, at: this.#o.clock.now() });
    if (!retried.ok) return retried;
    return this.#run(retried.value.commands, claim.value, retried);
  }

  cancel(id: DeploymentId): Result<Decision, Refusal> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    return this.apply({ type: "Cancel", id, lease: claim.value, at: this.#o.clock.now() });
  }

  /** Oblige a stop, then try it. A failed stop leaves the obligation open; reconciliation retries. */
  async requireStop(id: DeploymentId, reason: StopReason): Promise<Result<Decision, Refusal>> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    const required = this.apply({
      type: "RequireStop",
      id,
      lease: claim.value,
      reason,
      at: this.#o.clock.now(),
    });
    if (!required.ok) return required;
    return this.#run(required.value.commands, claim.value, required);
  }

  confirmStopped(id: DeploymentId, confirmedBy: string, note: string): Result<Decision, Refusal> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    return this.apply({
      type: "ConfirmExternally",
      id,
      lease: claim.value,
      confirmedBy,
      note,
      at: this.#o.clock.now(),
    });
  }

  disown(id: DeploymentId, transferredTo: TransferTarget): Result<Decision, Refusal> {
    const claim = this.lease(id);
    if (!claim.ok) return claim;
    return this.apply({ type: "Disown", id, lease: claim.value, transferredTo, at: this.#o.clock.now() });
  }

  /**
   * One level-triggered pass: list, match, record orphans (obligation first), apply evidence,
   * apply ceilings, and retry stops that are due. Allocates nothing.
   */
  async reconcileOnce(): Promise<ReconcileReport> {
    const o = this.#o;
    const caps = o.provider.capabilities;
    const refusals: Refusal[] = [];
    const note = (r: Result<unknown, Refusal>) => {
      if (!r.ok) refusals.push(r.error);
    };
    this.refresh();
    let listing;
    try {
      listing = await o.provider.list();
    } catch {
      return { listed: false, complete: false, refusals, requeueAfterMs: o.busyRequeueMs };
    }
    const scope = {
      provider: caps.provider,
      account: o.account,
      ownerTag: o.ownerTag,
      capabilities: caps,
      busyRequeueMs: o.busyRequeueMs,
      idleRequeueMs: o.idleRequeueMs,
    };
    this.#expireStaleCreates(note);
    const plan = reconcile(this.#state, listing, scope, o.clock.now().wallMs);
    for (const { id, report } of plan.observe) {
      const claim = this.lease(id);
      if (!claim.ok) note(claim);
      else
        note(
          this.apply({
            type: "Observed",
            id,
            lease: claim.value,
            report,
            source: "listing",
            at: o.clock.now(),
          }),
        );
    }
    for (const id of plan.absent) {
      // One listing that lacks a resource it should show is not enough: a provider's listing can omit
      // or page past a live resource. A keyed record is asked for by its own key first; only a
      // not-found there lets the listing's absence count as evidence.
      const key = this.#state.deployments[id]?.key;
      const described = key === undefined ? undefined : await o.provider.describe(key);
      if (described?.kind === "unknown") continue;
      const claim = this.lease(id);
      if (!claim.ok) note(claim);
      else if (described?.kind === "found")
        note(
          this.apply({
            type: "Observed",
            id,
            lease: claim.value,
            report: described.report,
            source: "describe",
            at: o.clock.now(),
          }),
        );
      else
        note(this.apply({ type: "AbsentFromListing", id, lease: claim.value, listing, at: o.clock.now() }));
    }
    for (const orphan of plan.orphans) {
      note(
        this.apply({
          type: "RecordOrphan",
          id: o.ids.next("deployment"),
          report: orphan.report,
          ownerTag: o.ownerTag,
          capabilities: caps,
          reason: orphan.reason,
          at: o.clock.now(),
        }),
      );
    }
    for (const due of evaluatePolicy(this.#state, o.policy, o.clock.now().wallMs))
      note(await this.requireStop(due.id, due.reason));
    await this.#retryDueStops(note);
    return { listed: true, complete: listing.complete, plan, refusals, requeueAfterMs: plan.requeueAfterMs };
  }

  /**
   * A create (or idempotent retry) still "in flight" whose lease is gone will never get its answer
   * applied: taking the lease makes it Uncertain, so reconciliation can resolve it.
   */
  #expireStaleCreates(note: (r: Result<unknown, Refusal>) => void): void {
    const nowMono = this.#o.clock.now().monoMs;
    for (const d of liveRecords(this.#state))
      if ((d.phase === "Declared" && d.intent?.answer === undefined) || d.intent?.retryInFlight === true)
        if (d.lease === undefined || nowMono >= d.lease.expiresAtMonoMs) note(this.lease(d.id));
  }

  async #retryDueStops(note: (r: Result<unknown, Refusal>) => void): Promise<void> {
    const now = this.#o.clock.now().wallMs;
    const backoff = backoffOf(this.#o);
    const due = liveRecords(this.#state).filter(
      (d) =>
        d.phase === "StopRequired" &&
        d.key !== undefined &&
        now >= nextStopAttemptAtMs(d, backoff, this.#openedAtMs),
    );
    for (const record of due) {
      const key = record.key;
      if (key === undefined) continue;
      const claim = this.lease(record.id);
      if (!claim.ok) {
        note(claim);
        continue;
      }
      const mode = record.stopMode ?? this.#o.provider.capabilities.stopMode;
      note(await this.#run([{ type: "StopResource", id: record.id, key, mode }], claim.value, undefined));
    }
  }

  /** Perform commands one by one, feeding each answer back. Returns the last decision. */
  async #run(
    commands: readonly Command[],
    claim: LeaseClaim,
    first: Result<Decision, Refusal> | undefined,
  ): Promise<Result<Decision, Refusal>> {
    let last: Result<Decision, Refusal> = first ?? ok({ state: this.#state, commands: [], events: [] });
    for (const command of commands) {
      switch (command.type) {
        case "CreateResource": {
          let outcome: CreateOutcome;
          try {
            outcome = await this.#o.provider.create(command.request);
          } catch (cause) {
            outcome = { kind: "lost", cause: describe(cause) };
          }
          last = this.apply({
            type: "CreateAnswered",
            id: command.id,
            lease: claim,
            outcome,
            at: this.#o.clock.now(),
          });
          // Our lease lapsed while the create was out: the answer cannot be applied under it. Taking
          // the lease again marks the create Uncertain at once; reconciliation binds it by request id.
          if (!last.ok && (last.error.code === "lease-expired" || last.error.code === "stale-epoch"))
            this.lease(command.id);
          break;
        }
        case "ResumeResource":
          last = await this.#resume(command.id, command.key, claim);
          break;
        case "StopResource": {
          let outcome: StopOutcome;
          try {
            outcome = await this.#o.provider.stop(command.key, command.mode);
          } catch (cause) {
            outcome = { kind: "unknown", cause: describe(cause) };
          }
          last = this.apply({
            type: "StopAnswered",
            id: command.id,
            lease: claim,
            mode: command.mode,
            outcome,
            at: this.#o.clock.now(),
          });
          break;
        }
      }
    }
    return last;
  }

  async #resume(id: DeploymentId, key: ResourceKey, claim: LeaseClaim): Promise<Result<Decision, Refusal>> {
    const provider = this.#o.provider;
    let outcome: ResumeOutcome;
    try {
      outcome = (await provider.resume?.(key)) ?? {
        kind: "refused",
        code: "no_resume",
        message: `${provider.capabilities.provider} offers no resume`,
      };
    } catch (cause) {
      outcome = { kind: "unknown", cause: describe(cause) };
    }
    const answered = this.apply({
      type: "ResumeAnswered",
      id,
      lease: claim,
      outcome,
      at: this.#o.clock.now(),
    });
    if (!answered.ok) {
      // As for a create: our lease lapsed meanwhile; taking it again marks the resume Uncertain.
      if (answered.error.code === "lease-expired" || answered.error.code === "stale-epoch") this.lease(id);
      return answered;
    }
    if (outcome.kind !== "accepted") return answered;
    const described = await provider.describe(key).catch(() => undefined);
    if (described?.kind !== "found") return answered;
    const observed = this.apply({
      type: "Observed",
      id,
      lease: claim,
      report: described.report,
      source: "describe",
      at: this.#o.clock.now(),
    });
    return observed.ok ? observed : answered;
  }
}

function backoffOf(o: ControllerOptions): StopBackoff {
  return {
    stopRetryMs: o.stopRetryMs,
    maxStopRetryMs: o.maxStopRetryMs ?? Math.max(DEFAULT_MAX_STOP_RETRY_MS, o.stopRetryMs),
  };
}

function describe(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}
