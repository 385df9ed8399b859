/**
 * Observations and evidence: a report of the exact key updates the record (a healthy one never
 * withdraws StopRequired); a billing-ended state (for a resume, once it can no longer be a stale
 * report), absence from a complete listing past the listing lag, an accepted stop or an external
 * confirmation discharges the obligation — nothing else does.
 * Must not know: how reports were gathered.
 */

import { observe, type ResourceReport } from "./deployment.js";
import type { Evidence } from "./evidence.js";
import { sameResource, sameSlot } from "./identity.js";
import type { Input } from "./inputs.js";
import { canTransition, type Phase } from "./lifecycle.js";
import type { ProviderCapabilities } from "./provider-port.js";
import { err, ok } from "./result.js";
import type { DeploymentRecord } from "./state.js";
import type { Draft } from "./decide-draft.js";
import { illegal, moveTo, obligationOf, terminal, wrongPhase, type Outcome } from "./decide-draft.js";
import { resumeMayLag } from "./decide-resume.js";

/** Charging unless the adapter declared the status as ending billing or as idle; unknown means charging. */
export function isCharging(caps: ProviderCapabilities, status: string | undefined): boolean {
  if (status === undefined) return true;
  return !caps.billingEndedStatuses.includes(status) && !caps.idleStatuses.includes(status);
}

export function reportEndsBilling(caps: ProviderCapabilities, report: ResourceReport): boolean {
  return report.status !== undefined && caps.billingEndedStatuses.includes(report.status);
}

export function reportIsCharging(caps: ProviderCapabilities, report: ResourceReport): boolean {
  return isCharging(caps, report.status);
}

export function observed(
  draft: Draft,
  record: DeploymentRecord,
  report: ResourceReport,
  source: "listing" | "describe",
  atMs: number,
): Outcome {
  if (record.phase === "Declared") return wrongPhase(record, "a create answered or lost");
  if (terminal(record.phase)) return wrongPhase(record, "a live deployment");
  let current = record;
  if (current.key === undefined) {
    // An Uncertain create is resolved only by our owner tag and the request id it carried.
    const intent = current.intent;
    if (
      !sameSlot(report.key, current.slot) ||
      report.ownerTag !== current.ownerTag ||
      intent === undefined ||
      report.requestId !== intent.requestId
    )
      return err({
        code: "key-mismatch",
        id: current.id,
        detail: "report does not carry this create's request id and owner tag",
      });
    const { retryInFlight: _r, ...settled } = intent;
    current = { ...current, key: report.key, intent: settled };
    draft.putObligation({ ...obligationOf(draft, record), key: report.key });
  } else if (!sameResource(current.key, report.key)) {
    return err({ code: "key-mismatch", id: current.id, detail: "another incarnation of the name" });
  }
  const caps = current.capabilities;
  const charging = isCharging(caps, report.status);
  current = {
    ...current,
    observed: observe(report, atMs),
    seenInListing: current.seenInListing || source === "listing",
    ...(charging && current.firstChargingAtMs === undefined ? { firstChargingAtMs: atMs } : {}),
  };
  draft.events.push({
    type: "ResourceObserved",
    id: current.id,
    key: report.key,
    status: report.status,
    charging,
    atMs,
  });
  if (reportEndsBilling(caps, report) && report.status !== undefined && !resumeMayLag(current, atMs)) {
    draft.putDeployment(current);
    return discharge(draft, current, {
      kind: "provider-reported-billing-ended",
      status: report.status,
      observedAtMs: atMs,
    });
  }
  let target: Phase = current.phase;
  if (current.phase === "Requested" || current.phase === "Uncertain")
    target = report.ready === true ? "Active" : "Requested";
  // Active stays Active; StopRequired stays StopRequired: a healthy report never withdraws a stop.
  const moved = moveTo(draft, current, target, atMs);
  if (!moved.ok) return illegal(current, target);
  return ok(draft.finish());
}

export function absentFromListing(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "AbsentFromListing" }>,
): Outcome {
  if (!input.listing.complete)
    return err({ code: "not-evidence", id: record.id, detail: "a partial listing proves nothing" });
  if (record.phase === "Declared" || record.intent?.retryInFlight === true)
    return wrongPhase(record, "no create in flight");
  const lag = record.capabilities.maxListingLagMs;
  const sentAtMs = record.intent?.lastSentAtMs;
  const visibleByNow =
    record.seenInListing || (sentAtMs !== undefined && input.listing.startedAtMs >= sentAtMs + lag);
  if (!visibleByNow)
    return err({
      code: "not-evidence",
      id: record.id,
      detail: `listing started within ${lag} ms of the create; the resource may not be visible yet`,
    });
  return discharge(draft, record, {
    kind: "absent-from-complete-listing",
    listingStartedAtMs: input.listing.startedAtMs,
    observedAtMs: input.at.wallMs,
  });
}

export function discharge(draft: Draft, record: DeploymentRecord, evidence: Evidence): Outcome {
  if (!canTransition(record.phase, "Stopped")) return illegal(record, "Stopped");
  const obligation = obligationOf(draft, record);
  if (obligation.state !== "open") return wrongPhase(record, "an open obligation");
  const atMs = evidence.observedAtMs;
  draft.putObligation({ ...obligation, state: "discharged", evidence, closedAtMs: atMs });
  draft.events.push({ type: "ObligationDischarged", id: record.id, key: record.key, evidence, atMs });
  const moved = moveTo(draft, record, "Stopped", atMs);
  if (!moved.ok) return illegal(record, "Stopped");
  return ok(draft.finish());
}
