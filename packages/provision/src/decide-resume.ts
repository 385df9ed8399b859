/**
 * Resuming: bringing a resource that exists already (one exact key, paused or running) into use as a
 * billed spell of its own. It is declared like a create (under a ledger authorization, within the
 * ceilings); the intent and the obligation are recorded together before the resume command, so a
 * crash in between leaves an open obligation on that key; an accepted answer makes it Requested, a
 * refused or lost one Uncertain, and either is settled by what the provider reports of that key:
 * running (ready) makes it Active, a billing-ended state or absence discharges it. From then on it
 * is stopped exactly like a created resource.
 * Must not know: how the resume is sent, or how the key was found.
 */

import type { Input } from "./inputs.js";
import { sameResource, slotOf } from "./identity.js";
import { assertNever, err, ok } from "./result.js";
import { liveRecords, type DeploymentRecord, type HostingState } from "./state.js";
import type { Draft } from "./decide-draft.js";
import { illegal, moveTo, outcomeUncertain, wrongPhase, type Outcome } from "./decide-draft.js";
import { admit, declared } from "./decide-lease.js";

export function declareResume(
  state: HostingState,
  input: Extract<Input, { type: "DeclareResume" }>,
): Outcome {
  const { key, capabilities } = input;
  const admitted = admit(state, input, [
    ...(key.provider === capabilities.provider
      ? []
      : [`key.provider ${key.provider} is not ${capabilities.provider}`]),
    ...(key.account.trim() === "" ? ["key.account: must not be empty"] : []),
    ...(key.name.trim() === "" ? ["key.name: must not be empty"] : []),
    ...(key.incarnation.trim() === "" ? ["key.incarnation: must not be empty"] : []),
    ...(capabilities.pauseResume ? [] : [`${capabilities.provider} declares no pause and resume`]),
  ]);
  if (!admitted.ok) return admitted;
  // One live record per resource: a second would open a second obligation on the same bill.
  const holder = liveRecords(state).find((d) => d.key !== undefined && sameResource(d.key, key));
  if (holder !== undefined) return err({ code: "already-recorded", key, by: holder.id });
  return declared(state, input, admitted.value, { origin: "resume", slot: slotOf(key), key });
}

export function beginResume(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "BeginResume" }>,
): Outcome {
  const key = record.key;
  if (record.origin !== "resume" || key === undefined)
    return wrongPhase(record, "a declared resume (a create is begun with BeginCreate)");
  if (record.phase !== "Declared" || record.intent !== undefined)
    return wrongPhase(record, "Declared with no resume sent");
  if (input.requestId.trim() === "")
    return err({ code: "invalid-input", detail: "requestId must not be empty" });
  const atMs = input.at.wallMs;
  draft.putDeployment({
    ...record,
    intent: { requestId: input.requestId, epoch: input.lease.epoch, sentAtMs: atMs, lastSentAtMs: atMs },
  });
  // As for a create: the obligation is committed with the intent, before the resource can bill.
  draft.putObligation({
    deploymentId: record.id,
    openedAtMs: atMs,
    openedBecause: "resume-intent",
    state: "open",
    key,
    slot: record.slot,
  });
  draft.events.push({ type: "ResumeIntentRecorded", id: record.id, requestId: input.requestId, key, atMs });
  draft.events.push({ type: "ObligationOpened", id: record.id, because: "resume-intent", key, atMs });
  draft.commands.push({ type: "ResumeResource", id: record.id, key });
  return ok(draft.finish());
}

export function resumeAnswered(
  draft: Draft,
  record: DeploymentRecord,
  input: Extract<Input, { type: "ResumeAnswered" }>,
): Outcome {
  const intent = record.intent;
  if (record.origin !== "resume" || record.phase !== "Declared" || intent?.answer !== undefined)
    return wrongPhase(record, "a resume in flight");
  if (intent === undefined) return wrongPhase(record, "a resume in flight");
  const { outcome } = input;
  const atMs = input.at.wallMs;
  switch (outcome.kind) {
    case "accepted": {
      // Accepted is not running: the resume is settled by a report of the key (ready: Active).
      const moved = moveTo(draft, { ...record, intent: { ...intent, answer: "resumed" } }, "Requested", atMs);
      return moved.ok ? ok(draft.finish()) : illegal(record, "Requested");
    }
    case "refused":
    case "unknown": {
      // Neither proves the resource is not billing (it may have been running already): reconciliation tells.
      const answer = outcome.kind === "refused" ? "refused" : "lost";
      const detail = outcome.kind === "refused" ? `${outcome.code}: ${outcome.message}` : outcome.cause;
      const moved = moveTo(draft, { ...record, intent: { ...intent, answer } }, "Uncertain", atMs);
      if (!moved.ok) return illegal(record, "Uncertain");
      draft.events.push(outcomeUncertain(record, answer, detail));
      return ok(draft.finish());
    }
    default:
      return assertNever(outcome, "resume outcome");
  }
}

/**
 * A resume the provider accepted (or whose answer was lost) may still be reported in its stopped
 * state for a while: that report is not evidence until the resource was seen charging after the
 * resume, or the listing lag has passed since the resume was sent. A refused resume's report is.
 */
export function resumeMayLag(record: DeploymentRecord, atMs: number): boolean {
  const intent = record.intent;
  if (record.origin !== "resume" || record.firstChargingAtMs !== undefined || intent === undefined)
    return false;
  if (intent.answer === "refused") return false;
  return atMs < intent.lastSentAtMs + record.capabilities.maxListingLagMs;
}
