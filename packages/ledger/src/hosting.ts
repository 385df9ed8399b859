/**
 * The hosting contract's events, read as billing: `ResourceObserved` opens or continues an episode
 * (charging bills at the node's price, idle bills nothing; charging after idle starts its run at the
 * idle observation, charging-start.ts); `OrphanRecorded` enters an episode from
 * the orphan's reported creation, or from its first sighting; `ObligationDischarged` (ConfirmStopped)
 * is the only thing that closes one, and only with the contract's evidence kinds. Other events change
 * nothing here: a transferred obligation, a failed stop or a lapsed lease does not stop billing.
 * Must not know: lifecycle phases, leases, how evidence was gathered.
 */

import {
  assertNever,
  err,
  ok,
  type DeploymentId,
  type Evidence,
  type HostingEvent,
  type Result,
} from "@pair/provision";
import { accrueEpisode, hourlyRate, startRun } from "./accrual.js";
import type { Draft } from "./draft.js";
import type { LedgerInput, LedgerRefusal, OrphanBinding } from "./inputs.js";
import type { DeploymentBinding, LedgerState } from "./state.js";
import { startRunAfterIdle } from "./charging-start.js";
import { settleOutage } from "./outage.js";
import { DONE, invalid, step, unchanged, type Outcome } from "./step.js";
import { evidenceProblem, isWallMs, validateBillingCapabilities } from "./validate.js";

type InputOf<T extends LedgerInput["type"]> = Extract<LedgerInput, { type: T }>;
type EventOf<T extends HostingEvent["type"]> = Extract<HostingEvent, { type: T }>;

export function hostingEventReported(state: LedgerState, input: InputOf<"HostingEventReported">): Outcome {
  const event = input.event;
  switch (event.type) {
    case "ResourceObserved":
      return resourceObserved(state, event, input.bind);
    case "OrphanRecorded":
      return orphanRecorded(state, event, input.bind);
    case "ObligationDischarged":
      return confirmStopped(state, event.id, event.evidence);
    case "CreateIntentRecorded":
    case "ResumeIntentRecorded":
      return createIntentRecorded(state, event, input.bind);
    case "DeploymentDeclared":
    case "LeaseGranted":
    case "ObligationOpened":
    case "PhaseChanged":
    case "CreateOutcomeUncertain":
    case "ResumeOutcomeUncertain":
    case "StopRequired":
    case "StopFailed":
    case "ObligationTransferred":
      return unchanged(state);
    default:
      return assertNever(event, "hosting event");
  }
}

type BindingDraft = Omit<DeploymentBinding, "rev" | "boundAtMs">;

/** The binding of a deployment: known already, or made now from what the sponsor says about an orphan. */
function bindingFor(
  state: LedgerState,
  id: DeploymentId,
  bind: OrphanBinding | undefined,
): Result<BindingDraft, LedgerRefusal> {
  const known = state.bindings[id];
  if (known !== undefined) {
    if (known.closedWithoutEpisode !== undefined) return err({ code: "episode-closed", deploymentId: id });
    return ok(known);
  }
  if (bind === undefined) return err({ code: "unbound-deployment", deploymentId: id });
  const problems = validateBillingCapabilities(bind.capabilities);
  if (problems.length > 0) return invalid(problems.join("; "));
  const reservation = state.reservations[bind.reservationId];
  if (reservation === undefined)
    return err({ code: "unknown-reservation", reservationId: bind.reservationId });
  return ok({
    deploymentId: id,
    reservationId: reservation.reservationId,
    nodeId: reservation.nodeId,
    billingGranularityMs: bind.capabilities.billingGranularityMs,
    provider: bind.capabilities.provider,
    boundBy: "sponsor",
  });
}

function ensureBound(draft: Draft, binding: BindingDraft, atMs: number): void {
  if (draft.binding(binding.deploymentId) === undefined) draft.putBinding({ ...binding, boundAtMs: atMs });
}

/**
 * A create (or resume) is being sent: nothing of it can bill before now, and it may from any moment
 * after. The episode opens as if observed idle now, so the first charging observation starts its run
 * here (the cautious start), even when the first answer already reports charging. A retry's intent
 * changes nothing (the episode knows more). Without a binding (an intent PAIR cannot budget) nothing happens.
 */
function createIntentRecorded(
  state: LedgerState,
  event: EventOf<"CreateIntentRecorded" | "ResumeIntentRecorded">,
  bind: OrphanBinding | undefined,
): Outcome {
  if (state.episodes[event.id] !== undefined) return unchanged(state);
  const bound = bindingFor(state, event.id, bind);
  if (!bound.ok || !isWallMs(event.atMs)) return unchanged(state);
  return step(state, event.atMs, (draft, atMs) => {
    const binding = bound.value;
    if (draft.reservation(binding.reservationId) === undefined) return DONE;
    ensureBound(draft, binding, atMs);
    draft.putEpisode({
      deploymentId: event.id,
      reservationId: binding.reservationId,
      nodeId: binding.nodeId,
      billingGranularityMs: binding.billingGranularityMs,
      openedBy: "intent",
      startedAtMs: atMs,
      startKnown: true,
      state: "open",
      lastObservation: "idle",
      lastObservedAtMs: atMs,
      accruedUntilMs: atMs,
      accruedMicroUsd: 0,
    });
    draft.events.push({
      type: "EpisodeOpened",
      deploymentId: event.id,
      nodeId: binding.nodeId,
      openedBy: "intent",
      startedAtMs: atMs,
      startKnown: true,
    });
    return DONE;
  });
}

