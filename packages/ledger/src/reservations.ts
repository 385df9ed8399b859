/**
 * Budget envelopes and what is issued against them: opening a reservation for a rented node, changing
 * its caps or its price, and issuing a ComputeAuthorization (ledger id + reservation id) for a
 * deployment, refused when the route is out of budget or one billed granule would not fit.
 * Must not know: accrual mechanics beyond `withRate`, how authorizations are carried to the contract.
 */

import { err, type ComputeAuthorization } from "@pair/provision";
import { hourlyRate, withRate } from "./accrual.js";
import { standings } from "./budget.js";
import type { Draft } from "./draft.js";
import type { LedgerEvent, LedgerInput, LedgerRefusal } from "./inputs.js";
import { granulesCostMicroUsd } from "./money.js";
import { reservationOfNode, type LedgerState, type Reservation } from "./state.js";
import { DONE, invalid, step, type Outcome } from "./step.js";
import { validateBillingCapabilities, validateBudget, validateId, validatePricing } from "./validate.js";

type InputOf<T extends LedgerInput["type"]> = Extract<LedgerInput, { type: T }>;

export function openReservation(state: LedgerState, input: InputOf<"OpenReservation">): Outcome {
  const problems = [
    ...validateId(input.reservationId, "reservationId"),
    ...validateId(input.nodeId, "nodeId"),
    ...validatePricing(input.pricing),
    ...validateBudget(input.budget),
  ];
  if (problems.length > 0) return invalid(problems.join("; "));
  const existing = state.reservations[input.reservationId] ?? reservationOfNode(state, input.nodeId);
  if (existing !== undefined)
    return err({
      code: "duplicate-reservation",
      reservationId: existing.reservationId,
      nodeId: existing.nodeId,
    });
  return step(state, input.at.wallMs, (draft, atMs) => {
    draft.putReservation({
      reservationId: input.reservationId,
      nodeId: input.nodeId,
      openedAtMs: atMs,
      pricing: input.pricing,
      budget: input.budget,
      spentByDayMicroUsd: {},
      spentTotalMicroUsd: 0,
      spentThisSessionMicroUsd: 0,
      attributedUntilMs: atMs,
    });
    draft.events.push({
      type: "ReservationOpened",
      reservationId: input.reservationId,
      nodeId: input.nodeId,
      atMs,
    });
    return DONE;
  });
}

/** New caps (or zone, or stop lead). Raising a reached cap lifts the mark; lowering it may stop at once. */
export function changeBudget(state: LedgerState, input: InputOf<"ChangeBudget">): Outcome {
  const problems = validateBudget(input.budget);
  if (problems.length > 0) return invalid(problems.join("; "));
  const reservation = reservationOfNode(state, input.nodeId);
  if (reservation === undefined) return err({ code: "unknown-node", nodeId: input.nodeId });
  return step(state, input.at.wallMs, (draft, atMs) => {
    const current = mustReservation(draft, reservation);
    draft.putReservation({ ...current, budget: input.budget });
    draft.events.push({ type: "BudgetChanged", nodeId: input.nodeId, budget: input.budget, atMs });
    return DONE;
  });
}

/** A new price. Billed time up to now stays at the old rate; granules from the next one on take the new. */
export function changePrice(state: LedgerState, input: InputOf<"ChangePrice">): Outcome {
  const problems = validatePricing(input.pricing);
  if (problems.length > 0) return invalid(problems.join("; "));
  const reservation = reservationOfNode(state, input.nodeId);
  if (reservation === undefined) return err({ code: "unknown-node", nodeId: input.nodeId });
  if (reservation.pricing.kind !== input.pricing.kind)
    return invalid(`pricing.kind: a ${reservation.pricing.kind} node cannot become ${input.pricing.kind}`);
  return step(state, input.at.wallMs, (draft, atMs) => {
    const current = mustReservation(draft, reservation);
    draft.putReservation({ ...current, pricing: input.pricing });
    const rate = hourlyRate(input.pricing);
    for (const episode of draft.openEpisodes(reservation.reservationId))
      if (episode.run !== undefined) draft.putEpisode({ ...episode, run: withRate(episode.run, rate) });
    draft.events.push({ type: "PriceChanged", nodeId: input.nodeId, pricing: input.pricing, atMs });
    return DONE;
  });
}

