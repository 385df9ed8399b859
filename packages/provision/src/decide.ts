/**
 * `decide(state, input)`: the hosting contract as one pure function. It checks the input against
 * the lease, the lifecycle table and the evidence rules, and returns the next state, the commands
 * the shell must run, and the events that happened, or a refusal. No await, no timers, no I/O.
 * Must not know: providers' wire formats, storage, the clock.
 */

import { observe, type ResourceReport } from "./deployment.js";
import type { Evidence } from "./evidence.js";
import { sameResource, sameSlot, slotOf } from "./identity.js";
import type { Command, Decision, HostingEvent, Input, LeaseClaim, Refusal } from "./inputs.js";
import { canTransition, type Phase } from "./lifecycle.js";
import { validatePolicy } from "./policy.js";
import { validateCapabilities, type ProviderCapabilities } from "./provider-port.js";
import { assertNever, err, ok, type Result } from "./result.js";
import { liveRecords, type DeploymentRecord, type HostingState, type StopObligation } from "./state.js";

type Outcome = Result<Decision, Refusal>;

/** Mutable scratch for one decision; records are replaced, never edited in place. */
class Draft {
  readonly events: HostingEvent[] = [];
  readonly commands: Command[] = [];
  readonly version: number;
  #deployments: Record<string, DeploymentRecord>;
  #obligations: Record<string, StopObligation>;

  constructor(readonly base: HostingState) {
    this.version = base.version + 1;
    this.#deployments = base.deployments;
    this.#obligations = base.obligations;
  }

  putDeployment(record: Omit<DeploymentRecord, "rev">): DeploymentRecord {
    const next = { ...record, rev: this.version } as DeploymentRecord;
    this.#deployments = { ...this.#deployments, [next.id]: next };
    return next;
  }

  putObligation(obligation: Omit<StopObligation, "rev">): void {
    const next = { ...obligation, rev: this.version } as StopObligation;
    this.#obligations = { ...this.#obligations, [next.deploymentId]: next };
  }

  obligation(id: string): StopObligation | undefined {
    return this.#obligations[id];
  }