function resourceObserved(
  state: LedgerState,
  event: EventOf<"ResourceObserved">,
  bind: OrphanBinding | undefined,
): Outcome {
  const bound = bindingFor(state, event.id, bind);
  if (!bound.ok) return bound;
  if (state.episodes[event.id]?.state === "closed")
    return err({ code: "episode-closed", deploymentId: event.id });
  return step(state, event.atMs, (draft, atMs) => {
    const binding = bound.value;
    ensureBound(draft, binding, atMs);
    const reservation = draft.reservation(binding.reservationId);
    if (reservation === undefined)
      return err({ code: "unknown-reservation", reservationId: binding.reservationId });
    let episode = draft.episode(event.id);
    if (episode === undefined) {
      episode = draft.putEpisode({
        deploymentId: event.id,
        reservationId: binding.reservationId,
        nodeId: binding.nodeId,
        billingGranularityMs: binding.billingGranularityMs,
        openedBy: "observation",
        startedAtMs: atMs,
        startKnown: true,
        state: "open",
        lastObservation: event.charging ? "charging" : "idle",
        lastObservedAtMs: atMs,
        accruedUntilMs: atMs,
        accruedMicroUsd: 0,
      });
      draft.events.push({
        type: "EpisodeOpened",
        deploymentId: event.id,
        nodeId: binding.nodeId,
        openedBy: "observation",
        startedAtMs: atMs,
        startKnown: true,
      });
    }
    // The first observation after a restart decides an outage begun while last seen idle (outage.ts).
    episode = settleOutage(draft, episode, event.charging, atMs);
    const { run, ...rest } = episode;
    if (event.charging) {
      // Charging after charging (or after an unknown spell) keeps the grid; after idle, a new grid
      // starts at the idle observation: billing may have begun right after it (charging-start.ts).
      const charging =
        run === undefined
          ? startRunAfterIdle(draft, { ...rest, key: event.key }, hourlyRate(reservation.pricing), atMs)
          : { ...rest, key: event.key, run };
      draft.putEpisode({ ...charging, lastObservation: "charging", lastObservedAtMs: atMs });
    } else {
      // Accrued up to now by the step (the granule under way is billed whole); idle bills nothing.
      draft.putEpisode({ ...rest, key: event.key, lastObservation: "idle", lastObservedAtMs: atMs });
    }
    return DONE;
  });
}

function orphanRecorded(
  state: LedgerState,
  event: EventOf<"OrphanRecorded">,
  bind: OrphanBinding | undefined,
): Outcome {
  const bound = bindingFor(state, event.id, bind);
  if (!bound.ok) return bound;
  if (state.episodes[event.id] !== undefined) return err({ code: "already-bound", deploymentId: event.id });
  if (event.createdAtMs !== undefined && !isWallMs(event.createdAtMs))
    return invalid("createdAtMs: must be integer epoch milliseconds");
  return step(state, event.atMs, (draft, atMs) => {
    const binding = bound.value;
    ensureBound(draft, binding, atMs);
    const reservation = draft.reservation(binding.reservationId);
    if (reservation === undefined)
      return err({ code: "unknown-reservation", reservationId: binding.reservationId });
    // Billing since its reported creation; if the provider did not say, since we first saw it. An
    // orphan found idle (scaled to zero) bills nothing until it is seen charging.
    const startedAtMs = event.charging ? Math.min(event.createdAtMs ?? atMs, atMs) : atMs;
    const startKnown = event.createdAtMs !== undefined || !event.charging;
    const episode = draft.putEpisode({
      deploymentId: event.id,
      reservationId: binding.reservationId,
      nodeId: binding.nodeId,
      key: event.key,
      billingGranularityMs: binding.billingGranularityMs,
      openedBy: "orphan",
      startedAtMs,
      startKnown,
      state: "open",
      lastObservation: event.charging ? "unknown" : "idle",
      lastObservedAtMs: atMs,
      ...(event.charging ? { run: startRun(startedAtMs, hourlyRate(reservation.pricing)) } : {}),
      accruedUntilMs: startedAtMs,
      accruedMicroUsd: 0,
    });
    draft.events.push({
      type: "EpisodeOpened",
      deploymentId: event.id,
      nodeId: binding.nodeId,
      openedBy: "orphan",
      startedAtMs,
      startKnown,
    });
    accrueEpisode(draft, episode, atMs);
    return DONE;
  });
}

/**
 * ConfirmStopped(evidence): accrue up to the evidence (or up to where the ledger already is, if it
 * came late: billed time is never taken back), then close the episode. Nothing accrues on it again.
 */
export function confirmStopped(state: LedgerState, id: DeploymentId, evidence: Evidence): Outcome {
  const problem = evidenceProblem(evidence);
  if (problem !== undefined) return err({ code: "not-evidence", deploymentId: id, detail: problem });
  const binding = state.bindings[id];
  if (binding === undefined) return err({ code: "unbound-deployment", deploymentId: id });
  const episode = state.episodes[id];
  if (binding.closedWithoutEpisode !== undefined || episode?.state === "closed")
    return err({ code: "episode-closed", deploymentId: id });
  return step(state, evidence.observedAtMs, (draft, atMs) => {
    const current = draft.episode(id);
    if (current === undefined) {
      // Stopped before anything was observed (a lost create found absent): nothing billed is known.
      draft.putBinding({ ...binding, closedWithoutEpisode: { evidence, atMs } });
      draft.events.push({ type: "StopConfirmedBeforeBilling", deploymentId: id, evidence, atMs });
      return DONE;
    }
    const { run: _ended, ...rest } = current;
    draft.putEpisode({ ...rest, state: "closed", closedAtMs: atMs, evidence });
    draft.events.push({
      type: "EpisodeClosed",
      deploymentId: id,
      nodeId: current.nodeId,
      evidence,
      accruedMicroUsd: current.accruedMicroUsd,
      atMs,
    });
    return DONE;
  });
}
