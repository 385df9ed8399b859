/**
 * The sponsor's spending ledger for managed rented nodes: the pure ledger (`@pair/ledger`) made durable
 * in SQLite. Every input is decided on the last committed state and committed with compare-and-set
 * (reloaded and decided again on a conflict); the commands it returns (budget stops) are handed back
 * to the caller. One reservation per managed node (`rented:<name>`), opened once and kept in step with
 * the config's caps and the provider's price.
 * Must not know: the hosting contract's shell, HTTP, timers, how nodes are routed to.
 */

import {
  decide,
  emptyLedgerState,
  issuedAuthorization,
  spendOf,
  spendSeries,
  type SeriesWindow,
  type SpendPoint,
  stopLeadMsFor,
  type Budget,
  type LedgerCommand,
  type LedgerDecision,
  type LedgerInput,
  type LedgerRefusal,
  type LedgerState,
  type LedgerStore,
  type NodeSpend,
} from "@pair/ledger";
import type { Clock, ComputeAuthorization, ProviderCapabilities, Result } from "@pair/provision";
import { err, ok } from "@pair/provision";
import type { RentedBudget } from "../config/index.js";

const MAX_CONFLICT_RETRIES = 3;
/** The deployment id of an authorization asked and never committed (`startRefusal`). */
const START_CHECK_ID = "pair-start-check";

/** The reservation id of a managed node. */
export function reservationIdOf(node: string): string {
  return `rented:${node}`;
}

/**
 * The ledger's budget of a managed node: the config's caps (none for `unlimited: true`), counted in
 * `timeZone`, its stops issued early enough to land before the billed unit that would cross a cap
 * (the provider's stop latency plus the wait for the pass that issues them).
 */
export function ledgerBudget(
  budget: RentedBudget,
  timeZone: string,
  capabilities: ProviderCapabilities,
  passIntervalMs: number,
): Budget {
  const { unlimited: _noCap, ...caps } = budget;
  const stopLeadMs = stopLeadMsFor({ stopLatencyMs: capabilities.stopLatencyMs, passIntervalMs });
  return { ...caps, timeZone, stopLeadMs };
}

export class ManagedLedger {
  readonly #store: LedgerStore;
  readonly #clock: Clock;
  #state: LedgerState;
  /** Commands of committed decisions not taken yet (a budget stop is issued once: never dropped). */
  readonly #commands: LedgerCommand[] = [];

  constructor(store: LedgerStore, clock: Clock, ledgerId: string) {
    this.#store = store;
    this.#clock = clock;
    this.#state = store.load() ?? emptyLedgerState(ledgerId);
  }

  get state(): LedgerState {
    return this.#state;
  }

