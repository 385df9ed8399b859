/**
 * The sponsor's cost controls for a managed endpoint, as pure functions of the ledger's state and the
 * time the caller's Clock read (`nowMs`, wall ms): when to pause an idle endpoint (never while a
 * stream is open), whether the budget says pause now, whether a resume may go ahead, and asking the
 * ledger for the ComputeAuthorization a create needs. They decide; the sponsor pauses.
 * Must not know: HTTP, timers, the transport, how the ledger's state is stored.
 */

import type { ComputeAuthorization, Instant, ProviderCapabilities } from "@pair/provision";
import { err, ok, type Result } from "@pair/provision";
import {
  decide,
  granulesCostMicroUsd,
  hourlyRate,
  issuedAuthorization,
  remainingBudget,
  reservationOfNode,
  routeEligibility,
  stopDeadline,
  type BudgetWindow,
  type LedgerDecision,
  type LedgerRefusal,
  type LedgerState,
} from "@pair/ledger";
import { HF_ENDPOINT_CAPABILITIES } from "./capabilities.js";

/** Longest idle-pause setting accepted (`idle_pause_min` up to a week). */
export const MAX_IDLE_PAUSE_MS = 7 * 24 * 3_600_000;

function checkIdleArgs(openStreams: number, idlePauseMs: number): void {
  if (!Number.isInteger(openStreams) || openStreams < 0)
    throw new RangeError(`openStreams: expected an integer >= 0, got ${openStreams}`);
  if (!Number.isInteger(idlePauseMs) || idlePauseMs < 1 || idlePauseMs > MAX_IDLE_PAUSE_MS)
    throw new RangeError(`idlePauseMs: expected an integer in [1, ${MAX_IDLE_PAUSE_MS}], got ${idlePauseMs}`);
}

/**
 * When the idle pause falls due: `idlePauseMs` after the last PAIR workload on the endpoint ended
 * (pass when it started running if none ran since). Undefined while a stream is open.
 */
export function idlePauseDueAtMs(
  lastWorkloadEndMs: number,
  openStreams: number,
  idlePauseMs: number,
): number | undefined {
  checkIdleArgs(openStreams, idlePauseMs);
  return openStreams > 0 ? undefined : lastWorkloadEndMs + idlePauseMs;
}

/** Pause now for idleness? Never while a stream is open; yes once `idlePauseMs` passed with no workload. */
export function shouldIdlePause(
  lastWorkloadEndMs: number,
  openStreams: number,
  idlePauseMs: number,
  nowMs: number,
): boolean {
  const due = idlePauseDueAtMs(lastWorkloadEndMs, openStreams, idlePauseMs);
  return due !== undefined && nowMs >= due;
}

export type BudgetVerdict =
  /** Within budget. `checkAgainAtMs`: when the ledger next has something to say (tick it then). */
  | { readonly action: "none"; readonly checkAgainAtMs: number | undefined }
  /** Pause now: the cap is reached, or the next billed minute would cross it. */
  | {
      readonly action: "pause";
      readonly code: "budget_exceeded";
      readonly window: BudgetWindow;
      /** The window resets here (raising the cap lifts it sooner). */
      readonly untilMs: number;
    }
  | { readonly action: "pause"; readonly code: "no_reservation" };

/**
 * What the budget says about a node at `nowMs`: pause it now, or not yet (and when to look again).
 * The ledger's own `RequireStop` commands say the same for deployments it tracks; this answers for
 * the node as a whole (e.g. before a wake, or for the node detail).
 */
export function budgetVerdict(ledger: LedgerState, nodeId: string, nowMs: number): BudgetVerdict {
  const r = reservationOfNode(ledger, nodeId);
  if (r === undefined) return { action: "pause", code: "no_reservation" };
  const eligibility = routeEligibility(ledger, { kind: "rented", nodeId }, nowMs);
  if (!eligibility.eligible) {
    if (eligibility.reason === "no-reservation") return { action: "pause", code: "no_reservation" };
    return {
      action: "pause",
      code: "budget_exceeded",
      window: eligibility.window,
      untilMs: eligibility.untilMs,
    };
  }
  const schedule = stopDeadline(ledger, nodeId, nowMs);
  if (schedule?.kind === "stop" && schedule.issueStopAtMs <= nowMs) {
    const window = (remainingBudget(ledger, nodeId, nowMs) ?? []).find((w) => w.window === schedule.window);
    return {
      action: "pause",
      code: "budget_exceeded",
      window: schedule.window,
      untilMs: window?.endMs ?? schedule.granuleStartMs,
    };
  }
  return { action: "none", checkAgainAtMs: schedule?.wakeAtMs };
}

export type ResumeRefusal =
  | {
      readonly code: "budget_exceeded";
      readonly window: BudgetWindow;
      readonly untilMs: number;
      readonly message: string;
    }
  | { readonly code: "no_reservation"; readonly message: string };

/**
 * May the endpoint be resumed (by `pair rented resume` or a wake on request)? Refused while the node
 * is marked over budget, or when not even one billed minute at its price fits in a capped window.
 */
export function resumeAllowed(
  ledger: LedgerState,
  nodeId: string,
  nowMs: number,
  capabilities: ProviderCapabilities = HF_ENDPOINT_CAPABILITIES,
): Result<true, ResumeRefusal> {
  const r = reservationOfNode(ledger, nodeId);
  if (r === undefined)
    return err({ code: "no_reservation", message: `rented node ${nodeId} has no budget reservation` });
  const eligibility = routeEligibility(ledger, { kind: "rented", nodeId }, nowMs);
  if (!eligibility.eligible)
    return eligibility.reason === "no-reservation"
      ? err({ code: "no_reservation", message: `rented node ${nodeId} has no budget reservation` })
      : err(exhausted(nodeId, eligibility.window, eligibility.untilMs));
  const minute = granulesCostMicroUsd(1, capabilities.billingGranularityMs, hourlyRate(r.pricing));
  for (const w of remainingBudget(ledger, nodeId, nowMs) ?? [])
    if (w.remainingMicroUsd < minute) return err(exhausted(nodeId, w.window, w.endMs));
  return ok(true);
}

function exhausted(nodeId: string, window: BudgetWindow, untilMs: number): ResumeRefusal {
  return {
    code: "budget_exceeded",
    window,
    untilMs,
    message: `rented node ${nodeId} has spent its ${window === "day" ? "daily" : "monthly"} budget until ${new Date(untilMs).toISOString()}: raise usd_per_${window} or wait for the reset`,
  };
}

/**
 * Ask the ledger for the ComputeAuthorization a create needs (before `HostingController.declare`).
 * Returns the authorization and the ledger's decision, which the caller must commit to its ledger
 * store; or the ledger's refusal (e.g. `budget-exceeded`).
 */
export function authorizeCreate(
  ledger: LedgerState,
  request: { readonly reservationId: string; readonly deploymentId: string; readonly at: Instant },
  capabilities: ProviderCapabilities = HF_ENDPOINT_CAPABILITIES,
): Result<
  { readonly authorization: ComputeAuthorization; readonly decision: LedgerDecision },
  LedgerRefusal
> {
  const decided = decide(ledger, {
    type: "Authorize",
    reservationId: request.reservationId,
    deploymentId: request.deploymentId,
    capabilities,
    at: request.at,
  });
  if (!decided.ok) return decided;
  const authorization = issuedAuthorization(decided.value.events);
  if (authorization === undefined)
    return err({ code: "invalid-input", detail: "the ledger issued no authorization" });
  return ok({ authorization, decision: decided.value });
}