/**
 * Issue a ComputeAuthorization for a deployment of an hourly node. Refused while the route is marked
 * ineligible, or when a single billed granule would not fit in a capped window.
 */
export function authorize(state: LedgerState, input: InputOf<"Authorize">): Outcome {
  const problems = [
    ...validateId(input.deploymentId, "deploymentId"),
    ...validateBillingCapabilities(input.capabilities),
  ];
  if (problems.length > 0) return invalid(problems.join("; "));
  const reservation = state.reservations[input.reservationId];
  if (reservation === undefined)
    return err({ code: "unknown-reservation", reservationId: input.reservationId });
  if (reservation.pricing.kind !== "hourly")
    return invalid(`reservation ${input.reservationId} is per-token: there is no deployment to authorize`);
  if (state.bindings[input.deploymentId] !== undefined)
    return err({ code: "already-bound", deploymentId: input.deploymentId });
  return step(state, input.at.wallMs, (draft, atMs) => {
    const current = mustReservation(draft, reservation);
    const granule = granulesCostMicroUsd(
      1,
      input.capabilities.billingGranularityMs,
      hourlyRate(current.pricing),
    );
    const refusal = budgetRefusal(draft, current, atMs, granule);
    if (refusal !== undefined) return err(refusal);
    draft.putBinding({
      deploymentId: input.deploymentId,
      reservationId: current.reservationId,
      nodeId: current.nodeId,
      billingGranularityMs: input.capabilities.billingGranularityMs,
      provider: input.capabilities.provider,
      boundBy: "authorization",
      boundAtMs: atMs,
    });
    const authorization: ComputeAuthorization = {
      ledgerId: state.ledgerId,
      reservationId: current.reservationId,
    };
    draft.events.push({
      type: "AuthorizationIssued",
      deploymentId: input.deploymentId,
      nodeId: current.nodeId,
      authorization,
      atMs,
    });
    return DONE;
  });
}

/**
 * Why `neededMicroUsd` may not be spent on the node now: the route is marked ineligible, or it does
 * not fit in a capped window beside what is spent and held. Undefined when it fits.
 */
export function budgetRefusal(
  draft: Draft,
  reservation: Reservation,
  atMs: number,
  neededMicroUsd: number,
): LedgerRefusal | undefined {
  const all = standings(draft.view, reservation, atMs);
  const mark = reservation.ineligible;
  if (mark !== undefined) {
    const s = all.find((x) => x.window === mark.window);
    return {
      code: "budget-exceeded",
      nodeId: reservation.nodeId,
      window: mark.window,
      capMicroUsd: mark.capMicroUsd,
      spentMicroUsd: s?.spentMicroUsd ?? 0,
      heldMicroUsd: s?.heldMicroUsd ?? 0,
      neededMicroUsd,
      untilMs: mark.untilMs,
    };
  }
  for (const s of all)
    if (s.spentMicroUsd + s.heldMicroUsd + neededMicroUsd > s.capMicroUsd)
      return {
        code: "budget-exceeded",
        nodeId: reservation.nodeId,
        window: s.window,
        capMicroUsd: s.capMicroUsd,
        spentMicroUsd: s.spentMicroUsd,
        heldMicroUsd: s.heldMicroUsd,
        neededMicroUsd,
        untilMs: s.span.endMs,
      };
  return undefined;
}

/** The authorization an accepted `Authorize` issued (from its decision's events). */
export function issuedAuthorization(events: readonly LedgerEvent[]): ComputeAuthorization | undefined {
  for (const e of events) if (e.type === "AuthorizationIssued") return e.authorization;
  return undefined;
}

export function mustReservation(draft: Draft, reservation: Reservation): Reservation {
  const current = draft.reservation(reservation.reservationId);
  if (current === undefined) throw new Error(`invariant: reservation ${reservation.reservationId} vanished`);
  return current;
}
