/**
 * Caps. Where a node stands in each capped window (spent, held by requests in flight, left); when its
 * running episodes must be stopped so that no billed granule takes spend over a cap; and the
 * evaluation every decision ends with: require the stops that are due, mark the route ineligible
 * until the window resets or the cap is raised, and lift marks that no longer hold.
 * Must not know: how a stop is performed, where inputs come from.
 */

import { assertNever } from "@pair/provision";
import { granulesStartedBefore } from "./money.js";
import { runCostMicroUsd } from "./accrual.js";
import type { Draft } from "./draft.js";
import {
  BUDGET_WINDOWS,
  openEpisodesOf,
  type Budget,
  type BudgetWindow,
  type ChargingRun,
  type IneligibleMark,
  type LedgerState,
  type Reservation,
} from "./state.js";
import { dayWindow, monthOfDayKey, monthWindow, type TimeWindow } from "./time-zone.js";
import { MAX_STOP_LEAD_MS } from "./validate.js";

/** What a budget stop needs time for before it ends the provider's billing. */
export interface StopAllowance {
  /** From sending the stop until the provider stops billing (`ProviderCapabilities.stopLatencyMs`). */
  readonly stopLatencyMs: number;
  /** Longest wait for the pass that issues the stop: the ledger is looked at once per pass (0: on time). */
  readonly passIntervalMs: number;
}

/**
 * A budget's `stopLeadMs`: the stop must be issued this long before the billed granule that would
 * cross a cap starts, or it lands inside that granule and the provider bills it whole (a cap kept in
 * the ledger's exact seconds, broken on the bill). Whole milliseconds, at most MAX_STOP_LEAD_MS.
 */
export function stopLeadMsFor(allowance: StopAllowance): number {
  const lead = Math.ceil(Math.max(0, allowance.stopLatencyMs) + Math.max(0, allowance.passIntervalMs));
  return Math.min(MAX_STOP_LEAD_MS, lead);
}

export function capOf(budget: Budget, window: BudgetWindow): number | undefined {
  switch (window) {
    case "day":
      return budget.budgetMicroUsdPerDay;
    case "month":
      return budget.budgetMicroUsdPerMonth;
    default:
      return assertNever(window, "budget window");
  }
}

export function windowAt(budget: Budget, window: BudgetWindow, atMs: number): TimeWindow {
  return window === "day" ? dayWindow(budget.timeZone, atMs) : monthWindow(budget.timeZone, atMs);
}

/** Σ entries of the reservation dated inside the window. */
export function spentIn(reservation: Reservation, window: BudgetWindow, span: TimeWindow): number {
  if (window === "day") return reservation.spentByDayMicroUsd[span.key] ?? 0;
  let sum = 0;
  for (const [day, amount] of Object.entries(reservation.spentByDayMicroUsd))
    if (monthOfDayKey(day) === span.key) sum += amount;
  return sum;
}

/** Σ estimates held by requests in flight that were reserved inside the window. */
export function heldIn(
  state: Pick<LedgerState, "inFlight">,
  reservationId: string,
  span: TimeWindow,
): number {
  let sum = 0;
  for (const r of Object.values(state.inFlight))
    if (r.reservationId === reservationId && r.reservedAtMs >= span.startMs && r.reservedAtMs < span.endMs)
      sum += r.heldMicroUsd;
  return sum;
}

export interface WindowStanding {
  readonly window: BudgetWindow;
  readonly span: TimeWindow;
  readonly capMicroUsd: number;
  readonly spentMicroUsd: number;
  readonly heldMicroUsd: number;
  /** cap − spent − held; negative when spend went over (late evidence, orphans, usage above estimate). */
  readonly leftMicroUsd: number;
}

