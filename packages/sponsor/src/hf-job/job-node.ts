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
 * What any on-demand node does (ledger feed, reservation, budget stops, pause/resume, exit stops) is
 * its ManagedNodeCore; this file keeps the Jobs-specific part (flavor price, window, readiness, start).
 * Must not know: HTTP routing, the CLI, where the token is stored (it is handed it), real timers.
 */

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
  liveRecords,
  windowObligations,
  type DeploymentId,
  type DeploymentRecord,
  type HostingController,
  type RentalWindow,
  type StopReason,
} from "@pair/provision";
import type { HuggingFaceJobNode, RoutingUse } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { jobGpuLabel } from "../core/gpu-label.js";
import { jobDeploymentSpec, jobRentalWindow, jobRoutingUse, type JobNodeSettings } from "./job-node-plan.js";
import type { CreatedInfo, ManagedAction, ManagedView } from "../core/managed-endpoint-view.js";
import type { ManagedRentedNode } from "../core/managed-node.js";
import { refusalCode } from "../core/managed-ledger.js";
import { ManagedNodeCore, type NodeWords, type OnDemandNodeOptions } from "../core/managed-node-core.js";
import type { ManagedStatus } from "../core/managed-node.js";

const DAY_MS = 86_400_000;
/**
 * Jobs in a row that ended in ERROR, after which the node runs no new one until `pair rented
 * resume`: a job that fails as it comes up (a bad image, out of memory) would fail again, and each
 * new one bills its start-up minutes. One failure may be the hardware's: the next request retries.
 */
export const MAX_FAILED_JOBS = 2;

const JOB_WORDS: NodeWords = {
  unit: "job",
  stop: "cancel",
  stopping: "cancelling",
  exitStop: "cancel",
  paused: "its job is cancelled",
  exited: "its job is cancelled at sponsor exit",
};

/** What a job node is handed (its owner tag, `pair-<nodeId>-<node>`, is also a job label). */
export interface JobManagedNodeOptions extends OnDemandNodeOptions {
  readonly config: HuggingFaceJobNode;
  /** The Hub namespace the jobs run under (the token's user). */
  readonly namespace: string;
  readonly transport: JobsTransport;
  /** The HF token: the bearer of the sponsor's requests to the exposed port (never shown or logged). */
  readonly token: RevealableToken;
  /** Passed to every job as Job secrets, never as plain environment. */
  readonly secrets: Readonly<Record<string, RevealableToken>>;
  readonly probe: PortProbe;
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

export class JobManagedNode implements ManagedRentedNode {
  readonly name: string;
  readonly config: HuggingFaceJobNode;
  readonly #o: JobManagedNodeOptions;
  readonly #settings: JobNodeSettings;
  readonly #provider: HuggingFaceJobsProvider;
  readonly #core: ManagedNodeCore;
  #flavor: HfJobFlavor | undefined;
  /** Every flavor HF listed (read with the price): names the GPU of a job on another flavor too. */
  #flavors: readonly HfJobFlavor[] = [];
  #ready: { id: DeploymentId; address: string } | undefined;
  #creating: Promise<void> | undefined;
  /** `resume` re-arms a node whose window ended: jobs declared before this do not end its use. */
  #rearmedAtMs = 0;
  /** HF does not list the configured flavor: no job can start. */
  #flavorRefused = false;
  /** Why the configured flavor cannot run (it names the listed ones); kept apart from the last error, which a pass clears. */
  #flavorProblem: string | undefined;

