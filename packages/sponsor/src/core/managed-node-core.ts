/**
 * What a managed rented node (a Hugging Face endpoint, a Hugging Face Job, a Runpod pod) does the same
 * way whatever runs it; the node composes one and keeps what its provider needs (price, readiness,
 * starts, windows, an endpoint's adoption and wake).
 * - The HostingController over the node's SQLite store; every hosting event it reports is fed to the
 *   sponsor's shared ledger, and a stop not confirmed (StopFailed) stays the node's last error until
 *   evidence discharges its obligation. `catchUpLedger()` feeds the discharges a crash kept from it.
 * - The reservation at the node's price (undefined: the price it has is kept), the ledger's
 *   authorization, its budget stops, and the refusal for money until the capped window resets.
 * - One pass at a time (`pass`), user pause and resume, and the sponsor-exit stops, waited for up to
 *   `exit_timeout_s` (what stays unconfirmed stays an open obligation in SQLite for the next start).
 * - The view's and the status's common fields.
 * Must not know: which provider runs the node, how its machines are priced or found ready, HTTP,
 * real timers.
 */

import { randomUUID } from "node:crypto";
import { formatMicroUsd, routeEligibility } from "@pair/ledger";
import {
  HostingController,
  liveRecords,
  openObligations,
  type Clock,
  type DeploymentId,
  type DeploymentRecord,
  type HostingEvent,
  type HostingPolicy,
  type HostingStore,
  type IdSource,
  type ProviderCapabilities,
  type ProviderPort,
  type StopReason,
} from "@pair/provision";
import type { RentedBudget, RentedLifecycle } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { dischargesMissedByLedger } from "./ledger-catch-up.js";
import { managedView, type ManagedAction, type ManagedView } from "./managed-endpoint-view.js";
import { ledgerBudget, reservationIdOf, type ManagedLedger } from "./managed-ledger.js";
import type { ManagedStatus } from "./managed-node.js";

const STOP_UNCONFIRMED = "stop unconfirmed";

/**
 * What a node last got wrong, typed: `stop-unconfirmed` (a stop sent and not confirmed, shown until
 * evidence discharges its obligation; a pass does not clear it) or any other `error`.
 */
export interface NodeProblem {
  readonly kind: "error" | "stop-unconfirmed";
  readonly message: string;
}

/** The problem a StopFailed event leaves: its text says the obligation stays open and the stop is retried. */
export function stopUnconfirmed(attempts: number, stop: string, detail: string): NodeProblem {
  return {
    kind: "stop-unconfirmed",
    message:
      `${STOP_UNCONFIRMED} after ${attempts} attempt(s), the obligation stays open and the ` +
      `${stop} is retried: ${detail}`,
  };
}

/** Deployment ids chosen before the declaration: the ledger's authorization names the id. */
export interface PresetIdSource extends IdSource {
  /** The id the next `next("deployment")` returns. */
  preset(): string;
}

/** Deployment ids preset before each declaration (the authorization names it), random otherwise. */
export class PresetIds implements PresetIdSource {
  #next: string | undefined;
  preset(): string {
    this.#next = `deployment-${randomUUID()}`;
    return this.#next;
  }
  next(kind: "deployment" | "request"): string {
    if (kind === "deployment" && this.#next !== undefined) {
      const id = this.#next;
      this.#next = undefined;
      return id;
    }
    return `${kind}-${randomUUID()}`;
  }
}

/** What every managed node is handed by its manager (besides its config and provider client). */
export interface OnDemandNodeOptions {
  /** This sponsor's owner tag for this node's resources (`pair-<nodeId>-<node>`). */
  readonly ownerTag: string;
  readonly store: HostingStore;
  readonly ledger: ManagedLedger;
  readonly clock: Clock;
  readonly ids: PresetIdSource;
  readonly timeZone: string;
  /** PAIR requests in flight on this node now (streams included). */
  readonly inFlight: () => number;
  /** Resolves true after `ms`, false when `signal` aborts first (the timer seam). */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
  readonly pollMs: number;
  /** Time between the manager's passes (a budget stop waits up to this for the pass issuing it). */
  readonly passIntervalMs: number;
  readonly log: (line: string) => void;
}