/** The node's standing in each window that has a cap, at `atMs`. */
export function standings(state: LedgerState, reservation: Reservation, atMs: number): WindowStanding[] {
  const out: WindowStanding[] = [];
  for (const window of BUDGET_WINDOWS) {
    const cap = capOf(reservation.budget, window);
    if (cap === undefined) continue;
    const span = windowAt(reservation.budget, window, atMs);
    const spent = spentIn(reservation, window, span);
    const held = heldIn(state, reservation.reservationId, span);
    out.push({
      window,
      span,
      capMicroUsd: cap,
      spentMicroUsd: spent,
      heldMicroUsd: held,
      leftMicroUsd: cap - spent - held,
    });
  }
  return out;
}

interface GridRun {
  readonly run: ChargingRun;
  readonly granularityMs: number;
}

/** What the runs will have billed beyond what is entered, for granules starting before `atMs`. */
function unbilledBefore(runs: readonly GridRun[], atMs: number): number {
  let sum = 0;
  for (const { run, granularityMs } of runs) {
    const m = granulesStartedBefore(run.anchorMs, granularityMs, atMs);
    if (m > run.billedGranules) sum += runCostMicroUsd(run, granularityMs, m) - run.billedAtRateMicroUsd;
  }
  return sum;
}

/**
 * The start of the first billed granule, before `untilMs`, that would take spend past `leftMicroUsd`
 * if the runs keep their rates: the stop must land before it starts. Undefined when every granule
 * before `untilMs` fits. Times are integer milliseconds.
 */
export function firstUnaffordableGranuleMs(
  runs: readonly GridRun[],
  leftMicroUsd: number,
  fromMs: number,
  untilMs: number,
): number | undefined {
  if (runs.length === 0 || unbilledBefore(runs, untilMs) <= leftMicroUsd) return undefined;
  if (unbilledBefore(runs, fromMs + 1) > leftMicroUsd) return fromMs;
  // Smallest T with unbilled(T) > left; the offending granule starts at T − 1 (granules bill once started).
  let lo = fromMs + 1;
  let hi = untilMs;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (unbilledBefore(runs, mid) > leftMicroUsd) hi = mid;
    else lo = mid;
  }
  return hi - 1;
}

export type StopSchedule =
  | {
      readonly kind: "stop";
      readonly window: BudgetWindow;
      /** The billed granule that would cross the cap starts here (or now, when spend is already at the cap). */
      readonly granuleStartMs: number;
      /** Issue the stop at or before this (granule start − stopLeadMs). */
      readonly issueStopAtMs: number;
      /** Wake the ledger (Tick) here: the stop, or earlier when a window ends first and a new budget starts. */
      readonly wakeAtMs: number;
    }
  | {
      readonly kind: "none";
      /** No stop falls within the current windows; wake the ledger when the earliest of them ends. */
      readonly wakeAtMs: number | undefined;
    };

/**
 * When the node's open episodes must be stopped to stay within its caps, projected from the running
 * rates. Runs of episodes already told to stop still count (they bill until evidence), but only
 * episodes not yet told make a stop due. A window whose projection finds no stop is looked at again
 * when it ends: the next window brings a new budget, and a new projection.
 */
export function stopSchedule(state: LedgerState, reservation: Reservation, atMs: number): StopSchedule {
  const open = openEpisodesOf(state, reservation.reservationId);
  if (!open.some((e) => e.stopRequiredAtMs === undefined)) return { kind: "none", wakeAtMs: undefined };
  const runs: GridRun[] = [];
  for (const e of open)
    if (e.run !== undefined) runs.push({ run: e.run, granularityMs: e.billingGranularityMs });
  let best: { window: BudgetWindow; granuleStartMs: number; issueStopAtMs: number } | undefined;
  let recheckAtMs: number | undefined;
  for (const s of standings(state, reservation, atMs)) {
    let granuleStartMs: number | undefined;
    if (s.spentMicroUsd >= s.capMicroUsd || s.leftMicroUsd < 0) granuleStartMs = atMs;
    else granuleStartMs = firstUnaffordableGranuleMs(runs, s.leftMicroUsd, atMs, s.span.endMs);
    if (granuleStartMs === undefined) {
      if (runs.length > 0) recheckAtMs = Math.min(recheckAtMs ?? s.span.endMs, s.span.endMs);
      continue;
    }
    const lead = granuleStartMs === atMs ? 0 : reservation.budget.stopLeadMs;
    const issueStopAtMs = Math.max(atMs, granuleStartMs - lead);
    if (best === undefined || issueStopAtMs < best.issueStopAtMs)
      best = { window: s.window, granuleStartMs, issueStopAtMs };
  }
  if (best === undefined) return { kind: "none", wakeAtMs: recheckAtMs };
  return { kind: "stop", ...best, wakeAtMs: Math.min(best.issueStopAtMs, recheckAtMs ?? best.issueStopAtMs) };
}

