/**
 * Accrual of billed time. An open episode with a charging run bills every granule of its grid as soon
 * as the granule starts, at the rate in force at that moment; entries never span a local midnight, so
 * each lands whole in one day and one month. Workloads on an hourly node share its billed time while
 * they run. `advance` brings every open episode and every share up to one instant.
 * Must not know: budgets and caps (budget.ts), where inputs come from.
 */

import type { Draft } from "./draft.js";
import { granulesCostMicroUsd, granulesStartedBefore, productDivFloor } from "./money.js";
import type { BillingEpisode, ChargingRun, NodePricing, Reservation } from "./state.js";
import { dayWindow } from "./time-zone.js";

/** The hourly rate a node charges while running (per-token nodes have no billed time). */
export function hourlyRate(pricing: NodePricing): number {
  return pricing.kind === "hourly" ? pricing.priceMicroUsdPerHour : 0;
}

/** A new grid starting at `anchorMs`: its first granule starts (and is billed) right after. */
export function startRun(anchorMs: number, rateMicroUsdPerHour: number): ChargingRun {
  return { anchorMs, rateMicroUsdPerHour, rateFromGranule: 0, billedGranules: 0, billedAtRateMicroUsd: 0 };
}

/** A new rate for the granules not billed yet; the grid stays. */
export function withRate(run: ChargingRun, rateMicroUsdPerHour: number): ChargingRun {
  if (run.rateMicroUsdPerHour === rateMicroUsdPerHour) return run;
  return { ...run, rateMicroUsdPerHour, rateFromGranule: run.billedGranules, billedAtRateMicroUsd: 0 };
}

/**
 * What granules `[rateFromGranule, granules)` of a run cost in all. Rounding up happens once per rate,
 * so a minute at $0.80/h costs 13 334 µUSD the first time and 13 333 the next, never 13 334 each.
 */
export function runCostMicroUsd(run: ChargingRun, granularityMs: number, granules: number): number {
  return granulesCostMicroUsd(granules - run.rateFromGranule, granularityMs, run.rateMicroUsdPerHour);
}

/** Start of granule `k` of a run. */
export function granuleStartMs(run: ChargingRun, granularityMs: number, k: number): number {
  return run.anchorMs + k * granularityMs;
}

/** Enter every granule of the episode that started before `toMs`. A closed episode never accrues. */
export function accrueEpisode(draft: Draft, episode: BillingEpisode, toMs: number): BillingEpisode {
  if (episode.state !== "open" || toMs <= episode.accruedUntilMs) return episode;
  const g = episode.billingGranularityMs;
  let run = episode.run;
  let accrued = episode.accruedMicroUsd;
  if (run !== undefined) {
    const target = granulesStartedBefore(run.anchorMs, g, toMs);
    while (run.billedGranules < target) {
      const reservation = mustReservation(draft, episode);
      const firstStart = granuleStartMs(run, g, run.billedGranules);
      const day = dayWindow(reservation.budget.timeZone, firstStart);
      const end = Math.min(target, granulesStartedBefore(run.anchorMs, g, day.endMs));
      const cost = runCostMicroUsd(run, g, end);
      const amount = cost - run.billedAtRateMicroUsd;
      draft.enter({
        kind: "billed-time",
        reservationId: episode.reservationId,
        nodeId: episode.nodeId,
        deploymentId: episode.deploymentId,
        atMs: firstStart,
        firstGranule: run.billedGranules,
        granules: end - run.billedGranules,
        granularityMs: g,
        rateMicroUsdPerHour: run.rateMicroUsdPerHour,
        amountMicroUsd: amount,
        recordedAtMs: draft.clockMs,
      });
      accrued += amount;
      run = { ...run, billedGranules: end, billedAtRateMicroUsd: cost };
    }
  }
  const { run: _old, ...rest } = episode;
  return draft.putEpisode({
    ...rest,
    ...(run === undefined ? {} : { run }),
    accruedUntilMs: toMs,
    accruedMicroUsd: accrued,
  });
}

/** The node's running rate: Σ rates of its open episodes' charging runs. */
export function nodeRate(draft: Draft, reservationId: string): number {
  let rate = 0;
  for (const e of draft.openEpisodes(reservationId)) rate += e.run?.rateMicroUsdPerHour ?? 0;
  return rate;
}

/**
 * Give each hourly workload in flight its share of the node's running rate over
 * `[attributedUntilMs, toMs)`, split evenly among those running. Shares are kept in nano-dollars.
 */
export function apportion(draft: Draft, reservation: Reservation, toMs: number): void {
  const fromMs = reservation.attributedUntilMs;
  if (toMs <= fromMs) return;
  const running = draft.requests(reservation.reservationId).filter((r) => r.pricingKind === "hourly");
  const rate = nodeRate(draft, reservation.reservationId);
  if (running.length > 0 && rate > 0) {
    // µUSD/h × ms / 3 600 000 = µUSD; × 1 000 = nano-USD.
    const shareNanoUsd = productDivFloor([rate, toMs - fromMs], 3_600 * running.length);
    for (const r of running)
      draft.putRequest({ ...r, attributedNanoUsd: r.attributedNanoUsd + shareNanoUsd });
  }
  draft.putReservation({ ...reservation, attributedUntilMs: toMs });
}

/** Bring every share and every open episode up to `toMs` (and the draft's clock with them). */
export function advance(draft: Draft, toMs: number): void {
  if (toMs > draft.clockMs) draft.clockMs = toMs;
  for (const reservation of draft.reservations()) apportion(draft, reservation, toMs);
  for (const episode of draft.openEpisodes()) accrueEpisode(draft, episode, toMs);
}

function mustReservation(draft: Draft, episode: BillingEpisode): Reservation {
  const reservation = draft.reservation(episode.reservationId);
  if (reservation === undefined)
    throw new Error(`invariant: episode ${episode.deploymentId} has no reservation ${episode.reservationId}`);
  return reservation;
}
