/**
 * Hosting ceilings. A ceiling obliges a stop; it does not perform one: `evaluatePolicy` names the
 * deployments that must stop and why, and the controller feeds `RequireStop` for each.
 * Must not know: budgets in money (the ledger obliges those with `budget-exceeded`).
 */

import { liveRecords, type DeploymentId, type HostingState } from "./state.js";

export interface HostingPolicy {
  /** Most resources that may be live (declared with intent, starting, running or stopping) at once. */
  readonly maxActiveResources: number;
  /** Longest a resource may run, counted from the create intent (or first sighting, for orphans). */
  readonly maxLifetimeMs: number;
}

export function validatePolicy(policy: HostingPolicy): readonly string[] {
  const problems: string[] = [];
  if (!Number.isInteger(policy.maxActiveResources) || policy.maxActiveResources < 1)
    problems.push("maxActiveResources: must be an integer >= 1");
  if (!(policy.maxLifetimeMs > 0)) problems.push("maxLifetimeMs: must be > 0");
  return problems;
}

export interface PolicyObligation {
  readonly id: DeploymentId;
  readonly reason: "lifetime-exceeded";
}

/** Deployments past a ceiling that are not yet stopping. */
export function evaluatePolicy(
  state: HostingState,
  policy: HostingPolicy,
  nowWallMs: number,
): PolicyObligation[] {
  const out: PolicyObligation[] = [];
  for (const record of liveRecords(state)) {
    if (record.phase === "StopRequired" || record.phase === "Declared") continue;
    const since = record.intent?.sentAtMs ?? record.firstChargingAtMs ?? record.declaredAtMs;
    if (nowWallMs - since >= policy.maxLifetimeMs) out.push({ id: record.id, reason: "lifetime-exceeded" });
  }
  return out;
}