  constructor(options: JobManagedNodeOptions) {
    this.#o = options;
    this.config = options.config;
    this.name = options.config.name;
    this.#settings = jobSettingsOf(options.config);
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
    this.#core = new ManagedNodeCore(options, {
      config: options.config,
      provider: this.#provider,
      account: options.namespace,
      policy: { maxActiveResources: 1, maxLifetimeMs: DAY_MS + 60 * 60_000 },
      capabilities: HF_JOB_CAPABILITIES,
      words: JOB_WORDS,
      settled: () => this.#creating,
      stoppable: () => this.#stoppable(),
    });
    this.#reserve();
    this.#core.catchUpLedger();
  }

  get controller(): HostingController {
    return this.#core.controller;
  }

  get #controller(): HostingController {
    return this.#core.controller;
  }

  /** Resolves once a create in flight has its answer (shutdown, tests). */
  async settled(): Promise<void> {
    await this.#creating;
  }

  /** One pass (joins a pass under way). Never throws. */
  tick(): Promise<void> {
    return this.#core.pass(async () => {
      // The price list failing must not stop the pass: reconciliation and the window, idle and
      // budget cancels still run (the reservation keeps the price it has, #reserve).
      const unpriced = await this.#price().then(
        () => undefined,
        (cause: unknown) =>
          `the Jobs hardware list (the flavor's price) could not be read: ${(cause as Error).message}`,
      );
      this.#reserve();
      if (this.#o.inFlight() > 0) this.#core.markActive();
      await this.#controller.reconcileOnce();
      await this.#checkReady();
      await this.#stops();
      // Reported as the pass's last error (an unconfirmed cancel stays until it is discharged).
      return unpriced;
    });
  }

  /** The window, idle and budget stops of this pass. */
  async #stops(): Promise<void> {
    const now = this.#o.clock.now().wallMs;
    for (const due of windowObligations(this.#controller.state, this.#windows(), now)) {
      this.#o.log(`rented node ${this.name}: its window ended: cancelling its job`);
      await this.#stop(due.id, due.reason);
    }
    const idleMs = this.config.lifecycle.idlePauseMs;
    if (this.#o.inFlight() === 0 && now - this.#core.lastActiveMs >= idleMs)
      for (const record of this.#running()) {
        this.#o.log(`rented node ${this.name}: idle for ${idleMs / 60_000} min: cancelling its job`);
        await this.#stop(record.id, "idle");
      }
    await this.#core.budgetStops((id, reason) => this.#stop(id, reason));
  }

  async #stop(id: DeploymentId, reason: StopReason): Promise<void> {
    if (this.#ready?.id === id) this.#ready = undefined;
    const stopped = await this.#controller.requireStop(id, reason);
    if (!stopped.ok) this.#core.lastError = `cancel (${reason}) refused: ${stopped.error.code}`;
  }

  /** Live records a pause or an exit cancels (not those cancelled already). */
  #stoppable(): DeploymentRecord[] {
    return liveRecords(this.#controller.state).filter((record) => record.phase !== "StopRequired");
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
    const core = this.#core as ManagedNodeCore | undefined;
    if (core === undefined) return names;
    for (const record of Object.values(core.controller.state.deployments))
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
    const failing = this.#failing();
    if (failing !== undefined) return { use: "never", why: failing };
    const latest = this.#latest();
    if (latest === undefined || latest.declaredAtMs < this.#rearmedAtMs) return { use: during };
    const use = jobRoutingUse(this.#windowOf(latest), this.#o.clock.now().wallMs, this.#settings);
    return use === "never"
      ? { use, why: `its batch window ended: pair rented resume ${this.name} opens a new one` }
      : { use };
  }

  /**
   * Why no job runs any more when the newest `MAX_FAILED_JOBS` jobs since the last resume all ended
   * in ERROR (read from SQLite's records: a restart keeps the refusal); undefined otherwise.
   */
  #failing(): string | undefined {
    // Routing asks on every request: one scan for the newest job; the sort only once it failed.
    const latest = this.#latest();
    if (latest === undefined || this.#endStatus(latest)?.toUpperCase() !== "ERROR") return undefined;
    const since = Object.values(this.#controller.state.deployments)
      .filter((record) => record.declaredAtMs >= this.#rearmedAtMs)
      .sort((a, b) => b.declaredAtMs - a.declaredAtMs)
      .slice(0, MAX_FAILED_JOBS);
    if (since.length < MAX_FAILED_JOBS) return undefined;
    if (!since.every((record) => this.#endStatus(record)?.toUpperCase() === "ERROR")) return undefined;
    const message = since[0]?.observed?.message;
    return (
      `its last ${MAX_FAILED_JOBS} jobs ended in ERROR${message === undefined ? "" : ` (${message})`}: ` +
      `no job runs until pair rented resume ${this.name}`
    );
  }

  /** The stage a job ended in: as last seen, else (after a restart) as its stop's evidence says. */
  #endStatus(record: DeploymentRecord): string | undefined {
    if (record.observed?.status !== undefined) return record.observed.status;
    const evidence = this.#controller.state.obligations[record.id]?.evidence;
    return evidence?.kind === "provider-reported-billing-ended" ? evidence.status : undefined;
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
    const refused = this.#core.admit(`paused by the user: no job runs until pair rented resume ${this.name}`);
    if (refused !== undefined) return { ok: false, error: refused };
    for (;;) {
      if (this.#ready !== undefined) return { ok: true, url: this.#ready.address };
      if (this.#creating === undefined && liveRecords(this.#controller.state).length === 0) {
        const failing = this.#failing();
        if (failing !== undefined)
          return { ok: false, error: this.#error("rented_node_ineligible", failing) };
        // Registered before the first await: a concurrent caller sees the start and only waits.
        this.#creating = this.#start().finally(() => (this.#creating = undefined));
        await this.#creating;
        const failed = this.#core.lastError;
        if (failed !== undefined && liveRecords(this.#controller.state).length === 0)
          return { ok: false, error: this.#error("rented_node_ineligible", failed) };
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
      this.#core.lastError = declared.error.message;
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
    const authorization = this.#core.authorize();
    if (!authorization.ok)
      return {
        ok: false,
        error:
          refusalCode(authorization.error.code) === "budget_exceeded"
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
    this.#core.markActive();
    const started = await this.#controller.start(id);
    this.#o.log(
      `rented node ${this.name}: running a ${this.#settings.flavor} job for ${this.#settings.repo}`,
    );
    if (!started.ok) {
      this.#core.lastError = `the job could not be run: ${started.error.code}`;
      return { ok: false, error: this.#error("upstream_error", this.#core.lastError) };
    }
    this.#core.lastError = undefined;
    return { ok: true };
  }

  /** Refused for money: the node reached a cap (`budget_exceeded`), until the window resets. */
  budgetRefusal(): PairError | undefined {
    return this.#core.budgetRefusal();
  }

  /** `pair rented pause`: cancel its job and run none until `resume`. */
  pause(reason: StopReason = "user-request"): Promise<ManagedAction> {
    return this.#core.pause(reason, () => (this.#ready = undefined));
  }

  /** `pair rented delete`: PAIR runs a job per use, so there is nothing to delete; its job is cancelled. */
  delete(): Promise<ManagedAction> {
    return this.pause("user-request");
  }

  /** A cold node is not paused (a request starts a job); a user's pause holds until resume. */
  wakeable(): boolean {
    return false;
  }

  priceMicroUsdPerHour(): number | undefined {
    return this.#flavor === undefined ? undefined : jobRateMicroUsdPerHour(this.#flavor, true);
  }

  /** `pair rented resume`: jobs run on demand again, in a new window (refused while over budget). */
  resume(): ManagedAction {
    const resumed = this.#core.resume();
    if (resumed.ok) this.#rearmedAtMs = this.#o.clock.now().wallMs + 1;
    return resumed;
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
      state: this.#core.statusState(job),
      models: [this.#settings.repo],
      gpu: this.#gpu(),
      lastError: this.#core.lastError,
      ...this.#providerState(),
    };
  }

  /**
   * The GPU its job runs on: the flavor HF reports for the newest job (the configured one before
   * any), as HF's hardware list names its accelerator and how many ("L4 ×1").
   */
  #gpu(): string {
    const flavor = this.#latest()?.observed?.hardware ?? this.#settings.flavor;
    return jobGpuLabel(
      flavor,
      this.#flavors.find((f) => f.name === flavor),
    );
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
    const [record] = this.#running();
    const window = record === undefined ? undefined : this.#windows().get(record.id);
    return {
      ...this.#core.view(this.priceMicroUsdPerHour(), this.config.lifecycle.idlePauseMs),
      job_state: this.#jobState(),
      flavor: this.#settings.flavor,
      window_ends_at: window === undefined ? null : new Date(window.endMs).toISOString(),
    };
  }

  /**
   * Sponsor exit: cancel its job and wait, up to `exit_timeout_s`, for a terminal stage. Returns the
   * obligations still open (they stay in SQLite for the next start).
   */
  close(): Promise<number> {
    return this.#core.close();
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
    this.#flavors = flavors;
    this.#flavor = flavors.find((f) => f.name === this.#settings.flavor);
    this.#flavorRefused = this.#flavor === undefined;
    this.#flavorProblem =
      this.#flavor === undefined
        ? `flavor ${this.#settings.flavor} is not listed by Hugging Face Jobs ` +
          `(listed: ${flavors.map((f) => f.name).join(", ")}): fix job.flavor`
        : undefined;
    if (this.#flavorProblem !== undefined) this.#core.lastError = this.#flavorProblem;
  }

  /**
   * Open the node's reservation at the flavor's rate + the port surcharge. Until the hardware list
   * is read (after a restart, a job may be running) the price is unknown: the reservation keeps the
   * one it has (0 only for a new one), never dropping to 0 under a running job.
   */
  #reserve(): void {
    this.#core.reserve(this.#flavor === undefined ? undefined : jobRateMicroUsdPerHour(this.#flavor, true));
  }

  #error(code: PairError["code"], message: string): PairError {
    return this.#core.error(code, message);
  }
}
