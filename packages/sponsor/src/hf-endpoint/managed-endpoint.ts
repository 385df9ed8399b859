/**
 * One managed Hugging Face endpoint (`lifecycle.managed: true`): a HostingController over its own
 * SQLite store, driven through the adopting provider, with every hosting event fed to the sponsor's
 * ledger. Each billing spell is one deployment record: a contract resume of its key under a ledger
 * authorization, its stop obligation open until evidence (paused or gone). On each `tick()` it
 * reconciles with the listing, enforces the budget (the ledger's stops), adopts the endpoint when it
 * bills with no record, and pauses it after `idle_pause_min` with no PAIR workload (never while one is
 * in flight). `prepare()` wakes it for a request and looks at it through the controller until it
 * serves, so every status a wake reads reaches the ledger too; `close()` pauses it at sponsor exit,
 * bounded by `exit_timeout_s`; what stays unconfirmed stays open in SQLite for the next start.
 * Its budget refusal, adoption, never-served pause and delete are endpoint-actions.ts.
 * Must not know: HTTP routing, the CLI, where the token is stored, real timers (the sleep seam).
 */

import { resumeAllowed, type EndpointsTransport, type HuggingFaceEndpointsProvider } from "@pair/huggingface";
import {
  liveRecords,
  openObligations,
  type Clock,
  type DeploymentRecord,
  type HostingController,
  type HostingStore,
  type StopReason,
} from "@pair/provision";
import type { HuggingFaceEndpointNode } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { AdoptingProvider } from "./adopting-provider.js";
import {
  adoptEndpoint,
  createDeclared,
  createdInfo,
  declareCreate,
  EndpointPrice,
} from "./endpoint-create.js";
import { refusalCode, type ManagedLedger } from "../core/managed-ledger.js";
import type { ServeCheck } from "../core/models-probe.js";
import type { ManagedRentedNode } from "../core/managed-node.js";
import { ManagedNodeCore, type NodeWords, type PresetIdSource } from "../core/managed-node-core.js";
import { ServeGate } from "./serve-gate.js";
import {
  adoptIfBilling,
  budgetRefusal,
  deleteIncarnation,
  stopIfNeverServed,
  type EndpointContext,
} from "./endpoint-actions.js";
import {
  type CreatedInfo,
  type ManagedAction,
  type ManagedView,
  type NewEndpointSpec,
} from "../core/managed-endpoint-view.js";

export type {
  CreatedInfo,
  ManagedAction,
  ManagedView,
  NewEndpointSpec,
} from "../core/managed-endpoint-view.js";

export type { PresetIdSource } from "../core/managed-node-core.js";

export interface ManagedEndpointOptions {
  readonly config: HuggingFaceEndpointNode;
  readonly transport: EndpointsTransport;
  readonly provider: HuggingFaceEndpointsProvider;
  readonly store: HostingStore;
  readonly ledger: ManagedLedger;
  readonly clock: Clock;
  readonly ids: PresetIdSource;
  readonly controllerId: string;
  readonly ownerTag: string;
  readonly timeZone: string;
  /** PAIR requests in flight on this node now (streams included). */
  readonly inFlight: () => number;
  /** Resolves true after `ms`, false when `signal` aborts first (the timer seam). */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
  /** How often a wake or an exit pause looks at the endpoint again. */
  readonly pollMs: number;
  /** Time between the manager's passes (a budget stop waits up to this for the pass issuing it). */
  readonly passIntervalMs: number;
  /** Whether the engine at a data-plane URL lists one of `models` on `/v1/models` (never throws). */
  readonly servesModel: (url: string, models: readonly string[]) => Promise<ServeCheck>;
  readonly log: (line: string) => void;
}

const HOUR_MS = 3_600_000;
/** How the core's log lines and errors name an endpoint's stop: a pause. */
const ENDPOINT_WORDS: NodeWords = {
  unit: "endpoint",
  stop: "pause",
  stopping: "pausing",
  exitStop: "the pause was",
  paused: "it is paused",
  exited: "paused at sponsor exit",
  budgetStop: "pausing",
};
const NEVER_SERVED = "it was paused because it never served its model: pair rented resume to try again";

