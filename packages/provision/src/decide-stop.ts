/**
 * Stopping: a stop is obliged (with its reason) and attempted; a failed attempt leaves the
 * obligation open; a transfer closes it as transferred; an orphan is recorded with its obligation
 * before anything stops it.
 * Must not know: how the stop is sent.
 */

import { observe } from "./deployment.js";
import { sameResource, slotOf } from "./identity.js";
import type { Input } from "./inputs.js";
import { canTransition } from "./lifecycle.js";
import { validateCapabilities } from "./provider-port.js";
import { assertNever, err, ok } from "./result.js";
import { liveRecords, type DeploymentRecord, type HostingState } from "./state.js";
import { Draft, illegal, moveTo, obligationOf, wrongPhase, type Outcome } from "./decide-draft.js";
import { discharge, isCharging } from "./decide-evidence.js";

export function requireStop(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "RequireStop" }>,
): Outcome {
  if (record.phase === "Declared")
    return wrongPhase(record, "a sent create (cancel a declaration that sent nothing)");
  const atMs = input.at.wallMs;
  const first = record.phase !== "StopRequired";
  const next: DeploymentRecord = first
    ? { ...record, stopReason: input.reason, stopMode: record.capabilities.stopMode }
    : record;
  const moved = moveTo(draft, next, "StopRequired", atMs);
  if (!moved.ok) return illegal(record, "StopRequired");
  if (first) draft.events.push({ type: "StopRequired", id: record.id, reason: input.reason, atMs });
  const key = moved.value.key;
  if (key !== undefined)
    draft.commands.push({
      type: "StopResource",
      id: record.id,
      key,
      mode: moved.value.stopMode ?? record.capabilities.stopMode,
    });
  return ok(draft.finish());
}

export function stopAnswered(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "StopAnswered" }>,
): Outcome {
  if (record.phase !== "StopRequired") return wrongPhase(record, "StopRequired");
  const atMs = input.at.wallMs;
  const attempted = { ...record, stopAttempts: record.stopAttempts + 1, lastStopAttemptAtMs: atMs };
  const { outcome } = input;
  switch (outcome.kind) {
    case "accepted":
      draft.putDeployment(attempted);
      return discharge(
        draft,
        { ...attempted, rev: draft.version },
        { kind: "stop-accepted", mode: input.mode, observedAtMs: atMs },
      );
    case "refused":
    case "unknown": {
      const wait = outcome.retryAfterMs;
      const { stopNotBeforeMs: _previous, ...rest } = attempted;
      // A provider's retry-after holds the next attempt back; without one, only the backoff does.
      draft.putDeployment(
        wait !== undefined && Number.isFinite(wait) && wait > 0
          ? { ...rest, stopNotBeforeMs: atMs + wait }
          : rest,
      );
      const detail = outcome.kind === "refused" ? `${outcome.code}: ${outcome.message}` : outcome.cause;
      draft.events.push({ type: "StopFailed", id: record.id, detail, attempts: attempted.stopAttempts });
      return ok(draft.finish());
    }
    default:
      return assertNever(outcome, "stop outcome");
  }
}

export function disown(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "Disown" }>,
): Outcome {
  if (input.transferredTo.epoch <= input.lease.epoch)
    return err({ code: "invalid-input", detail: "a transfer goes only to a newer lease epoch" });
  if (!canTransition(record.phase, "Disowned")) return illegal(record, "Disowned");
  const obligation = obligationOf(draft, record);
  const atMs = input.at.wallMs;
  draft.putObligation({
    ...obligation,
    state: "transferred",
    transferredTo: input.transferredTo,
    closedAtMs: atMs,
  });
  draft.events.push({ type: "ObligationTransferred", id: record.id, to: input.transferredTo, atMs });
  const moved = moveTo(draft, record, "Disowned", atMs);
  if (!moved.ok) return illegal(record, "Disowned");
  return ok(draft.finish());
}

export function recordOrphan(state: HostingState, input: Extract<Input, { type: "RecordOrphan" }>): Outcome {
  const { report, at } = input;
  if (state.deployments[input.id] !== undefined) return err({ code: "duplicate-deployment", id: input.id });
  if (report.ownerTag !== input.ownerTag) return err({ code: "foreign-resource", key: report.key });
  const problems = validateCapabilities(input.capabilities);
  if (problems.length > 0) return err({ code: "invalid-input", detail: problems.join("; ") });
  const holder = liveRecords(state).find((d) => d.key !== undefined && sameResource(d.key, report.key));
  if (holder !== undefined) return err({ code: "already-recorded", key: report.key, by: holder.id });
  const draft = new Draft(state);
  const charging = isCharging(input.capabilities, report.status);
  draft.putDeployment({
    id: input.id,
    origin: "orphan",
    slot: slotOf(report.key),
    key: report.key,
    ownerTag: input.ownerTag,
    capabilities: input.capabilities,
    phase: "StopRequired",
    declaredAtMs: at.wallMs,
    observed: observe(report, at.wallMs),
    seenInListing: true,
    ...(charging ? { firstChargingAtMs: report.createdAtMs ?? at.wallMs } : {}),
    stopReason: input.reason,
    stopMode: input.capabilities.stopMode,
    stopAttempts: 0,
    leaseHighWater: 0,
  });
  // The obligation is recorded first; the stop comes after, under a lease.
  draft.putObligation({
    deploymentId: input.id,
    openedAtMs: at.wallMs,
    openedBecause: "orphan",
    state: "open",
    key: report.key,
    slot: slotOf(report.key),
  });
  draft.events.push({
    type: "OrphanRecorded",
    id: input.id,
    key: report.key,
    reason: input.reason,
    createdAtMs: report.createdAtMs,
    status: report.status,
    charging,
    atMs: at.wallMs,
  });
  draft.events.push({
    type: "ObligationOpened",
    id: input.id,
    because: "orphan",
    key: report.key,
    atMs: at.wallMs,
  });
  draft.events.push({ type: "StopRequired", id: input.id, reason: input.reason, atMs: at.wallMs });
  return ok(draft.finish());
}
