/**
 * Limits checked where values enter the ledger: prices, caps, time zones, token counts, instants and
 * evidence. Each check returns the problems it found (empty when none), so a refusal can name them all.
 * Must not know: what the ledger does with valid values.
 */

import { EVIDENCE_KINDS, assertNever, type Evidence, type ProviderCapabilities } from "@pair/provision";
import { isNonNegativeInteger, type TokenCounts } from "./money.js";
import type { Budget, NodePricing } from "./state.js";
import { isTimeZone } from "./time-zone.js";

/** Longest stop lead accepted: a stop planned more than an hour ahead is a misconfiguration. */
export const MAX_STOP_LEAD_MS = 3_600_000;
/** Longest billing granule accepted (a provider billing per started day is not one we know). */
export const MAX_BILLING_GRANULARITY_MS = 86_400_000;

/** Wall times are integer epoch milliseconds. */
export function isWallMs(ms: number): boolean {
  return Number.isSafeInteger(ms) && ms >= 0;
}

export function validatePricing(pricing: NodePricing): string[] {
  switch (pricing.kind) {
    case "hourly":
      return isNonNegativeInteger(pricing.priceMicroUsdPerHour)
        ? []
        : ["priceMicroUsdPerHour: must be an integer >= 0"];
    case "per-token": {
      const problems: string[] = [];
      if (!isNonNegativeInteger(pricing.microUsdPerMillionInputTokens))
        problems.push("microUsdPerMillionInputTokens: must be an integer >= 0");
      if (!isNonNegativeInteger(pricing.microUsdPerMillionOutputTokens))
        problems.push("microUsdPerMillionOutputTokens: must be an integer >= 0");
      return problems;
    }
    default:
      // A value read back from config or storage may carry any kind: name it rather than throw.
      return [`pricing.kind: unknown ${String((pricing as { kind: unknown }).kind)}`];
  }
}

export function validateBudget(budget: Budget): string[] {
  const problems: string[] = [];
  const day = budget.budgetMicroUsdPerDay;
  const month = budget.budgetMicroUsdPerMonth;
  if (day !== undefined && !isNonNegativeInteger(day))
    problems.push("budgetMicroUsdPerDay: must be an integer >= 0");
  if (month !== undefined && !isNonNegativeInteger(month))
    problems.push("budgetMicroUsdPerMonth: must be an integer >= 0");
  if (!isTimeZone(budget.timeZone)) problems.push(`timeZone: ${budget.timeZone} is not an IANA time zone`);
  if (!(isNonNegativeInteger(budget.stopLeadMs) && budget.stopLeadMs <= MAX_STOP_LEAD_MS))
    problems.push(`stopLeadMs: must be an integer in [0, ${MAX_STOP_LEAD_MS}]`);
  return problems;
}

/** What the ledger reads from an adapter's capabilities: who bills, and per what granule. */
export function validateBillingCapabilities(caps: ProviderCapabilities): string[] {
  const problems: string[] = [];
  if (caps.provider.trim() === "") problems.push("capabilities.provider: must not be empty");
  const g = caps.billingGranularityMs;
  if (!(Number.isSafeInteger(g) && g >= 1 && g <= MAX_BILLING_GRANULARITY_MS))
    problems.push(
      `capabilities.billingGranularityMs: must be an integer in [1, ${MAX_BILLING_GRANULARITY_MS}]`,
    );
  return problems;
}

export function validateTokens(tokens: TokenCounts, what: string): string[] {
  const problems: string[] = [];
  if (!isNonNegativeInteger(tokens.inputTokens))
    problems.push(`${what}.inputTokens: must be an integer >= 0`);
  if (!isNonNegativeInteger(tokens.outputTokens))
    problems.push(`${what}.outputTokens: must be an integer >= 0`);
  return problems;
}

export function validateId(id: string, what: string): string[] {
  return id.trim() === "" ? [`${what}: must not be empty`] : [];
}

/**
 * Only the hosting contract's four evidence kinds close an episode. A value of another kind (a
 * disconnect, an expired lease, a restart, a partial listing) is refused with the reason.
 */
export function evidenceProblem(evidence: Evidence): string | undefined {
  const kind: unknown = (evidence as { kind?: unknown }).kind;
  if (!(EVIDENCE_KINDS as readonly unknown[]).includes(kind))
    return `${String(kind)} is not evidence (only ${EVIDENCE_KINDS.join(", ")})`;
  if (!isWallMs(evidence.observedAtMs)) return "evidence.observedAtMs: must be integer epoch milliseconds";
  switch (evidence.kind) {
    case "external-confirmation":
      return evidence.confirmedBy.trim() === "" ? "external-confirmation must name who confirmed" : undefined;
    case "provider-reported-billing-ended":
      return evidence.status.trim() === ""
        ? "provider-reported-billing-ended must carry the provider's state"
        : undefined;
    case "absent-from-complete-listing":
    case "stop-accepted":
      return undefined;
    default:
      return assertNever(evidence, "evidence");
  }
}
