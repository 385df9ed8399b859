/**
 * Declaring a deployment (authorization and ceilings checked) and its leases: every grant takes a
 * strictly larger epoch and records it; a grant while a create is in flight makes it Uncertain.
 * Must not know: providers, evidence.
 */

import type { ComputeAuthorization } from "./evidence.js";
import type { Input, LeaseClaim, Refusal } from "./inputs.js";
import { validatePolicy } from "./policy.js";
import { validateCapabilities } from "./provider-port.js";
import { err, ok, type Result } from "./result.js";
import { liveRecords, type DeploymentRecord, type HostingState } from "./state.js";
import { slotOf } from "./identity.js";
import { Draft, outcomeUncertain, type Outcome } from "./decide-draft.js";

export function declare(state: HostingState, input: Extract<Input, { type: "Declare" }>): Outcome {
  const { spec, capabilities } = input;
  const admitted = admit(state, input, [
    ...(spec.provider === capabilities.provider
      ? []
      : [`spec.provider ${spec.provider} is not ${capabilities.provider}`]),
    ...(spec.name.trim() === "" ? ["spec.name: must not be empty"] : []),
    ...(spec.account.trim() === "" ? ["spec.account: must not be empty"] : []),
  ]);
  if (!admitted.ok) return admitted;
  return declared(state, input, admitted.value, { origin: "create", slot: slotOf(spec), spec });
}

/** The new record of an admitted declaration: Declared, nothing sent, no lease ever granted. */
export function declared(
  state: HostingState,
  input: Extract<Input, { type: "Declare" | "DeclareResume" }>,
  authorization: ComputeAuthorization,
  what: Pick<DeploymentRecord, "origin" | "slot"> & Partial<Pick<DeploymentRecord, "spec" | "key">>,
): Outcome {
  const draft = new Draft(state);
  const atMs = input.at.wallMs;
  draft.putDeployment({
    id: input.id,
    ...what,
    ownerTag: input.ownerTag,
    authorization,
    capabilities: input.capabilities,
    phase: "Declared",
    declaredAtMs: atMs,
    seenInListing: false,
    stopAttempts: 0,
    leaseHighWater: 0,
  });
  draft.events.push({ type: "DeploymentDeclared", id: input.id, atMs });
  return ok(draft.finish());
}

/** What every declaration (create or resume) must hold: a ledger authorization, sane inputs, room. */
export function admit(
  state: HostingState,
  input: Extract<Input, { type: "Declare" | "DeclareResume" }>,
  problems: readonly string[],
): Result<ComputeAuthorization, Refusal> {
  const { id, capabilities, authorization, policy } = input;
  if (state.deployments[id] !== undefined) return err({ code: "duplicate-deployment", id });
  if (
    authorization === undefined ||
    authorization.ledgerId.trim() === "" ||
    authorization.reservationId.trim() === ""
  )
    return err({ code: "authorization-required", id });
  const all = [
    ...validateCapabilities(capabilities),
    ...validatePolicy(policy),
    ...problems,
    ...(input.ownerTag.trim() === "" ? ["ownerTag: must not be empty"] : []),
  ];
  if (all.length > 0) return err({ code: "invalid-input", detail: all.join("; ") });
  if (liveRecords(state).length >= policy.maxActiveResources)
    return err({ code: "max-active-exceeded", limit: policy.maxActiveResources });
  return ok(authorization);
}

export function acquireLease(state: HostingState, input: Extract<Input, { type: "AcquireLease" }>): Outcome {
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
    draft.events.push(outcomeUncertain(record, "lost", "lease changed hands"));
  }
  draft.putDeployment(next);
  return ok(draft.finish());
}

export function checkLease(
  record: DeploymentRecord,
  claim: LeaseClaim,
  nowMonoMs: number,
): Result<void, Refusal> {
  const held = record.lease;
  if (claim.epoch < record.leaseHighWater)
    return err({ code: "stale-epoch", id: record.id, epoch: claim.epoch, current: record.leaseHighWater });
  if (held === undefined) return err({ code: "no-lease", id: record.id });
  if (held.epoch !== claim.epoch || held.controllerId !== claim.controllerId)
    return err({ code: "stale-epoch", id: record.id, epoch: claim.epoch, current: held.epoch });
  if (nowMonoMs >= held.expiresAtMonoMs) return err({ code: "lease-expired", id: record.id });
  return ok(undefined);
}
