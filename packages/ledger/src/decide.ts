/**
 * `decide(state, input)`: the spending ledger as one pure function. It returns the next state, the
 * commands the sponsor must run (`RequireStop` for budget-exceeded), the events that happened, and
 * the entries and workload costs to append to the history, or a refusal. No await, no timers, no I/O;
 * time arrives with each input.
 * Must not know: storage, HTTP, providers' wire formats, the clock.
 */

import { assertNever } from "@pair/provision";
import { hourlyRate, startRun } from "./accrual.js";
import { confirmStopped, hostingEventReported } from "./hosting.js";
import type { LedgerInput } from "./inputs.js";
import { outageAtRestart } from "./outage.js";
import { finishRequest, releaseRequest, reserveRequest, settleRequest } from "./requests.js";
import { authorize, changeBudget, changePrice, openReservation } from "./reservations.js";
import type { LedgerState } from "./state.js";
import { DONE, step, type Outcome } from "./step.js";

export function decide(state: LedgerState, input: LedgerInput): Outcome {
  switch (input.type) {
    case "OpenReservation":
      return openReservation(state, input);
    case "ChangeBudget":
      return changeBudget(state, input);
    case "ChangePrice":
      return changePrice(state, input);
    case "Authorize":
      return authorize(state, input);
    case "HostingEventReported":
      return hostingEventReported(state, input);
    case "ConfirmStopped":
      return confirmStopped(state, input.deploymentId, input.evidence);
    case "ReserveRequest":
      return reserveRequest(state, input);
    case "SettleRequest":
      return settleRequest(state, input);
    case "ReleaseRequest":
      return releaseRequest(state, input);
    case "SessionStarted":
      return sessionStarted(state, input.at.wallMs);
    case "Tick":
      return step(state, input.at.wallMs, () => DONE);
    default:
      return assertNever(input, "ledger input");
  }
}

/**
 * A (re)start of the sponsor. The time it was down is billed by the cautious rule (outage.ts): an
 * episode last seen charging is billed through it now; one last seen idle has its outage noted, to be
 * billed as charging if the first observation after the restart finds it charging. From now on every
 * open episode is taken as charging until observed. Requests in flight died with the process:
 * their estimates are entered (the provider may have served them). Budget stops required before the
 * restart are required again, since the command may have been lost with the process.
 */
function sessionStarted(state: LedgerState, atMs: number): Outcome {
  return step(state, atMs, (draft, at) => {
    let assumedCharging = 0;
    for (const episode of draft.openEpisodes()) {
      const reservation = draft.reservation(episode.reservationId);
      const run =
        episode.run ?? startRun(at, reservation === undefined ? 0 : hourlyRate(reservation.pricing));
      const outage = outageAtRestart(episode, state.clockMs, at);
      draft.putEpisode({
        ...episode,
        lastObservation: "unknown",
        run,
        ...(outage === undefined ? {} : { outage }),
      });
      assumedCharging += 1;
      if (state.episodes[episode.deploymentId]?.stopRequiredAtMs !== undefined)
        draft.commands.push({
          type: "RequireStop",
          deploymentId: episode.deploymentId,
          reason: "budget-exceeded",
        });
    }
    const lost = draft.requests();
    for (const request of lost) finishRequest(draft, request, "lost-in-restart", undefined, at);
    draft.beginSession(at);
    draft.events.push({ type: "SessionBegan", atMs: at, assumedCharging, lostRequests: lost.length });
    return DONE;
  });
}
