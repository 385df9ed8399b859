/**
 * One managed Runpod rented node (`provider: runpod` with a `pod:` section): pods made on demand by a
 * RunpodPodSupervisor over a HostingController and its own SQLite store, every hosting event fed to
 * the sponsor's shared ledger (per-second accrual at the placed GPU type's price plus disk storage).
 * - Before any pod is placed it is priced from the GPU catalogue (read at start, again on each pass
 *   while unknown): the most expensive of its GPU types, so the ledger can refuse the first pod up
 *   front; a pod's own `cost` replaces that once seen. No catalogue: price 0 until a pod, and a warning.
 * - `prepare()` acquires a serving pod (the first caller creates, concurrent callers wait on the same
 *   start, never a second create) and drives passes until it serves or the caller's budget ends.
 * - `tick()`: stream leases for requests in flight, readiness, crash recovery, idle reaping, orphan
 *   sweep and reconciliation (the supervisor), then the ledger's budget stops.
 * - pause = terminate (only TERMINATED ends billing) and refuse new pods; resume allows them again.
 * - `close()` terminates every pod it owns at sponsor exit and waits, bounded, for the evidence; what
 *   stays unconfirmed stays an open obligation in SQLite, reconciled at the next start.
 * What any on-demand node does (ledger feed, reservation, budget stops, pause/resume, exit stops) is
 * its ManagedNodeCore; this file keeps the Runpod-specific part (prices, stream leases, supervisor).
 * Must not know: HTTP routing, the CLI, where keys are stored (it is handed them), real timers.
 */

import {
  liveRecords,
  type ComputeAuthorization,
  type DeploymentSpec,
  type HostingController,
  type StopReason,
} from "@pair/provision";
import {
  RUNPOD_CAPABILITIES,
  RUNPOD_PROVIDER,
  RunpodProvider,
  runpodModelSettings,
  type ProxyUrlOf,
  type ReadinessProbe,
  type RunpodModel,
  type RunpodTransport,
} from "@pair/runpod";
import { RunpodPodSupervisor, type StreamLease } from "./pod-supervisor.js";
import type { Redacted } from "@pair/cluster";
import type { RunpodPodNode } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { podGpuLabel } from "../core/gpu-label.js";
import type { ManagedAction, ManagedView } from "../core/managed-endpoint-view.js";
import { reservationIdOf } from "../core/managed-ledger.js";
import type { ManagedRentedNode } from "../core/managed-node.js";
import { ManagedNodeCore, type NodeWords, type OnDemandNodeOptions } from "../core/managed-node-core.js";
import type { ManagedStatus } from "../core/managed-node.js";
import { podPriceFromCatalog, storageMicroUsdPerHour } from "./runpod-catalog-price.js";
import { PriceWatchingTransport, type PodPrice } from "./runpod-price-watch.js";

const USD = 1_000_000;
const DAY_MS = 86_400_000;

const POD_WORDS: NodeWords = {
  unit: "pod",
  stop: "terminate",
  stopping: "terminating",
  exitStop: "termination",
  paused: "its pods are terminated",
  exited: "every pod terminated at sponsor exit",
};

/** What a pod node is handed. */
export interface RunpodPodNodeOptions extends OnDemandNodeOptions {
  readonly config: RunpodPodNode;
  readonly transport: RunpodTransport;
  /** Readiness with the vLLM key (`GET /v1/models` through the pod's proxy). */
  readonly probe: ReadinessProbe;
  /** The sponsor's copy of the vLLM key: the bearer token of its requests to the pod. */
  readonly vllmKey: Redacted<string>;
  readonly proxyUrl?: ProxyUrlOf;
}

/** The node detail of a Runpod pod node: ManagedView plus the pod's state and GPU (type × count, as placed). */
export interface RunpodPodView extends ManagedView {
  readonly pod_state: "cold" | "starting" | "running" | "stopping";
  readonly gpu: string | null;
  /** Why `usd_per_hour` is unknown before the first pod (the GPU catalogue could not be read), or null. */
  readonly price_warning: string | null;
}

