/**
 * One managed Hugging Face Jobs rented node (`provider: huggingface-job` with a `job:` section): a
 * batch window. The first request runs `vllm serve` as a Job through a HostingController (intent and
 * obligation committed first, a ledger ComputeAuthorization required); concurrent requests wait on
 * the same start, never a second create. Every hosting event feeds the sponsor's shared ledger at
 * the flavor's per-minute price × 60 + the exposed-port surcharge per hour.
 * - Eligible when the exposed port answers a probe with the HF token (describe + httpsPortProbe);
 *   SCHEDULING, and RUNNING before the port answers, show as `starting`.
 * - `tick()`: reconciliation, readiness, then the stops: the window's end (`window-ended`, from
 *   windowObligations, even though HF's own timeout would also fire), idleness (`idle`, after
 *   `idle_pause_min` without a request), the ledger's budget stops (`budget-exceeded`). A stop is a
 *   cancel; COMPLETED/ERROR/CANCELED/DELETED are the evidence that closes the obligation.
 * - `close()` cancels at sponsor exit and waits, bounded by `exit_timeout_s`, for the evidence.
 * - `routingUse()`: `prefer` (or `job.routing`) while a window is open or a job can still be started,
 *   `never` once the last job's window ended (until `resume`) or its flavor is not listed; a
 *   `routing.use` written in the config wins.
 * - A restart finds its job by the record in SQLite (the job id is the key's incarnation): describe
 *   asks for that id; the owner label only finds orphans and lost creates.
 * Must not know: HTTP routing, the CLI, where the token is stored (it is handed it), real timers.
 */

import { routeEligibility } from "@pair/ledger";
import {
  HF_JOB_CAPABILITIES,
  HuggingFaceJobsProvider,
  jobRateMicroUsdPerHour,
  type HfJobFlavor,
  type JobsTransport,
  type PortProbe,
  type RevealableToken,
} from "@pair/huggingface";
import {
  HostingController,
  liveRecords,
  openObligations,
  windowObligations,
  type Clock,
  type DeploymentId,
  type DeploymentRecord,
  type HostingEvent,
  type HostingStore,
  type RentalWindow,
  type StopReason,
} from "@pair/provision";
import type { HuggingFaceJobNode, RoutingUse } from "../config/index.js";
import type { PairError } from "../dialects/index.js";
import { jobDeploymentSpec, jobRentalWindow, jobRoutingUse, type JobNodeSettings } from "./job-node-plan.js";
import { dischargesMissedByLedger } from "./ledger-catch-up.js";
import type { CreatedInfo, ManagedAction, ManagedView } from "./managed-endpoint.js";
import type { PresetIds } from "./managed-endpoints.js";
import { reservationIdOf, type ManagedLedger } from "./managed-ledger.js";
import type { ManagedStatus } from "./rented-nodes.js";

const USD = 1_000_000;
const DAY_MS = 86_400_000;
const STOP_UNCONFIRMED = "stop unconfirmed";

export interface JobManagedNodeOptions {
  readonly config: HuggingFaceJobNode;
  /** This sponsor's owner tag for this node's jobs (`pair-<nodeId>-<node>`), a job label. */
  readonly ownerTag: string;
  /** The Hub namespace the jobs run under (the token's user). */
  readonly namespace: string;
  readonly transport: JobsTransport;
  /** The HF token: the bearer of the sponsor's requests to the exposed port (never shown or logged). */
  readonly token: RevealableToken;
  /** Passed to every job as Job secrets, never as plain environment. */
  readonly secrets: Readonly<Record<string, RevealableToken>>;
  readonly probe: PortProbe;
  readonly store: HostingStore;
  readonly ledger: ManagedLedger;
  readonly clock: Clock;
  readonly ids: PresetIds;
  readonly timeZone: string;
  /** PAIR requests in flight on this node now (streams included). */
  readonly inFlight: () => number;
  /** Resolves true after `ms`, false when `signal` aborts first (the timer seam). */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
  readonly pollMs: number;
  readonly log: (line: string) => void;
  /** Set for a node `pair rented create` made (its view shows `created`). */
  readonly createdByPair?: boolean;
}

/** The routing use a job node puts in force, with why when it is `never` (it attracts no request). */
export type JobRoutingUse = { readonly use: RoutingUse; readonly why?: string };

