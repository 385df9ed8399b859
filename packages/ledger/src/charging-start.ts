/**
 * The cautious start of a charging run after idle. A resource observed charging whose previous
 * observation found it idle (scaled to zero, pending, a fresh orphan) may have begun billing at any
 * moment after that observation, so its new run is anchored there, not at the observation that saw
 * it: the granules that started between the two observations are entered at once (event
 * `RunBackdated`). The ledger thus never counts less than the provider for a start it did not see
 * happen, and at most the gap between the two observations more, rounded up to whole granules.
 * The same rule across a sponsor restart is the outage rule (outage.ts).
 * Must not know: budgets and caps, where observations come from, how often they are made.
 */

import { accrueEpisode, startRun } from "./accrual.js";
import type { Draft } from "./draft.js";
import type { BillingEpisode } from "./state.js";

/**
 * Give an episode without a run (last seen idle) a run anchored at its last observation (or at
 * `atMs` when the state does not know it, or it is later), entering every granule started before
 * `atMs`. Returns the episode as accrued up to `atMs`.
 */
export function startRunAfterIdle(
  draft: Draft,
  episode: BillingEpisode,
  rateMicroUsdPerHour: number,
  atMs: number,
): BillingEpisode {
  const fromMs = Math.min(episode.lastObservedAtMs ?? atMs, atMs);
  const started = draft.putEpisode({
    ...episode,
    run: startRun(fromMs, rateMicroUsdPerHour),
    accruedUntilMs: fromMs,
  });
  const accrued = accrueEpisode(draft, started, atMs);
  if (fromMs < atMs)
    draft.events.push({
      type: "RunBackdated",
      deploymentId: episode.deploymentId,
      nodeId: episode.nodeId,
      lastIdleAtMs: fromMs,
      observedAtMs: atMs,
      amountMicroUsd: accrued.accruedMicroUsd - episode.accruedMicroUsd,
    });
  return accrued;
}
