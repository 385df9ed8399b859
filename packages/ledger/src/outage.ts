/**
 * The restart rule for a sponsor outage. Time the sponsor was down is billed cautiously, from the last
 * observation before the restart to the first one after it: if the resource was charging at either
 * end, the whole outage is billed as charging (it may have begun right after we left); only when both
 * ends are idle is the outage idle. An episode last seen charging keeps its run through the outage, so
 * its outage is billed as it goes. An episode last seen idle has its outage noted at SessionStarted
 * and decided at the first observation after it; an outage billed as charging is entered on the
 * episode's grid, extended back over the outage in whole granules (negative granule indexes).
 * Must not know: budgets and caps, where observations come from, how the sponsor went away.
 */

import { hourlyRate } from "./accrual.js";
import type { Draft } from "./draft.js";
import { granulesCostMicroUsd } from "./money.js";
import type { BillingEpisode, PendingOutage } from "./state.js";
import { dayWindow } from "./time-zone.js";

/**
 * The outage to note on an episode at SessionStarted (`sessionAtMs`), or undefined when there is none
 * to defer: an episode last seen charging (or not seen since an earlier restart) is billed through by
 * its run. An outage still undecided from an earlier restart runs on from where it began.
 * `fallbackFromMs` stands for the last observation when the state does not know it (written before
 * it was kept): the ledger's clock before the restart.
 */
export function outageAtRestart(
  episode: BillingEpisode,
  fallbackFromMs: number,
  sessionAtMs: number,
): PendingOutage | undefined {
  if (episode.outage !== undefined) return episode.outage;
  if (episode.lastObservation !== "idle") return undefined;
  const fromMs = Math.min(episode.lastObservedAtMs ?? fallbackFromMs, sessionAtMs);
  return fromMs < sessionAtMs ? { fromMs, untilMs: sessionAtMs } : undefined;
}

/**
 * The first observation after the restart decides the episode's noted outage: charging bills it as
 * charging, idle bills nothing for it (both ends idle). Returns the episode without the outage. The
 * granules are those of the episode's grid (anchored where the run began, at the session start)
 * extended back until they cover the outage's start, at the run's rate, one entry per local day.
 */
export function settleOutage(
  draft: Draft,
  episode: BillingEpisode,
  charging: boolean,
  atMs: number,
): BillingEpisode {
  const outage = episode.outage;
  if (outage === undefined) return episode;
  const { outage: _settled, ...rest } = episode;
  const reservation = draft.reservation(episode.reservationId);
  const g = episode.billingGranularityMs;
  const anchorMs = episode.run?.anchorMs ?? outage.untilMs;
  const rate =
    episode.run?.rateMicroUsdPerHour ?? (reservation === undefined ? 0 : hourlyRate(reservation.pricing));
  const back =
    charging && reservation !== undefined ? Math.ceil(Math.max(0, anchorMs - outage.fromMs) / g) : 0;
  let billed = 0;
  for (let i = -back; i < 0;) {
    const startMs = anchorMs + i * g;
    const day = dayWindow(reservation?.budget.timeZone ?? "UTC", startMs);
    const end = Math.min(0, Math.ceil((day.endMs - anchorMs) / g));
    const amount = granulesCostMicroUsd(end + back, g, rate) - granulesCostMicroUsd(i + back, g, rate);
    draft.enter({
      kind: "billed-time",
      reservationId: episode.reservationId,
      nodeId: episode.nodeId,
      deploymentId: episode.deploymentId,
      atMs: startMs,
      firstGranule: i,
      granules: end - i,
      granularityMs: g,
      rateMicroUsdPerHour: rate,
      amountMicroUsd: amount,
      recordedAtMs: draft.clockMs,
    });
    billed += amount;
    i = end;
  }
  draft.events.push({
    type: "OutageSettled",
    deploymentId: episode.deploymentId,
    nodeId: episode.nodeId,
    fromMs: outage.fromMs,
    untilMs: outage.untilMs,
    billedAs: back > 0 ? "charging" : "idle",
    billedFromMs: anchorMs - back * g,
    amountMicroUsd: billed,
    atMs,
  });
  return draft.putEpisode({ ...rest, accruedMicroUsd: episode.accruedMicroUsd + billed });
}
