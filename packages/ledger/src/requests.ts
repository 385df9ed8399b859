/**
 * Requests to rented nodes. Before dispatch, a request's estimated cost is reserved against what is
 * left in every capped window, in the same decision that checks it, so concurrent requests (committed
 * with compare-and-set) cannot overshoot a cap by more than their estimates. On completion the actual
 * cost is entered; on failure the hold is released. Local routes cost nothing and are never blocked.
 * Every ended request leaves a workload cost: its token cost, or its share of the node's billed time.
 * Must not know: HTTP, routing policy, how usage is read from a response.
 */

import { err, type Instant } from "@pair/provision";
import type { Draft } from "./draft.js";
import type { WorkloadOutcome } from "./entries.js";
import type { LedgerInput } from "./inputs.js";
import { tokenCostMicroUsd, type TokenCounts } from "./money.js";
import { budgetRefusal, mustReservation } from "./reservations.js";
import { reservationOfNode, type InFlightRequest, type LedgerState } from "./state.js";
import { DONE, invalid, step, unchanged, type Outcome } from "./step.js";
import { validateId, validateTokens } from "./validate.js";

type InputOf<T extends LedgerInput["type"]> = Extract<LedgerInput, { type: T }>;

export function reserveRequest(state: LedgerState, input: InputOf<"ReserveRequest">): Outcome {
  const route = input.route;
  if (route.kind === "local") return unchanged(state);
  const problems = [
    ...validateId(input.requestId, "requestId"),
    ...(input.estimate === undefined ? [] : validateTokens(input.estimate, "estimate")),
  ];
  if (problems.length > 0) return invalid(problems.join("; "));
  const reservation = reservationOfNode(state, route.nodeId);
  if (reservation === undefined) return err({ code: "unknown-node", nodeId: route.nodeId });
  if (state.inFlight[input.requestId] !== undefined)
    return err({ code: "duplicate-request", requestId: input.requestId });
  const pricing = reservation.pricing;
  if (pricing.kind === "per-token" && input.estimate === undefined)
    return invalid("estimate: a per-token route needs the request's token estimate (prompt + max output)");
  return step(state, input.at.wallMs, (draft, atMs) => {
    const current = mustReservation(draft, reservation);
    const estimate = input.estimate;
    const held =
      current.pricing.kind === "per-token" && estimate !== undefined
        ? tokenCostMicroUsd(estimate, current.pricing)
        : 0;
    const refusal = budgetRefusal(draft, current, atMs, held);
    if (refusal !== undefined) return err(refusal);
    draft.putRequest({
      requestId: input.requestId,
      reservationId: current.reservationId,
      nodeId: current.nodeId,
      pricingKind: current.pricing.kind,
      heldMicroUsd: held,
      ...(current.pricing.kind === "per-token" && estimate !== undefined ? { estimate } : {}),
      reservedAtMs: atMs,
      attribution: input.attribution ?? {},
      attributedNanoUsd: 0,
    });
    draft.events.push({
      type: "RequestReserved",
      requestId: input.requestId,
      nodeId: current.nodeId,
      heldMicroUsd: held,
      atMs,
    });
    return DONE;
  });
}

export function settleRequest(state: LedgerState, input: InputOf<"SettleRequest">): Outcome {
  if (input.usage !== undefined) {
    const problems = validateTokens(input.usage, "usage");
    if (problems.length > 0) return invalid(problems.join("; "));
  }
  return endRequest(state, input.requestId, input.at, "settled", input.usage);
}

export function releaseRequest(state: LedgerState, input: InputOf<"ReleaseRequest">): Outcome {
  return endRequest(state, input.requestId, input.at, "released", undefined);
}

function endRequest(
  state: LedgerState,
  requestId: string,
  at: Instant,
  outcome: "settled" | "released",
  usage: TokenCounts | undefined,
): Outcome {
  if (state.inFlight[requestId] === undefined) return err({ code: "unknown-request", requestId });
  return step(state, at.wallMs, (draft, atMs) => {
    const request = draft.request(requestId);
    if (request === undefined) return err({ code: "unknown-request", requestId });
    finishRequest(draft, request, outcome, usage, atMs);
    return DONE;
  });
}

/**
 * End a request: enter its token cost (settled: the reported usage, or the estimate when none was
 * reported; lost in a restart: the estimate), drop its hold, and leave its workload cost.
 */
export function finishRequest(
  draft: Draft,
  request: InFlightRequest,
  outcome: WorkloadOutcome,
  usage: TokenCounts | undefined,
  atMs: number,
): void {
  let estimatedCostMicroUsd = 0;
  let entrySeq: number | undefined;
  const reservation = draft.reservation(request.reservationId);
  if (request.pricingKind === "hourly") {
    // Its share of the node's billed time while it ran (billed by the episode, not entered again).
    estimatedCostMicroUsd = Math.ceil(request.attributedNanoUsd / 1_000);
  } else if (
    outcome !== "released" &&
    reservation !== undefined &&
    reservation.pricing.kind === "per-token"
  ) {
    const tokens = usage ?? request.estimate ?? { inputTokens: 0, outputTokens: 0 };
    const amount = usage === undefined ? request.heldMicroUsd : tokenCostMicroUsd(usage, reservation.pricing);
    const entry = draft.enter({
      kind: "token-usage",
      reservationId: request.reservationId,
      nodeId: request.nodeId,
      requestId: request.requestId,
      // Dated when dispatched: it counts in the window its estimate was held in.
      atMs: request.reservedAtMs,
      inputTokens: tokens.inputTokens,
      outputTokens: tokens.outputTokens,
      usageReported: usage !== undefined,
      estimateMicroUsd: request.heldMicroUsd,
      amountMicroUsd: amount,
      recordedAtMs: atMs,
    });
    estimatedCostMicroUsd = amount;
    entrySeq = entry?.seq;
  }
  draft.deleteRequest(request.requestId);
  draft.workloads.push({
    requestId: request.requestId,
    reservationId: request.reservationId,
    nodeId: request.nodeId,
    pricingKind: request.pricingKind,
    attribution: request.attribution,
    startedAtMs: request.reservedAtMs,
    endedAtMs: atMs,
    outcome,
    estimatedCostMicroUsd,
    ...(entrySeq === undefined ? {} : { entrySeq }),
  });
  if (outcome === "released")
    draft.events.push({
      type: "RequestReleased",
      requestId: request.requestId,
      nodeId: request.nodeId,
      atMs,
    });
  else
    draft.events.push({
      type: "RequestSettled",
      requestId: request.requestId,
      nodeId: request.nodeId,
      estimatedCostMicroUsd,
      atMs,
    });
}