/** The node detail of a job node: ManagedView plus the job's state, flavor and window end. */
export interface JobNodeView extends ManagedView {
  readonly job_state: "cold" | "starting" | "running" | "stopping";
  readonly flavor: string;
  readonly window_ends_at: string | null;
}

/** The plan's settings, from the config's `job:` section. */
export function jobSettingsOf(config: HuggingFaceJobNode): JobNodeSettings {
  return {
    repo: config.job.repo,
    flavor: config.job.flavor,
    windowMs: config.job.windowMs,
    ...(config.job.image === undefined ? {} : { image: config.job.image }),
    routingDuringWindow: config.routing.use,
  };
}

export class JobManagedNode {
  readonly name: string;
  readonly config: HuggingFaceJobNode;
  readonly #o: JobManagedNodeOptions;
  readonly #settings: JobNodeSettings;
  readonly #provider: HuggingFaceJobsProvider;
  readonly #controller: HostingController;
  #flavor: HfJobFlavor | undefined;
  #ready: { id: DeploymentId; address: string } | undefined;
  #creating: Promise<void> | undefined;
  #pausedBy: StopReason | undefined;
  #lastError: string | undefined;
  /** Stops sent and not confirmed so far (StopFailed events): a pause on request reports its own. */
  #stopFailures = 0;
  #pass: Promise<void> | undefined;
  /** Wall time of the last PAIR workload on this node (its start, or a pass that saw one open). */
  #lastActiveMs: number;
  /** `resume` re-arms a node whose window ended: jobs declared before this do not end its use. */
  #rearmedAtMs = 0;
  /** HF does not list the configured flavor: no job can start. */
  #flavorRefused = false;
  /** Why the configured flavor cannot run (it names the listed ones); kept apart from `#lastError`, which a pass clears. */
  #flavorProblem: string | undefined;