/** How the node's log lines and errors name its resource and its stop. */
export interface NodeWords {
  /** The resource: `job`, `pod`. */
  readonly unit: string;
  /** The stop, as a verb: `cancel`, `terminate`. */
  readonly stop: string;
  /** The stop under way: `cancelling`, `terminating`. */
  readonly stopping: string;
  /** The stop at sponsor exit, as a noun: `cancel`, `termination`. */
  readonly exitStop: string;
  /** What a confirmed user pause logs: `its job is cancelled`. */
  readonly paused: string;
  /** What an exit with every stop confirmed logs: `its job is cancelled at sponsor exit`. */
  readonly exited: string;
  /** What a budget stop logs (default `<stopping> its <unit>`). */
  readonly budgetStop?: string;
}

/** What the node tells its core: the provider, its rules, and which of its records it stops. */
export interface ManagedNodeCoreSetup {
  readonly config: {
    readonly name: string;
    readonly lifecycle: RentedLifecycle;
    readonly budget: RentedBudget;
  };
  readonly provider: ProviderPort;
  readonly account: string;
  readonly policy: HostingPolicy;
  readonly capabilities: ProviderCapabilities;
  readonly words: NodeWords;
  /** Resolves once a start in flight has its answer (a pause or an exit waits for it). */
  readonly settled: () => Promise<void> | undefined;
  /** The live records a pause or an exit sends a stop for. */
  readonly stoppable: () => readonly DeploymentRecord[];
  /** The controller's id (default the owner tag) and requeue timings (default a job's, a pod's). */
  readonly controllerId?: string;
  readonly requeue?: { readonly busyMs: number; readonly idleMs: number; readonly stopRetryMs: number };
  /** What the node itself notes of a hosting event, before the core's own handling. */
  readonly onEvent?: (event: HostingEvent) => void;
}

export class ManagedNodeCore {
  readonly name: string;
  readonly controller: HostingController;
  /** Why it is stopped or refused new resources (a user's pause, a budget cap); undefined otherwise. */
  pausedBy: StopReason | undefined;
  /** The last problem, typed (`lastError` is its text). */
  problem: NodeProblem | undefined;
  /** Wall time of the last PAIR workload on this node (its start, or a pass that saw one open). */
  lastActiveMs: number;
  /** When its sponsor last resumed it: the state history's cause. */
  resumedAtMs: number | undefined;
  readonly #o: OnDemandNodeOptions;
  readonly #s: ManagedNodeCoreSetup;
  /** Stops sent and not confirmed so far (StopFailed events): a pause on request reports its own. */
  #stopFailures = 0;
  #pass: Promise<void> | undefined;

  get lastError(): string | undefined {
    return this.problem?.message;
  }

  set lastError(message: string | undefined) {
    this.problem = message === undefined ? undefined : { kind: "error", message };
  }

  /** A stop was sent and not confirmed: its obligation stays open until evidence. */
  get stopUnconfirmed(): boolean {
    return this.problem?.kind === "stop-unconfirmed";
  }

  constructor(options: OnDemandNodeOptions, setup: ManagedNodeCoreSetup) {
    this.#o = options;
    this.#s = setup;
    this.name = setup.config.name;
    this.lastActiveMs = options.clock.now().wallMs;
    const requeue = setup.requeue ?? { busyMs: 5_000, idleMs: 30_000, stopRetryMs: 10_000 };
    this.controller = HostingController.open({
      controllerId: setup.controllerId ?? options.ownerTag,
      ownerTag: options.ownerTag,
      account: setup.account,
      provider: setup.provider,
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      policy: setup.policy,
      leaseTtlMs: 10 * 60_000,
      busyRequeueMs: requeue.busyMs,
      idleRequeueMs: requeue.idleMs,
      stopRetryMs: requeue.stopRetryMs,
      onEvent: (event) => this.#onEvent(event),
    });
  }