  /** Decide and commit one input. Returns the committed decision, or the ledger's refusal. */
  apply(input: LedgerInput): Result<LedgerDecision, LedgerRefusal> {
    for (let attempt = 0; ; attempt += 1) {
      const decided = decide(this.#state, input);
      if (!decided.ok) return decided;
      const d = decided.value;
      // An input the ledger has no use for changes nothing (same version): nothing to commit. The
      // store would take it for a conflict (the version must grow) and it would be logged as refused.
      if (d.state === this.#state) return ok(d);
      const committed = this.#store.commit(
        { state: d.state, entries: d.entries, workloads: d.workloads },
        this.#state.version,
      );
      if (committed === "committed") {
        this.#state = d.state;
        this.#commands.push(...d.commands);
        return ok(d);
      }
      this.#state = this.#store.load() ?? emptyLedgerState(this.#state.ledgerId);
      if (attempt >= MAX_CONFLICT_RETRIES)
        return err({ code: "invalid-input", detail: "the ledger store kept changing under us" });
    }
  }

  /** A new sponsor session: time it was down is billed by the ledger's outage rule (docs/ledger.md). */
  sessionStarted(): void {
    this.apply({ type: "SessionStarted", at: this.#clock.now() });
  }

  /**
   * Open the node's reservation, or bring its caps and price in step with the config. Returns the
   * reservation id. `priceMicroUsdPerHour` undefined: the provider's price is not known (yet) to
   * this process (its price list not read since a restart): a new reservation opens at 0 (nothing
   * runs yet), an existing one keeps the price it has. Never 0 for "unknown" on a reservation whose
   * job may be running: every billed unit that started meanwhile would be entered at 0.
   */
  ensureReservation(
    node: string,
    priceMicroUsdPerHour: number | undefined,
    budget: Budget,
  ): Result<string, LedgerRefusal> {
    const reservationId = reservationIdOf(node);
    const at = this.#clock.now();
    const existing = this.#state.reservations[reservationId];
    if (existing === undefined) {
      const opened = this.apply({
        type: "OpenReservation",
        reservationId,
        nodeId: node,
        pricing: { kind: "hourly", priceMicroUsdPerHour: priceMicroUsdPerHour ?? 0 },
        budget,
        at,
      });
      return opened.ok ? ok(reservationId) : opened;
    }
    if (JSON.stringify(existing.budget) !== JSON.stringify(budget)) {
      const changed = this.apply({ type: "ChangeBudget", nodeId: node, budget, at });
      if (!changed.ok) return changed;
    }
    if (priceMicroUsdPerHour === undefined) return ok(reservationId);
    const pricing = { kind: "hourly", priceMicroUsdPerHour } as const;
    if (
      existing.pricing.kind !== "hourly" ||
      existing.pricing.priceMicroUsdPerHour !== priceMicroUsdPerHour
    ) {
      const changed = this.apply({ type: "ChangePrice", nodeId: node, pricing, at });
      if (!changed.ok) return changed;
    }
    return ok(reservationId);
  }

  /** A ComputeAuthorization for a deployment about to be declared, or the ledger's refusal. */
  authorize(
    node: string,
    deploymentId: string,
    capabilities: ProviderCapabilities,
  ): Result<ComputeAuthorization, LedgerRefusal> {
    const decided = this.apply({
      type: "Authorize",
      reservationId: reservationIdOf(node),
      deploymentId,
      capabilities,
      at: this.#clock.now(),
    });
    if (!decided.ok) return decided;
    const authorization = issuedAuthorization(decided.value.events);
    return authorization === undefined
      ? err({ code: "invalid-input", detail: "the ledger issued no authorization" })
      : ok(authorization);
  }

  /**
   * Would the ledger refuse to authorize a new deployment of `node` now? The very decision
   * `authorize` makes, not committed: the view and the router ask it before a start is tried, so
   * what `pair nodes` shows is what a request meets. Undefined: allowed, or no reservation yet.
   */
  startRefusal(node: string, capabilities: ProviderCapabilities): LedgerRefusal | undefined {
    const reservationId = reservationIdOf(node);
    if (this.#state.reservations[reservationId] === undefined) return undefined;
    const decided = decide(this.#state, {
      type: "Authorize",
      reservationId,
      deploymentId: START_CHECK_ID,
      capabilities,
      at: this.#clock.now(),
    });
    return decided.ok ? undefined : decided.error;
  }

  /**
   * Bring accrual and budget checks up to now; returns every budget stop of the caller's deployments
   * required since its last call (by this tick or by any input before it); others' wait for them.
   */
  tick(owns: (deploymentId: string) => boolean): LedgerCommand[] {
    this.apply({ type: "Tick", at: this.#clock.now() });
    const mine = this.#commands.filter((c) => owns(c.deploymentId));
    const others = this.#commands.filter((c) => !owns(c.deploymentId));
    this.#commands.splice(0, this.#commands.length, ...others);
    return mine;
  }

  spend(node: string): NodeSpend | undefined {
    return spendOf(this.#state, node, this.#clock.now().wallMs);
  }

  /** `node`'s entered spend summed into `window`'s buckets (the dashboard's charts). */
  spendSeries(node: string, window: SeriesWindow): SpendPoint[] {
    return spendSeries(this.#store.entries({ nodeId: node }), window);
  }
}

/**
 * PAIR's error code for a ledger refusal (`budget-exceeded` from authorize, `budget_exceeded` from
 * a resume check): the one place the ledger's spelling meets the catalogue's.
 */
export function refusalCode(code: string): "budget_exceeded" | "rented_node_ineligible" {
  return code === "budget-exceeded" || code === "budget_exceeded"
    ? "budget_exceeded"
    : "rented_node_ineligible";
}
