/**
 * Creating: the intent and the obligation are recorded together before the create command; an
 * answer binds the incarnation; a lost or refused answer makes the deployment Uncertain, and only
 * a provider with idempotency keys may be asked again.
 * Must not know: how the create is sent.
 */

import type { Input } from "./inputs.js";
import { sameSlot } from "./identity.js";
import { assertNever, err, ok } from "./result.js";
import type { DeploymentRecord } from "./state.js";
import type { Draft } from "./decide-draft.js";
import { illegal, moveTo, obligationOf, wrongPhase, type Outcome } from "./decide-draft.js";
import { observed } from "./decide-evidence.js";

export function beginCreate(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "BeginCreate" }>,
): Outcome {
  if (record.phase !== "Declared" || record.intent !== undefined)
    return wrongPhase(record, "Declared with no create sent");
  if (input.requestId.trim() === "")
    return err({ code: "invalid-input", detail: "requestId must not be empty" });
  const spec = record.spec;
  if (spec === undefined) return wrongPhase(record, "a declared deployment with a spec");
  const idempotencyKey = record.capabilities.idempotencyKeys ? input.requestId : undefined;
  const intent = {
    requestId: input.requestId,
    epoch: input.lease.epoch,
    sentAtMs: input.at.wallMs,
    lastSentAtMs: input.at.wallMs,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  };
  draft.putDeployment({ ...record, intent });
  // The obligation opens before the resource can bill: it is committed with the intent, before the call.
  draft.putObligation({
    deploymentId: record.id,
    openedAtMs: input.at.wallMs,
    openedBecause: "create-intent",
    state: "open",
    slot: record.slot,
  });
  draft.events.push({
    type: "CreateIntentRecorded",
    id: record.id,
    requestId: input.requestId,
    atMs: input.at.wallMs,
  });
  draft.events.push({
    type: "ObligationOpened",
    id: record.id,
    because: "create-intent",
    atMs: input.at.wallMs,
  });
  draft.commands.push({
    type: "CreateResource",
    id: record.id,
    request: {
      spec,
      requestId: input.requestId,
      ownerTag: record.ownerTag,
      epoch: input.lease.epoch,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    },
  });
  return ok(draft.finish());
}

export function retryCreate(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "RetryCreate" }>,
): Outcome {
  const intent = record.intent;
  if (record.phase !== "Uncertain" || intent === undefined || record.key !== undefined)
    return wrongPhase(record, "Uncertain with no resource found yet");
  if (
    !record.capabilities.idempotencyKeys ||
    intent.idempotencyKey === undefined ||
    record.spec === undefined
  )
    return err({ code: "blind-retry-refused", id: record.id });
  draft.putDeployment({
    ...record,
    intent: { ...intent, retryInFlight: true, lastSentAtMs: input.at.wallMs },
  });
  draft.commands.push({
    type: "CreateResource",
    id: record.id,
    request: {
      spec: record.spec,
      requestId: intent.requestId,
      ownerTag: record.ownerTag,
      epoch: input.lease.epoch,
      idempotencyKey: intent.idempotencyKey,
    },
  });
  return ok(draft.finish());
}

export function createAnswered(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "CreateAnswered" }>,
): Outcome {
  const intent = record.intent;
  const awaiting =
    intent !== undefined &&
    ((record.phase === "Declared" && intent.answer === undefined) ||
      (record.phase === "Uncertain" && intent.retryInFlight === true));
  if (!awaiting || intent === undefined) return wrongPhase(record, "a create in flight");
  const { outcome } = input;
  const atMs = input.at.wallMs;
  switch (outcome.kind) {
    case "created": {
      const report = outcome.report;
      if (!sameSlot(report.key, record.slot))
        return err({ code: "key-mismatch", id: record.id, detail: "create answered for another name" });
      if (report.requestId !== undefined && report.requestId !== intent.requestId)
        return err({ code: "key-mismatch", id: record.id, detail: "create answered for another request" });
      const { retryInFlight: _r, ...settled } = intent;
      const bound: DeploymentRecord = {
        ...record,
        key: report.key,
        intent: { ...settled, answer: "created" },
      };
      draft.putObligation({ ...obligationOf(draft, record), key: report.key });
      const moved = moveTo(draft, bound, "Requested", atMs);
      if (!moved.ok) return illegal(record, "Requested");
      return observed(draft, moved.value, report, "describe", atMs);
    }
    case "refused":
    case "lost": {
      const { retryInFlight: _r, ...settled } = intent;
      const detail = outcome.kind === "refused" ? `${outcome.code}: ${outcome.message}` : outcome.cause;
      // A refusal is not proof that nothing was created: only reconciliation can tell.
      const next = { ...record, intent: { ...settled, answer: outcome.kind } };
      if (record.phase === "Declared") {
        const moved = moveTo(draft, next, "Uncertain", atMs);
        if (!moved.ok) return illegal(record, "Uncertain");
      } else {
        draft.putDeployment(next);
      }
      draft.events.push({ type: "CreateOutcomeUncertain", id: record.id, answer: outcome.kind, detail });
      return ok(draft.finish());
    }
    default:
      return assertNever(outcome, "create outcome");
  }
}