/** The GPU a pod node asks for before any pod says what it got: its first GPU type × `gpu_count`. */
function requestedGpu(config: RunpodPodNode): string | undefined {
  const first = config.pod.gpuTypes[0];
  return first === undefined ? undefined : podGpuLabel({ id: first, count: config.pod.gpuCount });
}

/** The model's RunpodModel, from the config's `pod:` section. */
export function runpodModelOf(config: RunpodPodNode): RunpodModel {
  const p = config.pod;
  return {
    gpuTypes: p.gpuTypes,
    gpuCount: p.gpuCount,
    cloudType: p.cloudType,
    image: p.image,
    containerDiskGb: p.containerDiskGb,
    volumeGb: p.volumeGb,
    ...(p.networkVolumeId === undefined ? {} : { networkVolumeId: p.networkVolumeId }),
    dataCenterIds: p.dataCenterIds,
    vllmModel: p.vllmModel,
    vllmArgs: p.vllmArgs,
    port: p.port,
    apiKeySecret: p.apiKeySecret,
    startupDeadlineMs: p.startupDeadlineMs,
    idleTimeoutMs: p.idleTimeoutMs,
    crashRestartLimit: p.crashRestartLimit,
    crashWindowMs: p.crashWindowMs,
  };
}

export class RunpodPodManagedNode implements ManagedRentedNode {
  readonly name: string;
  readonly config: RunpodPodNode;
  readonly #o: RunpodPodNodeOptions;
  readonly #model: string;
  readonly #core: ManagedNodeCore;
  readonly #supervisor: RunpodPodSupervisor;
  readonly #leases: StreamLease[] = [];
  /** What the placed pod reports (or the ledger remembered from one): it wins over the catalogue. */
  #priceMicroUsdPerHour: number | undefined;
  /** The catalogue's cautious price (most expensive GPU type), before any pod. */
  #catalogMicroUsdPerHour: number | undefined;
  #catalogRead = false;
  #priceWarning: string | undefined;
  /** The ledger's last refusal of a new pod was for money. */
  #budgetRefusedUntil: { window: "day" | "month"; untilMs: number } | undefined;
  #gpu: string | undefined;