  finish(): Decision {
    return {
      state: { version: this.version, deployments: this.#deployments, obligations: this.#obligations },
      commands: this.commands,
      events: this.events,
    };
  }
}

export function decide(state: HostingState, input: Input): Outcome {
  switch (input.type) {
    case "Declare":
      return declare(state, input);
    case "RecordOrphan":
      return recordOrphan(state, input);
    case "AcquireLease":
      return acquireLease(state, input);
    default:
      return withRecord(state, input);
  }
}

type RecordInput = Exclude<Input, { type: "Declare" | "RecordOrphan" | "AcquireLease" }>;

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
        return wrongPhase(record, "Declared with no create sent (a sent create can only be stopped)");
      return moveTo(draft, record, "Cancelled", input.at.wallMs).ok
        ? ok(draft.finish())
        : illegal(record, "Cancelled");
    case "BeginCreate":
      return beginCreate(draft, record, input);
    case "RetryCreate":
      return retryCreate(draft, record, input);
    case "CreateAnswered":
      return createAnswered(draft, record, input);
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

// ---------------------------------------------------------------- declaration and leases

function declare(state: HostingState, input: Extract<Input, { type: "Declare" }>): Outcome {
  const { id, spec, capabilities, authorization, policy, at } = input;
  if (state.deployments[id] !== undefined) return err({ code: "duplicate-deployment", id });
  if (
    authorization === undefined ||
    authorization.ledgerId.trim() === "" ||
    authorization.reservationId.trim() === ""
  )
    return err({ code: "authorization-required", id });
  const problems = [
    ...validateCapabilities(capabilities),
    ...validatePolicy(policy),
    ...(spec.provider === capabilities.provider
      ? []
      : [`spec.provider ${spec.provider} is not ${capabilities.provider}`]),
    ...(spec.name.trim() === "" ? ["spec.name: must not be empty"] : []),
    ...(spec.account.trim() === "" ? ["spec.account: must not be empty"] : []),
    ...(input.ownerTag.trim() === "" ? ["ownerTag: must not be empty"] : []),
  ];
  if (problems.length > 0) return err({ code: "invalid-input", detail: problems.join("; ") });
  if (liveRecords(state).length >= policy.maxActiveResources)
    return err({ code: "max-active-exceeded", limit: policy.maxActiveResources });
  const draft = new Draft(state);
  draft.putDeployment({
    id,
    origin: "create",
    slot: slotOf(spec),
    ownerTag: input.ownerTag,
    spec,
    authorization,
    capabilities,
    phase: "Declared",
    declaredAtMs: at.wallMs,
    seenInListing: false,
    stopAttempts: 0,
    leaseHighWater: 0,
  });
  draft.events.push({ type: "DeploymentDeclared", id, atMs: at.wallMs });
  return ok(draft.finish());
}

function acquireLease(state: HostingState, input: Extract<Input, { type: "AcquireLease" }>): Outcome {
  const record = state.deployments[input.id];
  if (record === undefined) return err({ code: "unknown-deployment", id: input.id });
  if (!(input.ttlMs > 0)) return err({ code: "invalid-input", detail: "ttlMs must be > 0" });
  const held = record.lease;
  const live = held !== undefined && input.at.monoMs < held.expiresAtMonoMs;
  const draft = new Draft(state);
  if (live && held.controllerId !== input.controllerId)
    return err({ code: "lease-held", id: record.id, holder: held.controllerId });
  if (live) {
    // Renewal by the holder: same epoch, later expiry. Not a new grant.
    draft.putDeployment({ ...record, lease: { ...held, expiresAtMonoMs: input.at.monoMs + input.ttlMs } });
    return ok(draft.finish());
  }
  const epoch = record.leaseHighWater + 1;
  let next: Omit<DeploymentRecord, "rev"> = {
    ...record,
    leaseHighWater: epoch,
    lease: { controllerId: input.controllerId, epoch, expiresAtMonoMs: input.at.monoMs + input.ttlMs },
  };
  draft.events.push({ type: "LeaseGranted", id: record.id, controllerId: input.controllerId, epoch });
  // A new grant fences the previous holder: the answer to a create it had in flight is lost to us.
  if (record.intent?.retryInFlight === true) {
    const { retryInFlight: _r, ...intent } = record.intent;
    next = { ...next, intent };
  }
  if (record.phase === "Declared" && record.intent !== undefined && record.intent.answer === undefined) {
    next = { ...next, phase: "Uncertain", intent: { ...record.intent, answer: "lost" } };
    draft.events.push({
      type: "PhaseChanged",
      id: record.id,
      from: "Declared",
      to: "Uncertain",
      atMs: input.at.wallMs,
    });
    draft.events.push({
      type: "CreateOutcomeUncertain",
      id: record.id,
      answer: "lost",
      detail: "lease changed hands",
    });
  }
  draft.putDeployment(next);
  return ok(draft.finish());
}

function checkLease(record: DeploymentRecord, claim: LeaseClaim, nowMonoMs: number): Result<void, Refusal> {
  const held = record.lease;
  if (claim.epoch < record.leaseHighWater)
    return err({ code: "stale-epoch", id: record.id, epoch: claim.epoch, current: record.leaseHighWater });
  if (held === undefined) return err({ code: "no-lease", id: record.id });
  if (held.epoch !== claim.epoch || held.controllerId !== claim.controllerId)
    return err({ code: "stale-epoch", id: record.id, epoch: claim.epoch, current: held.epoch });
  if (nowMonoMs >= held.expiresAtMonoMs) return err({ code: "lease-expired", id: record.id });
  return ok(undefined);
}

// ---------------------------------------------------------------- create

function beginCreate(
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

function retryCreate(
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

function createAnswered(
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

// ---------------------------------------------------------------- observation and evidence

/** Charging unless the adapter declared the status as ending billing or as idle; unknown means charging. */
function isCharging(caps: ProviderCapabilities, status: string | undefined): boolean {
  if (status === undefined) return true;
  return !caps.billingEndedStatuses.includes(status) && !caps.idleStatuses.includes(status);
}

export function reportEndsBilling(caps: ProviderCapabilities, report: ResourceReport): boolean {
  return report.status !== undefined && caps.billingEndedStatuses.includes(report.status);
}

export function reportIsCharging(caps: ProviderCapabilities, report: ResourceReport): boolean {
  return isCharging(caps, report.status);
}

function observed(
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
  if (reportEndsBilling(caps, report) && report.status !== undefined) {
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

function absentFromListing(
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

function discharge(draft: Draft, record: DeploymentRecord, evidence: Evidence): Outcome {
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

// ---------------------------------------------------------------- stopping

function requireStop(
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

function stopAnswered(
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
      draft.putDeployment(attempted);
      const detail = outcome.kind === "refused" ? `${outcome.code}: ${outcome.message}` : outcome.cause;
      draft.events.push({ type: "StopFailed", id: record.id, detail, attempts: attempted.stopAttempts });
      return ok(draft.finish());
    }
    default:
      return assertNever(outcome, "stop outcome");
  }
}

function disown(draft: Draft, record: DeploymentRecord, input: Extract<Input, { type: "Disown" }>): Outcome {
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

// ---------------------------------------------------------------- orphans

function recordOrphan(state: HostingState, input: Extract<Input, { type: "RecordOrphan" }>): Outcome {
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

// ---------------------------------------------------------------- helpers

function obligationOf(draft: Draft, record: DeploymentRecord): StopObligation {
  const obligation = draft.obligation(record.id);
  // Every phase that can reach evidence went through BeginCreate or RecordOrphan, which open one.
  if (obligation === undefined)
    throw new Error(`invariant: deployment ${record.id} in ${record.phase} has no obligation`);
  return obligation;
}

function moveTo(
  draft: Draft,
  record: DeploymentRecord,
  to: Phase,
  atMs: number,
): Result<DeploymentRecord, Refusal> {
  if (!canTransition(record.phase, to)) return illegal(record, to);
  const next = draft.putDeployment({ ...record, phase: to });
  if (record.phase !== to)
    draft.events.push({ type: "PhaseChanged", id: record.id, from: record.phase, to, atMs });
  return ok(next);
}

function terminal(phase: Phase): boolean {
  return phase === "Stopped" || phase === "Cancelled" || phase === "Disowned";
}

function wrongPhase(record: DeploymentRecord, expected: string): { ok: false; error: Refusal } {
  return err({ code: "wrong-phase", id: record.id, phase: record.phase, expected });
}

function illegal(record: DeploymentRecord, to: Phase): { ok: false; error: Refusal } {
  return err({ code: "illegal-transition", id: record.id, from: record.phase, to });
}