/** Is the mark still in force at `atMs` under the reservation's current caps? */
export function markHolds(
  mark: IneligibleMark,
  budget: Budget,
  atMs: number,
): "holds" | "window-reset" | "cap-raised" {
  if (atMs >= mark.untilMs) return "window-reset";
  const cap = capOf(budget, mark.window);
  if (cap === undefined || cap > mark.capMicroUsd) return "cap-raised";
  return "holds";
}

/** End of every decision: lift stale marks, require due stops, mark exhausted routes. */
export function evaluateBudgets(draft: Draft, atMs: number): void {
  for (const reservation of draft.reservations()) evaluateReservation(draft, reservation, atMs);
}

function evaluateReservation(draft: Draft, reservation: Reservation, atMs: number): void {
  const due: WindowStanding[] = [];
  const now = standings(draft.view, reservation, atMs);
  for (const s of now) if (s.spentMicroUsd >= s.capMicroUsd) due.push(s);
  const schedule = stopSchedule(draft.view, reservation, atMs);
  if (schedule.kind === "stop" && atMs >= schedule.issueStopAtMs) {
    for (const episode of draft.openEpisodes(reservation.reservationId)) {
      if (episode.stopRequiredAtMs !== undefined) continue;
      draft.putEpisode({ ...episode, stopRequiredAtMs: atMs });
      draft.commands.push({
        type: "RequireStop",
        deploymentId: episode.deploymentId,
        reason: "budget-exceeded",
      });
      draft.events.push({
        type: "BudgetStopRequired",
        deploymentId: episode.deploymentId,
        nodeId: reservation.nodeId,
        window: schedule.window,
        atMs,
      });
    }
    const standing = now.find((s) => s.window === schedule.window);
    if (standing !== undefined) due.push(standing);
  }
  const current = draft.reservation(reservation.reservationId) ?? reservation;
  const mark = current.ineligible;
  const held = mark === undefined ? undefined : markHolds(mark, current.budget, atMs);
  // The latest-ending window that is due decides how long the route stays ineligible.
  const longest = due.reduce<WindowStanding | undefined>(
    (a, b) => (a === undefined || b.span.endMs > a.span.endMs ? b : a),
    undefined,
  );
  if (
    longest !== undefined &&
    (held !== "holds" || mark === undefined || mark.untilMs < longest.span.endMs)
  ) {
    draft.putReservation({
      ...current,
      ineligible: {
        reason: "budget-exceeded",
        window: longest.window,
        windowKey: longest.span.key,
        untilMs: longest.span.endMs,
        capMicroUsd: longest.capMicroUsd,
        markedAtMs: atMs,
      },
    });
    draft.events.push({
      type: "RouteMarkedIneligible",
      nodeId: current.nodeId,
      reason: "budget-exceeded",
      window: longest.window,
      untilMs: longest.span.endMs,
      atMs,
    });
    return;
  }
  if (mark !== undefined && held !== undefined && held !== "holds") {
    const { ineligible: _lifted, ...rest } = current;
    draft.putReservation(rest);
    draft.events.push({ type: "RouteEligibleAgain", nodeId: current.nodeId, because: held, atMs });
  }
}