  /** Discharges a crash kept from the ledger (two SQLite files): close those episodes now. */
  catchUpLedger(): void {
    for (const event of dischargesMissedByLedger(this.controller.state, this.#o.ledger.state))
      this.#onEvent(event);
  }

  /**
   * One pass (joins a pass under way). `body` returns a problem to report, if any; without one the
   * last error clears, except an unconfirmed stop (it stays until its obligation is discharged).
   * Never throws: what `body` throws becomes the last error.
   */
  pass(body: () => Promise<string | undefined>): Promise<void> {
    this.#pass ??= this.#run(body).finally(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  async #run(body: () => Promise<string | undefined>): Promise<void> {
    try {
      const problem = await body();
      if (problem !== undefined) this.lastError = problem;
      else if (!this.stopUnconfirmed) this.problem = undefined;
    } catch (cause) {
      this.lastError = (cause as Error).message;
    }
  }

  /** A PAIR workload runs on it now (the idle timer counts from here). */
  markActive(): void {
    this.lastActiveMs = this.#o.clock.now().wallMs;
  }

  /**
   * Open the node's reservation at `priceMicroUsdPerHour` and keep it in step with the config.
   * Undefined (the price is not known to this process yet, after a restart): the reservation keeps
   * the one it has (0 only for a new one), never dropping to 0 under a running resource.
   */
  reserve(priceMicroUsdPerHour: number | undefined): boolean {
    const { timeZone, passIntervalMs } = this.#o;
    const budget = ledgerBudget(this.#s.config.budget, timeZone, this.#s.capabilities, passIntervalMs);
    const reserved = this.#o.ledger.ensureReservation(this.name, priceMicroUsdPerHour, budget);
    if (!reserved.ok) this.lastError = `ledger: ${JSON.stringify(reserved.error)}`;
    return reserved.ok;
  }

  /** Stops sent and not confirmed so far (StopFailed events): a pause on request reports its own. */
  get stopFailures(): number {
    return this.#stopFailures;
  }

  /** The ledger's permission to spend for one more resource, named by the id its declaration takes. */
  authorize(): ReturnType<ManagedLedger["authorize"]> {
    return this.#o.ledger.authorize(this.name, this.#o.ids.preset(), this.#s.capabilities);
  }

  /** The ledger's budget stops of this node's resources, each sent with `stop`. */
  async budgetStops(stop: (id: DeploymentId, reason: StopReason) => Promise<unknown>): Promise<void> {
    const owns = (id: string) => this.controller.state.deployments[id] !== undefined;
    for (const command of this.#o.ledger.tick(owns)) {
      this.pausedBy = "budget-exceeded";
      const words = this.#s.words;
      this.#o.log(
        `rented node ${this.name}: budget reached: ${words.budgetStop ?? `${words.stopping} its ${words.unit}`}`,
      );
      await stop(command.deploymentId, command.reason);
    }
  }

  /**
   * Refused for money: the node reached a cap (`budget_exceeded`), until the window resets; or none
   * of its resources runs and the ledger would not authorize the start a request needs (one billed
   * unit does not fit). The view, the router and the start ask this one function, so they agree.
   */
  budgetRefusal(): PairError | undefined {
    return this.#capRefusal() ?? this.#startRefusal();
  }

  #capRefusal(): PairError | undefined {
    const at = this.#o.clock.now().wallMs;
    const e = routeEligibility(this.#o.ledger.state, { kind: "rented", nodeId: this.name }, at);
    if (e.eligible || e.reason === "no-reservation") return undefined;
    return this.error(
      "budget_exceeded",
      `reached its ${e.window === "day" ? "daily" : "monthly"} budget; no ${this.#s.words.unit} until ` +
        `${new Date(e.untilMs).toISOString()}: raise budget.usd_per_${e.window} or wait`,
    );
  }

  #startRefusal(): PairError | undefined {
    if (liveRecords(this.controller.state).length > 0) return undefined;
    const refused = this.#o.ledger.startRefusal(this.name, this.#s.capabilities);
    if (refused?.code !== "budget-exceeded") return undefined;
    const left = Math.max(0, refused.capMicroUsd - refused.spentMicroUsd - refused.heldMicroUsd);
    return this.error(
      "budget_exceeded",
      `a new ${this.#s.words.unit} would not fit its ${refused.window === "day" ? "daily" : "monthly"} ` +
        `budget: its first billed unit costs $${formatMicroUsd(refused.neededMicroUsd)}, ` +
        `$${formatMicroUsd(left)} is left until ${new Date(refused.untilMs).toISOString()}; ` +
        `raise budget.usd_per_${refused.window} or wait`,
    );
  }

  /** A request arrives (it counts as activity): refused while the user's pause holds (`paused` says why) or over budget. */
  admit(paused: string): PairError | undefined {
    this.markActive();
    if (this.pausedBy === "user-request") return this.error("rented_node_paused", paused);
    return this.budgetRefusal();
  }

  /**
   * `pair rented pause`: stop every stoppable record and run none until `resume`. `afterStops` runs
   * once every stop was accepted. A stop refused, lost or not yet confirmed is an error.
   */
  async pause(reason: StopReason, afterStops?: () => void): Promise<ManagedAction> {
    this.pausedBy = reason;
    await this.#s.settled();
    const failuresBefore = this.#stopFailures;
    for (const record of this.#s.stoppable()) {
      const stopped = await this.controller.requireStop(record.id, reason);
      if (!stopped.ok)
        return {
          ok: false,
          error: this.error("upstream_error", `${this.#s.words.stop} refused: ${stopped.error.code}`),
        };
    }
    afterStops?.();
    // Required, sent, and not confirmed (refused, lost, or accepted while it still runs): say so.
    if (this.#stopFailures !== failuresBefore)
      return { ok: false, error: this.error("upstream_error", this.lastError ?? STOP_UNCONFIRMED) };
    this.#o.log(`rented node ${this.name}: paused: ${this.#s.words.paused}`);
    return { ok: true };
  }

  /** `pair rented resume`: resources run on demand again (refused while over budget). */
  resume(): ManagedAction {
    // Only a reached cap refuses a resume: nothing starts until a request comes, which asks again.
    const refused = this.#capRefusal();
    if (refused !== undefined) return { ok: false, error: refused };
    this.pausedBy = undefined;
    this.resumedAtMs = this.#o.clock.now().wallMs;
    return { ok: true };
  }

  /**
   * Sponsor exit: stop every stoppable record and wait, up to `exit_timeout_s`, for the evidence.
   * Returns the obligations still open (they stay in SQLite for the next start).
   */
  async close(): Promise<number> {
    const lifecycle = this.#s.config.lifecycle;
    if (!lifecycle.pauseOnSponsorExit) return openObligations(this.controller.state).length;
    await this.#s.settled();
    for (const record of this.#s.stoppable())
      await this.controller.requireStop(record.id, "sponsor-exit").catch(() => undefined);
    const exitMs = lifecycle.exitTimeoutMs;
    const deadline = this.#o.clock.now().monoMs + exitMs;
    while (openObligations(this.controller.state).length > 0 && this.#o.clock.now().monoMs < deadline) {
      await this.#o.sleep(this.#o.pollMs);
      await this.controller.reconcileOnce().catch(() => undefined);
    }
    const open = openObligations(this.controller.state).length;
    this.#o.log(
      open > 0
        ? `rented node ${this.name}: ${this.#s.words.exitStop} not confirmed within ${exitMs / 1000} s; ` +
            "it stays an open obligation and is reconciled at the next start"
        : `rented node ${this.name}: ${this.#s.words.exited}`,
    );
    return open;
  }

  /** The state `pair rented list` shows, from its resource's. */
  statusState(resource: "cold" | "starting" | "running" | "stopping"): ManagedStatus["state"] {
    if (this.pausedBy === "user-request") return "paused";
    return resource === "running" ? "running" : resource === "starting" ? "starting" : "scaled_to_zero";
  }

  /** The node detail's common fields, at the price the ledger charges. */
  view(
    priceMicroUsdPerHour: number | undefined,
    idlePauseMs: number,
    budgetExceeded = this.budgetRefusal() !== undefined,
  ): ManagedView {
    return managedView({
      spend: this.#o.ledger.spend(this.name),
      pausedBy: this.pausedBy,
      budgetExceeded,
      priceMicroUsdPerHour,
      openObligations: openObligations(this.controller.state).length,
      lastError: this.lastError,
      lastActiveMs: this.lastActiveMs,
      idlePauseMs,
      resumedAtMs: this.resumedAtMs,
    });
  }

  error(code: PairError["code"], message: string): PairError {
    return { code, message: `rented node ${this.name}: ${message}`, node: this.name };
  }

  #onEvent(event: HostingEvent): void {
    this.#s.onEvent?.(event);
    // A stop that was not confirmed shows in `pair rented list` until evidence closes it.
    if (event.type === "StopFailed") {
      this.#stopFailures += 1;
      this.problem = stopUnconfirmed(event.attempts, this.#s.words.stop, event.detail);
    }
    if (event.type === "ObligationDischarged" && this.stopUnconfirmed) this.problem = undefined;
    const fed = this.#o.ledger.apply({
      type: "HostingEventReported",
      event,
      bind: { reservationId: reservationIdOf(this.name), capabilities: this.#s.capabilities },
      at: this.#o.clock.now(),
    });
    if (!fed.ok && fed.error.code !== "episode-closed")
      this.#o.log(
        `rented node ${this.name}: ledger refused ${event.type}: ${fed.error.code}` +
          ("detail" in fed.error ? ` (${fed.error.detail})` : ""),
      );
  }
}