  constructor(options: JobManagedNodeOptions) {
    this.#o = options;
    this.config = options.config;
    this.name = options.config.name;
    this.#settings = jobSettingsOf(options.config);
    this.#lastActiveMs = options.clock.now().wallMs;
    this.#provider = new HuggingFaceJobsProvider({
      transport: options.transport,
      namespace: options.namespace,
      clock: options.clock,
      secrets: options.secrets,
      probe: options.probe,
      ownerTag: options.ownerTag,
      // Its jobs are known by the ids in SQLite, whatever their labels say (read at each call).
      recordedNames: () => this.#recordedNames(),
    });
    this.#controller = HostingController.open({
      controllerId: options.ownerTag,
      ownerTag: options.ownerTag,
      account: options.namespace,
      provider: this.#provider,
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      policy: { maxActiveResources: 1, maxLifetimeMs: DAY_MS + 60 * 60_000 },
      leaseTtlMs: 10 * 60_000,
      busyRequeueMs: 5_000,
      idleRequeueMs: 30_000,
      stopRetryMs: 10_000,
      onEvent: (event) => this.#onEvent(event),
    });
    this.#reserve();
    // Discharges a crash kept from the ledger (two SQLite files): close those episodes now.
    for (const event of dischargesMissedByLedger(this.#controller.state, options.ledger.state))
      this.#onEvent(event);
  }

  get controller(): HostingController {
    return this.#controller;
  }

  /** Resolves once a create in flight has its answer (shutdown, tests). */
  async settled(): Promise<void> {
    await this.#creating;
  }

  /** One pass (joins a pass under way). Never throws. */
  tick(): Promise<void> {
    this.#pass ??= this.#tick().finally(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  async #tick(): Promise<void> {
    try {
      // The price list failing must not stop the pass: reconciliation and the window, idle and
      // budget cancels still run (the reservation keeps the price it has, #reserve).
      const unpriced = await this.#price().then(
        () => undefined,
        (cause: unknown) =>
          `the Jobs hardware list (the flavor's price) could not be read: ${(cause as Error).message}`,
      );
      this.#reserve();
      if (this.#o.inFlight() > 0) this.#lastActiveMs = this.#o.clock.now().wallMs;
      await this.#controller.reconcileOnce();
      await this.#checkReady();
      await this.#stops();
      // An unconfirmed cancel stays reported until its obligation is discharged (see #onEvent).
      if (unpriced !== undefined) this.#lastError = unpriced;
      else if (!this.#lastError?.startsWith(STOP_UNCONFIRMED)) this.#lastError = undefined;
    } catch (cause) {
      this.#lastError = (cause as Error).message;
    }
  }

  /** The window, idle and budget stops of this pass. */
  async #stops(): Promise<void> {
    const now = this.#o.clock.now().wallMs;
    for (const due of windowObligations(this.#controller.state, this.#windows(), now)) {
      this.#o.log(`rented node ${this.name}: its window ended: cancelling its job`);
      await this.#stop(due.id, due.reason);
    }
    const idleMs = this.config.lifecycle.idlePauseMs;
    if (this.#o.inFlight() === 0 && now - this.#lastActiveMs >= idleMs)
      for (const record of this.#running()) {
        this.#o.log(`rented node ${this.name}: idle for ${idleMs / 60_000} min: cancelling its job`);
        await this.#stop(record.id, "idle");
      }
    const owns = (id: string) => this.#controller.state.deployments[id] !== undefined;
    for (const command of this.#o.ledger.tick(owns)) {
      this.#pausedBy = "budget-exceeded";
      this.#o.log(`rented node ${this.name}: budget reached: cancelling its job`);
      await this.#stop(command.deploymentId, command.reason);
    }
  }

  async #stop(id: DeploymentId, reason: StopReason): Promise<void> {
    if (this.#ready?.id === id) this.#ready = undefined;
    const stopped = await this.#controller.requireStop(id, reason);
    if (!stopped.ok) this.#lastError = `cancel (${reason}) refused: ${stopped.error.code}`;
  }

  /** Live records not yet stopping (the job this node runs, at most one). */
  #running(): DeploymentRecord[] {
    return liveRecords(this.#controller.state).filter(
      (d) => d.phase !== "StopRequired" && d.phase !== "Declared",
    );
  }

  /** Each live job's window, from when its create intent was sent (durable: a restart keeps it). */
  #windows(): Map<DeploymentId, RentalWindow> {
    const windows = new Map<DeploymentId, RentalWindow>();
    for (const record of liveRecords(this.#controller.state)) windows.set(record.id, this.#windowOf(record));
    return windows;
  }

  #windowOf(record: DeploymentRecord): RentalWindow {
    const startMs = record.intent?.sentAtMs ?? record.observed?.createdAtMs ?? record.declaredAtMs;
    return jobRentalWindow(startMs, this.#settings);
  }

  /** Job id → name of every job this node has a record of (live or ended), from SQLite. */
  #recordedNames(): Map<string, string> {
    const names = new Map<string, string>();
    // Not yet set while the controller opens (it asks the provider nothing then).
    const controller = this.#controller as HostingController | undefined;
    if (controller === undefined) return names;
    for (const record of Object.values(controller.state.deployments))
      if (record.key !== undefined) names.set(record.key.incarnation, record.key.name);
    return names;
  }

  /** The newest job this node declared (live or ended), from SQLite. */
  #latest(): DeploymentRecord | undefined {
    let latest: DeploymentRecord | undefined;
    for (const record of Object.values(this.#controller.state.deployments))
      if (latest === undefined || record.declaredAtMs > latest.declaredAtMs) latest = record;
    return latest;
  }

  /**
   * The routing use in force for its model (undefined: the configured one holds): the window's
   * (`jobRoutingUse`) once a job was declared, `never` when no job can start.
   */
  routingUse(): JobRoutingUse | undefined {
    if (this.config.routing.explicit === true) return undefined;
    const during = this.#settings.routingDuringWindow ?? "prefer";
    if (this.#flavorRefused) return { use: "never", why: this.#flavorProblem ?? "its flavor is not listed" };
    const latest = this.#latest();
    if (latest === undefined || latest.declaredAtMs < this.#rearmedAtMs) return { use: during };
    const use = jobRoutingUse(this.#windowOf(latest), this.#o.clock.now().wallMs, this.#settings);
    return use === "never"
      ? { use, why: `its batch window ended: pair rented resume ${this.name} opens a new one` }
      : { use };
  }

  /** A running job whose exposed port answers our token becomes the node's address. */
  async #checkReady(): Promise<void> {
    const [record] = this.#running();
    if (record === undefined || record.key === undefined) {
      this.#ready = undefined;
      return;
    }
    if (this.#ready?.id === record.id) return;
    const described = await this.#provider.describe(record.key);
    if (described.kind !== "found") return;
    const report = described.report;
    if (report.ready === true && report.address !== undefined)
      this.#ready = { id: record.id, address: report.address };
  }

  /**
   * The job's exposed URL (without /v1), running one when none runs; waits within the caller's
   * signal (its cold-start budget), driving passes every `pollMs`.
   */
  async prepare(signal: AbortSignal): Promise<{ ok: true; url: string } | { ok: false; error: PairError }> {
    this.#lastActiveMs = this.#o.clock.now().wallMs;
    if (this.#pausedBy === "user-request")
      return {
        ok: false,
        error: this.#error(
          "rented_node_paused",
          `paused by the user: no job runs until pair rented resume ${this.name}`,
        ),
      };
    const refused = this.budgetRefusal();
    if (refused !== undefined) return { ok: false, error: refused };
    for (;;) {
      if (this.#ready !== undefined) return { ok: true, url: this.#ready.address };
      if (this.#creating === undefined && liveRecords(this.#controller.state).length === 0) {
        // Registered before the first await: a concurrent caller sees the start and only waits.
        this.#creating = this.#start().finally(() => (this.#creating = undefined));
        await this.#creating;
        if (this.#lastError !== undefined && liveRecords(this.#controller.state).length === 0)
          return { ok: false, error: this.#error("rented_node_ineligible", this.#lastError) };
      }
      if (!(await this.#o.sleep(this.#o.pollMs, signal)))
        return {
          ok: false,
          error: this.#error("cold_start_timeout", "its job did not serve within its cold-start budget"),
        };
      await this.tick();
    }
  }

  /** Declare (with the ledger's authorization) and run the job: intent committed before the call. */
  async #start(): Promise<void> {
    const declared = await this.declareRun();
    if (!declared.ok) {
      this.#lastError = declared.error.message;
      return;
    }
    await this.run(declared.id);
  }

  /**
   * The ledger's ComputeAuthorization and the job's declaration, durable in SQLite; nothing is sent
   * to Hugging Face yet (`run` sends it). Refused: `budget_exceeded`, or why no job can start.
   */
  async declareRun(): Promise<{ ok: true; id: DeploymentId } | { ok: false; error: PairError }> {
    await this.#price();
    if (this.#flavor === undefined)
      return {
        ok: false,
        error: this.#error("rented_node_ineligible", this.#flavorProblem ?? "its flavor is not priced"),
      };
    if (liveRecords(this.#controller.state).length > 0)
      return { ok: false, error: this.#error("rented_node_ineligible", "it already runs a job") };
    this.#reserve();
    const authorization = this.#o.ledger.authorize(this.name, this.#o.ids.preset(), HF_JOB_CAPABILITIES);
    if (!authorization.ok)
      return {
        ok: false,
        error:
          authorization.error.code === "budget-exceeded"
            ? this.#error(
                "budget_exceeded",
                "the ledger gave no compute authorization: one billed minute does not fit in its " +
                  "budget; raise --usd-per-day / --usd-per-month (budget.usd_per_day / usd_per_month)",
              )
            : this.#error(
                "rented_node_ineligible",
                `the ledger refused a new job: ${authorization.error.code}`,
              ),
      };
    const spec = jobDeploymentSpec(this.name, this.#o.namespace, this.#settings);
    const declared = this.#controller.declare(spec, authorization.value);
    if (!declared.ok)
      return {
        ok: false,
        error: this.#error(
          "rented_node_ineligible",
          `the contract refused a new job: ${declared.error.code}`,
        ),
      };
    return { ok: true, id: declared.value };
  }

  /** Send the declared job's create (a lost answer is Uncertain and reconciled, never sent again). */
  async run(id: DeploymentId): Promise<ManagedAction> {
    this.#lastActiveMs = this.#o.clock.now().wallMs;
    const started = await this.#controller.start(id);
    this.#o.log(
      `rented node ${this.name}: running a ${this.#settings.flavor} job for ${this.#settings.repo}`,
    );
    if (!started.ok) {
      this.#lastError = `the job could not be run: ${started.error.code}`;
      return { ok: false, error: this.#error("upstream_error", this.#lastError) };
    }
    this.#lastError = undefined;
    return { ok: true };
  }

  /** Refused for money: the node reached a cap (`budget_exceeded`), until the window resets. */
  budgetRefusal(): PairError | undefined {
    const at = this.#o.clock.now().wallMs;
    const e = routeEligibility(this.#o.ledger.state, { kind: "rented", nodeId: this.name }, at);
    if (e.eligible || e.reason === "no-reservation") return undefined;
    return this.#error(
      "budget_exceeded",
      `reached its ${e.window === "day" ? "daily" : "monthly"} budget; no job until ` +
        `${new Date(e.untilMs).toISOString()}: raise budget.usd_per_${e.window} or wait`,
    );
  }

  /** `pair rented pause`: cancel its job and run none until `resume`. */
  async pause(reason: StopReason = "user-request"): Promise<ManagedAction> {
    this.#pausedBy = reason;
    await this.#creating;
    const failuresBefore = this.#stopFailures;
    for (const record of liveRecords(this.#controller.state)) {
      if (record.phase === "StopRequired") continue;
      const stopped = await this.#controller.requireStop(record.id, reason);
      if (!stopped.ok)
        return { ok: false, error: this.#error("upstream_error", `cancel refused: ${stopped.error.code}`) };
    }
    this.#ready = undefined;
    // Required, sent, and not confirmed (refused, lost, or accepted while it still runs): say so.
    if (this.#stopFailures !== failuresBefore)
      return { ok: false, error: this.#error("upstream_error", this.#lastError ?? STOP_UNCONFIRMED) };
    this.#o.log(`rented node ${this.name}: paused: its job is cancelled`);
    return { ok: true };
  }

  /** `pair rented resume`: jobs run on demand again, in a new window (refused while over budget). */
  resume(): ManagedAction {
    const refused = this.budgetRefusal();
    if (refused !== undefined) return { ok: false, error: refused };
    this.#pausedBy = undefined;
    this.#rearmedAtMs = this.#o.clock.now().wallMs + 1;
    return { ok: true };
  }

  /** When `pair rented create` made it: its newest job's declaration (null for a configured node). */
  created(): CreatedInfo | null {
    const latest = this.#o.createdByPair === true ? this.#latest() : undefined;
    if (latest === undefined) return null;
    return {
      started_at: new Date(latest.declaredAtMs).toISOString(),
      elapsed_s: Math.floor(Math.max(0, this.#o.clock.now().wallMs - latest.declaredAtMs) / 1000),
    };
  }

  /** For routing and views: the job's state as PAIR shows it. */
  status(): ManagedStatus {
    const job = this.#jobState();
    return {
      state:
        this.#pausedBy === "user-request"
          ? "paused"
          : job === "running"
            ? "running"
            : job === "starting"
              ? "starting"
              : "scaled_to_zero",
      models: [this.#settings.repo],
      gpu: this.#settings.flavor,
      lastError: this.#lastError,
      ...this.#providerState(),
    };
  }

  /** The newest job's stage as Hugging Face last reported it (ERROR reads `failed`), and its message. */
  #providerState(): { providerState: string | undefined; providerMessage: string | undefined } {
    const observed = this.#latest()?.observed;
    const stage = observed?.status?.toLowerCase();
    return {
      providerState: stage === "error" ? "failed" : stage,
      providerMessage: observed?.message,
    };
  }

  /** The HF token as the bearer of the sponsor's requests to the exposed port. */
  headers(): Readonly<Record<string, string>> {
    return { authorization: `Bearer ${this.#o.token.reveal()}` };
  }

  view(): JobNodeView {
    const spend = this.#o.ledger.spend(this.name);
    const usd = (micro: number) => Math.round(micro) / USD;
    const [record] = this.#running();
    const window = record === undefined ? undefined : this.#windows().get(record.id);
    return {
      managed: true,
      paused_by: this.#pausedBy ?? null,
      budget_exceeded: this.budgetRefusal() !== undefined,
      spend_usd:
        spend === undefined
          ? null
          : {
              session: usd(spend.sessionMicroUsd),
              today: usd(spend.todayMicroUsd),
              month: usd(spend.thisMonthMicroUsd),
              total: usd(spend.totalMicroUsd),
            },
      usd_per_hour: this.#flavor === undefined ? null : usd(jobRateMicroUsdPerHour(this.#flavor, true)),
      open_obligations: openObligations(this.#controller.state).length,
      last_error: this.#lastError ?? null,
      last_active_at: new Date(this.#lastActiveMs).toISOString(),
      idle_pause_min: this.config.lifecycle.idlePauseMs / 60_000,
      job_state: this.#jobState(),
      flavor: this.#settings.flavor,
      window_ends_at: window === undefined ? null : new Date(window.endMs).toISOString(),
    };
  }

  /**
   * Sponsor exit: cancel its job and wait, up to `exit_timeout_s`, for a terminal stage. Returns the
   * obligations still open (they stay in SQLite for the next start).
   */
  async close(): Promise<number> {
    if (!this.config.lifecycle.pauseOnSponsorExit) return openObligations(this.#controller.state).length;
    await this.#creating;
    for (const record of liveRecords(this.#controller.state))
      if (record.phase !== "StopRequired")
        await this.#controller.requireStop(record.id, "sponsor-exit").catch(() => undefined);
    const exitMs = this.config.lifecycle.exitTimeoutMs;
    const deadline = this.#o.clock.now().monoMs + exitMs;
    while (openObligations(this.#controller.state).length > 0 && this.#o.clock.now().monoMs < deadline) {
      await this.#o.sleep(this.#o.pollMs);
      await this.#controller.reconcileOnce().catch(() => undefined);
    }
    const open = openObligations(this.#controller.state).length;
    this.#o.log(
      open > 0
        ? `rented node ${this.name}: cancel not confirmed within ${exitMs / 1000} s; it stays an ` +
            "open obligation and is reconciled at the next start"
        : `rented node ${this.name}: its job is cancelled at sponsor exit`,
    );
    return open;
  }

  #jobState(): JobNodeView["job_state"] {
    if (this.#ready !== undefined) return "running";
    if (this.#creating !== undefined || this.#running().length > 0) return "starting";
    return liveRecords(this.#controller.state).length > 0 ? "stopping" : "cold";
  }

  /** The flavor's listed price (read once; a flavor HF does not list refuses to start). */
  async #price(): Promise<void> {
    if (this.#flavor !== undefined) return;
    const flavors = await this.#o.transport.hardware();
    this.#flavor = flavors.find((f) => f.name === this.#settings.flavor);
    this.#flavorRefused = this.#flavor === undefined;
    this.#flavorProblem =
      this.#flavor === undefined
        ? `flavor ${this.#settings.flavor} is not listed by Hugging Face Jobs ` +
          `(listed: ${flavors.map((f) => f.name).join(", ")}): fix job.flavor`
        : undefined;
    if (this.#flavorProblem !== undefined) this.#lastError = this.#flavorProblem;
  }

  /**
   * Open the node's reservation at the flavor's rate + the port surcharge. Until the hardware list
   * is read (after a restart, a job may be running) the price is unknown: the reservation keeps the
   * one it has (0 only for a new one), never dropping to 0 under a running job.
   */
  #reserve(): void {
    const price = this.#flavor === undefined ? undefined : jobRateMicroUsdPerHour(this.#flavor, true);
    const budget = { ...this.config.budget, timeZone: this.#o.timeZone, stopLeadMs: 0 };
    const reserved = this.#o.ledger.ensureReservation(this.name, price, budget);
    if (!reserved.ok) this.#lastError = `ledger: ${JSON.stringify(reserved.error)}`;
  }

  #onEvent(event: HostingEvent): void {
    // A cancel that was not confirmed shows in `pair rented list` until evidence closes it.
    if (event.type === "StopFailed") {
      this.#stopFailures += 1;
      this.#lastError =
        `${STOP_UNCONFIRMED} after ${event.attempts} attempt(s), the obligation stays open and the ` +
        `cancel is retried: ${event.detail}`;
    }
    if (event.type === "ObligationDischarged" && this.#lastError?.startsWith(STOP_UNCONFIRMED))
      this.#lastError = undefined;
    const fed = this.#o.ledger.apply({
      type: "HostingEventReported",
      event,
      bind: { reservationId: reservationIdOf(this.name), capabilities: HF_JOB_CAPABILITIES },
      at: this.#o.clock.now(),
    });
    if (!fed.ok && fed.error.code !== "episode-closed")
      this.#o.log(`rented node ${this.name}: ledger refused ${event.type}: ${fed.error.code}`);
  }

  #error(code: PairError["code"], message: string): PairError {
    return { code, message: `rented node ${this.name}: ${message}`, node: this.name };
  }
}