export class ManagedEndpoint implements ManagedRentedNode {
  readonly name: string;
  readonly #o: ManagedEndpointOptions;
  /** Controller, ledger feed, reservation, pause state, last problem and the view's common fields. */
  readonly #core: ManagedNodeCore;
  readonly #price: EndpointPrice;
  /** What the create steps and the actions (endpoint-create.ts, endpoint-actions.ts) read of this node. */
  readonly #steps: EndpointContext;
  #wake: Promise<ManagedAction> | undefined;
  #observing: Promise<unknown> | undefined;
  /** The detail of the last create answer that was not a creation (HF's message, or why it was lost). */
  #createDetail: string | undefined;
  /** Requests reach the live spell only once its engine lists the model on `/v1/models`. */
  readonly #gate: ServeGate;

  constructor(options: ManagedEndpointOptions) {
    this.#o = options;
    this.name = options.config.name;
    const adopting = new AdoptingProvider(options.provider, options.transport);
    this.#core = new ManagedNodeCore(options, {
      config: options.config,
      provider: adopting,
      account: options.config.endpoint.namespace,
      policy: { maxActiveResources: 1, maxLifetimeMs: 365 * 24 * HOUR_MS },
      capabilities: options.provider.capabilities,
      words: ENDPOINT_WORDS,
      settled: () => undefined,
      stoppable: () => {
        const live = this.#live();
        return live === undefined ? [] : [live];
      },
      controllerId: options.controllerId,
      requeue: { busyMs: 10_000, idleMs: 60_000, stopRetryMs: 30_000 },
      onEvent: (event) => {
        if (event.type === "CreateOutcomeUncertain") this.#createDetail = event.detail;
      },
    });
    this.#gate = new ServeGate({
      config: options.config,
      servesModel: options.servesModel,
      openedAtMs: this.#core.lastActiveMs,
      error: (code, message) => this.#core.error(code, message),
    });
    this.#price = new EndpointPrice(this.#core, options.transport, options.config, options.log);
    this.#steps = {
      core: this.#core,
      config: options.config,
      transport: options.transport,
      price: this.#price,
      clock: options.clock,
      log: options.log,
      live: () => this.#live(),
      createDetail: () => this.#createDetail,
      refusedCode: () => adopting.lastRefusedCode,
      name: this.name,
      provider: options.provider,
      ledger: options.ledger,
      gate: this.#gate,
    };
    this.#core.catchUpLedger();
  }

  get controller(): HostingController {
    return this.#core.controller;
  }

  /** Paused, a request may wake it (`lifecycle.wake_on_request`). */
  wakeable(): boolean {
    return this.#o.config.lifecycle.wakeOnRequest;
  }

  /** Its state comes from the probe (the Endpoints API and its `/v1/models`), not from here. */
  status(): undefined {
    return undefined;
  }

  priceMicroUsdPerHour(): number | undefined {
    return this.#price.microUsdPerHour;
  }

  /** Requests carry the node's own `credential`. */
  headers(): undefined {
    return undefined;
  }

  /** The configured routing use holds. */
  routingUse(): undefined {
    return undefined;
  }

  /** `pair rented create`, first step: reservation, authorization, declaration (endpoint-create.ts). */
  declareCreate(spec: NewEndpointSpec): { ok: true; id: string } | { ok: false; error: PairError } {
    return declareCreate(this.#steps, spec);
  }

  /** `pair rented create`, second step: the create itself (endpoint-create.ts). */
  create(id: string): Promise<ManagedAction> {
    return createDeclared(this.#steps, id);
  }

  /** When PAIR created this node's endpoint (the first create declared, from SQLite), or null. */
  created(): CreatedInfo | null {
    return createdInfo(this.#core.controller.state, this.#o.clock.now().wallMs);
  }

  /** One pass: reconcile, budget, adoption, idle. Never throws. */
  async tick(): Promise<void> {
    try {
      if (!(await this.#price.ensure())) return;
      await this.#observe();
      await this.#core.budgetStops((id, reason) => this.#core.controller.requireStop(id, reason));
      const live = this.#live();
      if (live === undefined) {
        await adoptIfBilling(this.#steps);
        return;
      }
      if (await stopIfNeverServed(this.#steps, live)) return;
      const now = this.#o.clock.now().wallMs;
      if (this.#o.inFlight() > 0) this.#core.lastActiveMs = now;
      else if (
        live.phase === "Active" &&
        live.observed?.status !== "scaledToZero" &&
        now - this.#core.lastActiveMs >= this.#o.config.lifecycle.idlePauseMs
      ) {
        this.#core.pausedBy = "idle";
        this.#o.log(
          `rented node ${this.name}: no PAIR workload for ${this.#o.config.lifecycle.idlePauseMs / 60_000} min: pausing`,
        );
        await this.#core.controller.requireStop(live.id, "idle");
      }
    } catch (cause) {
      this.#core.lastError = (cause as Error).message;
    }
  }

  /**
   * Make the endpoint ready for a request: mark activity, wake it when paused (within the caller's
   * signal: the cold-start budget) and tell its data-plane base URL (without /v1), or why not.
   */
  async prepare(signal: AbortSignal): Promise<{ ok: true; url: string } | { ok: false; error: PairError }> {
    this.#core.lastActiveMs = this.#o.clock.now().wallMs;
    const refused = this.budgetRefusal();
    if (refused !== undefined) return { ok: false, error: refused };
    const ready = await this.#gate.servable(this.#live());
    if (ready !== undefined) return "url" in ready ? { ok: true, url: ready.url } : { ok: false, ...ready };
    if (this.#core.pausedBy === "unhealthy") return { ok: false, error: this.#neverServed() };
    if (!this.#o.config.lifecycle.wakeOnRequest && this.#live() === undefined)
      return { ok: false, error: this.#pausedError() };
    const woke = await (this.#wake ??= this.resume("wake").finally(() => {
      this.#wake = undefined;
    }));
    if (!woke.ok) return woke;
    for (;;) {
      // Each look goes through the controller, so every status it reads (idle ones too) reaches the
      // ledger as an observation: it sees billing begin within one poll, and starts the run at the
      // idle look before it (the cautious start, docs/ledger.md).
      await this.#observe().catch(() => undefined);
      const servable = await this.#gate.servable(this.#live());
      if (servable !== undefined)
        return "url" in servable ? { ok: true, url: servable.url } : { ok: false, ...servable };
      const budget = this.budgetRefusal();
      if (budget !== undefined) return { ok: false, error: budget };
      if (!(await this.#o.sleep(this.#o.pollMs, signal)))
        return {
          ok: false,
          error: {
            code: "cold_start_timeout",
            message:
              `rented node ${this.name} did not come up within its cold-start budget` +
              (this.#gate.notServing === undefined ? "" : ` (${this.#gate.notServing})`),
            node: this.name,
          },
        };
    }
  }

  /**
   * Refused for money: the node reached a cap (`budget_exceeded`), until the window resets; or it is
   * paused and its wake would cost more than is left (the check `resume` makes): the view and the
   * router ask this one function, so they agree.
   */
  budgetRefusal(): PairError | undefined {
    return budgetRefusal(this.#steps);
  }

  /** `pair rented resume` and wake on request: refused while the budget is exhausted. */
  async resume(why: "user" | "wake" = "user"): Promise<ManagedAction> {
    if (!(await this.#price.ensure()))
      return {
        ok: false,
        error: this.#core.error("rented_node_ineligible", this.#core.lastError ?? "not ready"),
      };
    if (why === "wake" && this.#core.pausedBy === "unhealthy")
      return { ok: false, error: this.#neverServed() };
    const allowed = resumeAllowed(this.#o.ledger.state, this.name, this.#o.clock.now().wallMs);
    if (!allowed.ok)
      return {
        ok: false,
        error: this.#core.error(refusalCode(allowed.error.code), allowed.error.message),
      };
    this.#core.lastActiveMs = this.#o.clock.now().wallMs;
    if (why === "user") this.#core.resumedAtMs = this.#core.lastActiveMs;
    if (this.#live() !== undefined) {
      this.#core.pausedBy = undefined;
      return { ok: true };
    }
    this.#o.log(`rented node ${this.name}: ${why === "wake" ? "waking for a request" : "resuming"}`);
    const resumed = await adoptEndpoint(this.#steps);
    if (resumed.ok) this.#core.pausedBy = undefined;
    return resumed;
  }

  /** `pair rented pause`: pause through the contract (the obligation closes on evidence). */
  async pause(reason: StopReason = "user-request"): Promise<ManagedAction> {
    const live = this.#live();
    if (live === undefined) return { ok: true };
    this.#core.pausedBy = reason;
    const failuresBefore = this.#core.stopFailures;
    const stopped = await this.#core.controller.requireStop(live.id, reason);
    if (!stopped.ok)
      return { ok: false, error: this.#core.error("upstream_error", `pause refused: ${stopped.error.code}`) };
    // Required, sent, and not confirmed (refused, lost, or accepted while still billed): say so.
    if (this.#core.stopFailures !== failuresBefore)
      return {
        ok: false,
        error: this.#core.error("upstream_error", this.#core.lastError ?? "stop unconfirmed"),
      };
    return { ok: true };
  }

  /** `pair rented delete`: pause (closing the obligation), then delete that exact incarnation. */
  async delete(): Promise<ManagedAction> {
    const paused = await this.pause("user-request");
    return paused.ok ? deleteIncarnation(this.#steps) : paused;
  }

  /**
   * Sponsor exit: pause every live spell and wait, up to `exitTimeoutMs`, for evidence. Returns the
   * obligations still open (they stay in SQLite for the next start).
   */
  async close(): Promise<number> {
    if (!this.#o.config.lifecycle.pauseOnSponsorExit) return this.#openCount();
    const live = this.#live();
    if (live !== undefined) {
      this.#core.pausedBy = "sponsor-exit";
      await this.#core.controller.requireStop(live.id, "sponsor-exit").catch(() => undefined);
    }
    const deadline = this.#o.clock.now().monoMs + this.#o.config.lifecycle.exitTimeoutMs;
    while (this.#openCount() > 0 && this.#o.clock.now().monoMs < deadline) {
      await this.#o.sleep(this.#o.pollMs);
      await this.#observe().catch(() => undefined);
    }
    const open = this.#openCount();
    if (open > 0)
      this.#o.log(
        `rented node ${this.name}: the pause was not confirmed within ${this.#o.config.lifecycle.exitTimeoutMs / 1000} s; ` +
          "it stays an open obligation and is reconciled at the next start",
      );
    else this.#o.log(`rented node ${this.name}: paused at sponsor exit`);
    return open;
  }

  view(): ManagedView {
    const idlePauseMs = this.#o.config.lifecycle.idlePauseMs;
    return this.#core.view(this.#price.microUsdPerHour, idlePauseMs, this.budgetRefusal() !== undefined);
  }

  #openCount(): number {
    return openObligations(this.#core.controller.state).length;
  }

  #live(): DeploymentRecord | undefined {
    return liveRecords(this.#core.controller.state).find((d) => d.slot.name === this.#o.config.endpoint.name);
  }

  /** One reconciliation pass (joins one under way): lists the endpoint, feeding what it saw to the ledger. */
  #observe(): Promise<unknown> {
    this.#observing ??= this.#core.controller.reconcileOnce().finally(() => {
      this.#observing = undefined;
    });
    return this.#observing;
  }

  #neverServed(): PairError {
    return this.#core.error("rented_node_ineligible", this.#core.lastError ?? NEVER_SERVED);
  }

  #pausedError(): PairError {
    return this.#core.error(
      "rented_node_paused",
      `rented node ${this.name} is paused and wake on request is off: pair rented resume ${this.name}`,
    );
  }
}
