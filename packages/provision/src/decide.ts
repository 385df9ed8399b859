/**
 * `decide(state, input)`: the hosting contract as one pure function. It checks the input against
 * the lease, the lifecycle table and the evidence rules, and returns the next state, the commands
 * the shell must run, and the events that happened, or a refusal. No await, no timers, no I/O.
 * Must not know: providers' wire formats, storage, the clock.
 */

import type { Input } from "./inputs.js";
import { assertNever, err, ok } from "./result.js";
import type { HostingState } from "./state.js";
import { Draft, moveTo, illegal, wrongPhase, type Outcome } from "./decide-draft.js";
import { absentFromListing, discharge, observed } from "./decide-evidence.js";
import { acquireLease, checkLease, declare } from "./decide-lease.js";
import { beginCreate, createAnswered, retryCreate } from "./decide-create.js";
import { beginResume, declareResume, resumeAnswered } from "./decide-resume.js";
import { disown, recordOrphan, requireStop, stopAnswered } from "./decide-stop.js";

export { reportEndsBilling, reportIsCharging } from "./decide-evidence.js";

export function decide(state: HostingState, input: Input): Outcome {
  switch (input.type) {
    case "Declare":
      return declare(state, input);
    case "DeclareResume":
      return declareResume(state, input);
    case "RecordOrphan":
      return recordOrphan(state, input);
    case "AcquireLease":
      return acquireLease(state, input);
    default:
      return withRecord(state, input);
  }
}

type RecordInput = Exclude<Input, { type: "Declare" | "DeclareResume" | "RecordOrphan" | "AcquireLease" }>;

function withRecord(state: HostingState, input: RecordInput): Outcome {
  const record = state.deployments[input.id];
  if (record === undefined) return err({ code: "unknown-deployment", id: input.id });
  const fence = checkLease(record, input.lease, input.at.monoMs);
  if (!fence.ok) return fence;
  const draft = new Draft(state);
  switch (input.type) {
    case "ReleaseLease": {
      const { lease: _dropped, ...rest } = record;
      draft.putDeployment(rest);
      return ok(draft.finish());
    }
    case "Cancel":
      if (record.phase !== "Declared" || record.intent !== undefined)
        return wrongPhase(record, "Declared with nothing sent (a sent create or resume can only be stopped)");
      return moveTo(draft, record, "Cancelled", input.at.wallMs).ok
        ? ok(draft.finish())
        : illegal(record, "Cancelled");
    case "BeginCreate":
      return beginCreate(draft, record, input);
    case "RetryCreate":
      return retryCreate(draft, record, input);
    case "CreateAnswered":
      return createAnswered(draft, record, input);
    case "BeginResume":
      return beginResume(draft, record, input);
    case "ResumeAnswered":
      return resumeAnswered(draft, record, input);
    case "Observed":
      return observed(draft, record, input.report, input.source, input.at.wallMs);
    case "AbsentFromListing":
      return absentFromListing(draft, record, input);
    case "RequireStop":
      return requireStop(draft, record, input);
    case "StopAnswered":
      return stopAnswered(draft, record, input);
    case "ConfirmExternally":
      if (input.confirmedBy.trim() === "")
        return err({ code: "invalid-input", detail: "confirmedBy must name who confirmed" });
      return discharge(draft, record, {
        kind: "external-confirmation",
        confirmedBy: input.confirmedBy,
        note: input.note,
        observedAtMs: input.at.wallMs,
      });
    case "Disown":
      return disown(draft, record, input);
    default:
      return assertNever(input, "input");
  }
}
