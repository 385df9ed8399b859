/**
 * What the node and the dashboard ask the ledger: spend this session, today and this month per
 * rented node; what is left of each cap; open episodes; whether a route may take requests; and when
 * the daemon must next wake the ledger (a stop to issue, a window to reset). All read the state as of
 * its last input (`clockMs`): the daemon ticks the ledger to make the numbers current. The full
 * history of entries is read from the store (`LedgerStore.entries`).
 * Must not know: how answers are shown.
 */

import { markHolds, standings, stopSchedule, windowAt, type StopSchedule } from "./budget.js";
import type { RouteRef } from "./inputs.js";
import {
  openEpisodesOf,
  reservationOfNode,
  type BillingEpisode,
  type BudgetWindow,
  type LedgerState,
  type NodeId,
} from "./state.js";
import { monthOfDayKey } from "./time-zone.js";

export interface NodeSpend {
  readonly nodeId: NodeId;
  readonly reservationId: string;
  readonly sessionMicroUsd: number;
  readonly todayMicroUsd: number;
  readonly thisMonthMicroUsd: number;
  readonly totalMicroUsd: number;
  /** The ledger's clock when these were last brought up to date. */
  readonly asOfMs: number;
}

/** Spend of one rented node; "today" and "this month" in its budget's time zone at `atMs`. */
export function spendOf(state: LedgerState, nodeId: NodeId, atMs: number): NodeSpend | undefined {
  const r = reservationOfNode(state, nodeId);
  if (r === undefined) return undefined;
  const today = windowAt(r.budget, "day", atMs).key;
  const month = monthOfDayKey(today);
  let thisMonth = 0;
  for (const [day, amount] of Object.entries(r.spentByDayMicroUsd))
    if (monthOfDayKey(day) === month) thisMonth += amount;
  return {
    nodeId,
    reservationId: r.reservationId,
    sessionMicroUsd: r.spentThisSessionMicroUsd,
    todayMicroUsd: r.spentByDayMicroUsd[today] ?? 0,
    thisMonthMicroUsd: thisMonth,
    totalMicroUsd: r.spentTotalMicroUsd,
    asOfMs: state.clockMs,
  };
}

/** Spend of every rented node. */
export function spendByNode(state: LedgerState, atMs: number): NodeSpend[] {
  const out: NodeSpend[] = [];
  for (const r of Object.values(state.reservations)) {
    const spend = spendOf(state, r.nodeId, atMs);
    if (spend !== undefined) out.push(spend);
  }
  return out;
}

/** Σ of every entry the ledger has made. */
export function totalSpendMicroUsd(state: LedgerState): number {
  let sum = 0;
  for (const r of Object.values(state.reservations)) sum += r.spentTotalMicroUsd;
  return sum;
}

export interface WindowRemaining {
  readonly window: BudgetWindow;
  readonly key: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly capMicroUsd: number;
  readonly spentMicroUsd: number;
  /** Held by requests in flight. */
  readonly heldMicroUsd: number;
  /** cap − spent − held, never below 0. */
  readonly remainingMicroUsd: number;
  /** How far spend went past the cap (0 when within). */
  readonly overMicroUsd: number;
}

/** What is left of each cap of a rented node at `atMs` (empty when it has no caps). */
export function remainingBudget(
  state: LedgerState,
  nodeId: NodeId,
  atMs: number,
): WindowRemaining[] | undefined {
  const r = reservationOfNode(state, nodeId);
  if (r === undefined) return undefined;
  return standings(state, r, atMs).map((s) => ({
    window: s.window,
    key: s.span.key,
    startMs: s.span.startMs,
    endMs: s.span.endMs,
    capMicroUsd: s.capMicroUsd,
    spentMicroUsd: s.spentMicroUsd,
    heldMicroUsd: s.heldMicroUsd,
    remainingMicroUsd: Math.max(0, s.leftMicroUsd),
    overMicroUsd: Math.max(0, s.spentMicroUsd - s.capMicroUsd),
  }));
}

/** Episodes still accruing (of one node, or all). */
export function openEpisodes(state: LedgerState, nodeId?: NodeId): BillingEpisode[] {
  return openEpisodesOf(state).filter((e) => nodeId === undefined || e.nodeId === nodeId);
}

export type RouteEligibility =
  | { readonly eligible: true }
  | {
      readonly eligible: false;
      readonly reason: "budget-exceeded";
      readonly window: BudgetWindow;
      /** The window resets here (raising the cap lifts it sooner). */
      readonly untilMs: number;
    }
  | { readonly eligible: false; readonly reason: "no-reservation" };

/**
 * May the route take a request now, as far as money goes? Local routes always may. A mark whose
 * window has ended or whose cap was raised no longer counts, even before the next input lifts it.
 */
export function routeEligibility(state: LedgerState, route: RouteRef, atMs: number): RouteEligibility {
  if (route.kind === "local") return { eligible: true };
  const r = reservationOfNode(state, route.nodeId);
  if (r === undefined) return { eligible: false, reason: "no-reservation" };
  const mark = r.ineligible;
  if (mark === undefined || markHolds(mark, r.budget, atMs) !== "holds") return { eligible: true };
  return { eligible: false, reason: "budget-exceeded", window: mark.window, untilMs: mark.untilMs };
}

/**
 * When must the budget stop of this node be issued? `stop` gives the instant; `wakeAtMs` (in both
 * answers) is when the daemon must next send `Tick`: at the stop, the ledger answers with
 * `RequireStop`; at the end of a window, it projects again for the new one.
 */
export function stopDeadline(state: LedgerState, nodeId: NodeId, atMs: number): StopSchedule | undefined {
  const r = reservationOfNode(state, nodeId);
  if (r === undefined) return undefined;
  return stopSchedule(state, r, Math.max(atMs, state.clockMs));
}

/** The earliest instant the ledger has something to do: a stop to issue, a mark to lift, a window to roll. */
export function nextWakeAtMs(state: LedgerState, atMs: number): number | undefined {
  let wake: number | undefined;
  const consider = (ms: number | undefined) => {
    if (ms !== undefined) wake = wake === undefined ? ms : Math.min(wake, ms);
  };
  for (const r of Object.values(state.reservations)) {
    consider(stopSchedule(state, r, Math.max(atMs, state.clockMs)).wakeAtMs);
    consider(r.ineligible?.untilMs);
  }
  return wake;
}