  constructor(options: RunpodPodNodeOptions) {
    this.#o = options;
    const config = options.config;
    this.config = config;
    this.name = config.name;
    this.#model = config.pod.model;
    const account = config.name;
    const watched = new PriceWatchingTransport(options.transport, (podId, price, created) =>
      this.#priced(podId, price, created),
    );
    const provider = new RunpodProvider({
      transport: watched,
      account,
      clock: options.clock,
      ownerTag: options.ownerTag,
      ...(options.proxyUrl === undefined ? {} : { proxyUrl: options.proxyUrl }),
    });
    this.#core = new ManagedNodeCore(options, {
      config,
      provider,
      account,
      // A crash-looping pod is being terminated while its replacement starts.
      policy: { maxActiveResources: 2, maxLifetimeMs: 30 * DAY_MS },
      capabilities: RUNPOD_CAPABILITIES,
      words: POD_WORDS,
      settled: () => this.#supervisor.settled(),
      stoppable: () => liveRecords(this.#controller.state),
    });
    this.#core.catchUpLedger();
    const spec: DeploymentSpec = {
      provider: RUNPOD_PROVIDER,
      account,
      name: `pair-${config.name}`,
      model: this.#model,
      hardware: config.pod.gpuTypes[0] ?? "",
      settings: runpodModelSettings(runpodModelOf(config)),
    };
    this.#supervisor = new RunpodPodSupervisor({
      controller: this.#controller,
      provider,
      clock: options.clock,
      probe: options.probe,
      specs: [spec],
      authorize: () => this.#authorize(),
    });
    const reservation = options.ledger.state.reservations[reservationIdOf(this.name)];
    if (reservation?.pricing.kind === "hourly" && reservation.pricing.priceMicroUsdPerHour > 0)
      this.#priceMicroUsdPerHour = reservation.pricing.priceMicroUsdPerHour;
    this.#reserve();
  }

  get controller(): HostingController {
    return this.#core.controller;
  }

  get #controller(): HostingController {
    return this.#core.controller;
  }

  get supervisor(): RunpodPodSupervisor {
    return this.#supervisor;
  }

  /** One pass (joins a pass under way). Never throws. */
  tick(): Promise<void> {
    return this.#core.pass(async () => {
      await this.#readCatalog();
      this.#reserve();
      this.#holdStreams();
      await this.#supervisor.tick();
      await this.#core.budgetStops((id, reason) => this.#controller.requireStop(id, reason));
      return undefined;
    });
  }

  /** One lease per request in flight: the supervisor never reaps a pod while one is open. */
  #holdStreams(): void {
    const open = this.#o.inFlight();
    if (open > 0) this.#core.markActive();
    while (this.#leases.length < open) {
      const lease = this.#supervisor.openStream(this.#model);
      if (lease === undefined) break;
      this.#leases.push(lease);
    }
    while (this.#leases.length > open) this.#leases.pop()?.release();
  }

  /**
   * A serving pod's proxy base URL (without /v1), starting one when none runs; waits within the
   * caller's signal (its cold-start budget), driving passes every `pollMs`.
   */
  async prepare(signal: AbortSignal): Promise<{ ok: true; url: string } | { ok: false; error: PairError }> {
    const refused = this.#core.admit(
      `paused by the user: no pod is started until pair rented resume ${this.name}`,
    );
    if (refused !== undefined) return { ok: false, error: refused };
    const acquired = this.#supervisor.acquire(this.#model);
    let result = await Promise.race([acquired, Promise.resolve(undefined)]);
    void acquired.then((r) => (result = r));
    while (result === undefined) {
      if (!(await this.#o.sleep(this.#o.pollMs, signal)))
        return {
          ok: false,
          error: this.#error("cold_start_timeout", "no pod served within its cold-start budget"),
        };
      await this.tick();
      await Promise.race([acquired, Promise.resolve(undefined)]);
    }
    if (result.kind === "failed") {
      const refused = this.#budgetRefusedUntil;
      if (refused !== undefined)
        return {
          ok: false,
          error: this.#error(
            "budget_exceeded",
            `a pod at ${this.#usdPerHour() ?? "?"} $/h does not fit its ` +
              `${refused.window === "day" ? "daily" : "monthly"} budget; no pod until ` +
              `${new Date(refused.untilMs).toISOString()}: raise budget.usd_per_${refused.window} or wait`,
          ),
        };
      this.#core.lastError = result.reason;
      return { ok: false, error: this.#error("rented_node_ineligible", result.reason) };
    }
    return { ok: true, url: result.address };
  }

  /** Refused for money: the node reached a cap (`budget_exceeded`), until the window resets. */
  budgetRefusal(): PairError | undefined {
    return this.#core.budgetRefusal();
  }

  /** `pair rented pause`: terminate every pod it owns and start none until `resume`. */
  pause(reason: StopReason = "user-request"): Promise<ManagedAction> {
    return this.#core.pause(reason);
  }

  /** `pair rented resume`: pods are made on demand again (refused while over budget). */
  resume(): ManagedAction {
    return this.#core.resume();
  }

  /** `pair rented delete`: PAIR makes a pod per use, so there is nothing to delete; its pods are terminated. */
  delete(): Promise<ManagedAction> {
    return this.pause("user-request");
  }

  /** A cold node is not paused (a request makes a pod); a user's pause holds until resume. */
  wakeable(): boolean {
    return false;
  }

  priceMicroUsdPerHour(): number | undefined {
    return this.#price();
  }

  /** Pods are made per use from the config: never by `pair rented create`. */
  created(): null {
    return null;
  }

  /** The configured routing use holds. */
  routingUse(): undefined {
    return undefined;
  }

  /** For routing and views: the pod's state as PAIR shows it. */
  status(): ManagedStatus {
    const pod = this.#podState();
    return {
      state: this.#core.statusState(pod),
      models: [this.#model],
      // Before any pod reported its GPU: what the config asks for first.
      gpu: this.#gpu ?? requestedGpu(this.#o.config),
      lastError: this.#core.lastError,
    };
  }

  /** The bearer token of the sponsor's requests to the pod (never shown, never logged). */
  headers(): Readonly<Record<string, string>> {
    return { authorization: `Bearer ${this.#o.vllmKey.reveal()}` };
  }

  view(): RunpodPodView {
    return {
      ...this.#core.view(this.#price(), this.#o.config.pod.idleTimeoutMs),
      pod_state: this.#podState(),
      gpu: this.#gpu ?? null,
      price_warning: this.#priceWarning ?? null,
    };
  }

  /**
   * Sponsor exit: terminate every pod it owns and wait, up to `exit_timeout_s`, for TERMINATED or
   * absence. Returns the obligations still open (they stay in SQLite for the next start).
   */
  async close(): Promise<number> {
    for (const lease of this.#leases.splice(0)) lease.release();
    return await this.#core.close();
  }

  #podState(): RunpodPodView["pod_state"] {
    const s = this.#supervisor.state(this.#model);
    return s === "ready" ? "running" : s;
  }

  /** The price the ledger charges: the placed pod's, else the catalogue's cautious one. */
  #price(): number | undefined {
    return this.#priceMicroUsdPerHour ?? this.#catalogMicroUsdPerHour;
  }

  #usdPerHour(): number | undefined {
    const micro = this.#price();
    return micro === undefined ? undefined : Math.round(micro) / USD;
  }

  /**
   * Price the node from the GPU catalogue: once at start, then on each pass while neither the
   * catalogue nor a pod has given a price. A failure keeps today's behaviour (price 0 until a pod)
   * and says so in the view and the log (once per distinct reason).
   */
  async #readCatalog(): Promise<void> {
    if (
      this.#catalogRead &&
      (this.#catalogMicroUsdPerHour !== undefined || this.#priceMicroUsdPerHour !== undefined)
    )
      return;
    this.#catalogRead = true;
    let warning: string | undefined;
    try {
      const priced = podPriceFromCatalog(await this.#o.transport.listGpuCatalog(), this.#o.config.pod);
      if (priced.ok) this.#catalogMicroUsdPerHour = priced.microUsdPerHour;
      else warning = priced.reason;
    } catch (cause) {
      warning = `the GPU catalogue could not be read (${(cause as Error).message})`;
    }
    if (warning === undefined) {
      this.#priceWarning = undefined;
      return;
    }
    warning += ": the price is unknown until a pod runs, so the budget cannot refuse the first pod up front";
    if (warning !== this.#priceWarning) this.#o.log(`rented node ${this.name}: ${warning}`);
    this.#priceWarning = warning;
  }

  /**
   * Open the node's reservation (the catalogue's price until a pod's is known); keep it in step. No
   * price known to this process yet (after a restart): the reservation keeps the one it has (a new
   * one opens at 0), never dropping to 0 under a running pod.
   */
  #reserve(): void {
    this.#core.reserve(this.#price());
  }

  /** Permission to spend for one more pod, named by the id its declaration will take. */
  #authorize(): ComputeAuthorization | undefined {
    if (this.#core.pausedBy === "user-request") return undefined;
    this.#reserve();
    const authorization = this.#core.authorize();
    if (authorization.ok) {
      this.#budgetRefusedUntil = undefined;
      if (this.#core.pausedBy === "budget-exceeded") this.#core.pausedBy = undefined;
      return authorization.value;
    }
    const e = authorization.error;
    this.#budgetRefusedUntil =
      e.code === "budget-exceeded" ? { window: e.window, untilMs: e.untilMs } : undefined;
    this.#core.lastError = `the ledger refused a new pod: ${authorization.error.code}`;
    return undefined;
  }

  /** A pod of ours reported a price: GPU price × count plus its disks, per hour. */
  #priced(podId: string, price: PodPrice, created: boolean): void {
    const ours =
      created || Object.values(this.#controller.state.deployments).some((d) => d.key?.incarnation === podId);
    if (!ours) return;
    const micro = Math.round(price.usdPerHour * USD + storageMicroUsdPerHour(this.#o.config.pod));
    this.#gpu = price.gpu === undefined ? this.#gpu : podGpuLabel(price.gpu);
    if (micro === this.#priceMicroUsdPerHour) return;
    this.#priceMicroUsdPerHour = micro;
    this.#reserve();
  }

  #error(code: PairError["code"], message: string): PairError {
    return this.#core.error(code, message);
  }
}
