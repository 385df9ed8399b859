/**
 * The port every hosting adapter implements (Runpod, Hugging Face Endpoints, Hugging Face Jobs, the
 * FakeProvider). The core never calls it: the controller shell does, and feeds what it observed back
 * into `decide()`. Outcomes are unions: a transport failure on create is `lost`, not an exception.
 * Must not know: HTTP, credentials, retries (the adapter owns those).
 */

import type { DeploymentSpec, ResourceReport } from "./deployment.js";
import type { ResourceKey } from "./identity.js";

/** What an adapter declares about its provider. The core's evidence rules read these. */
export interface ProviderCapabilities {
  readonly provider: string;
  /** The provider honours an idempotency key on create, so a lost create may be retried with it. */
  readonly idempotencyKeys: boolean;
  /** Pause and resume exist (a paused resource bills nothing and keeps its identity). */
  readonly pauseResume: boolean;
  /** Observed states that end billing: a report of one of these is evidence. Runpod: `TERMINATED`. */
  readonly billingEndedStatuses: readonly string[];
  /** Observed states in which the provider charges (for accrual). */
  readonly chargingStatuses: readonly string[];
  /**
   * Observed states that neither charge nor end the obligation (Hugging Face `scaledToZero`: any
   * request wakes it without us). A state in none of the three lists is taken as charging.
   */
  readonly idleStatuses: readonly string[];
  /** Billing unit: 60 000 for "per started minute", 1 000 for per second. */
  readonly billingGranularityMs: number;
  /**
   * Longest time a created resource may take to appear in a listing. Absence from a complete
   * listing is evidence only for a listing started at least this long after the create was sent,
   * or for a resource already seen in a listing.
   */
  readonly maxListingLagMs: number;
  /**
   * After an accepted stop, how long the provider may still report the resource charging. A resource
   * still charging after this is recorded again, with a new obligation (`billing-after-stop`).
   */
  readonly stopSettleMs: number;
  /**
   * Allowance for a stop's own latency: from sending it until the provider stops billing. A budget
   * stop goes out at least this long before the billing unit that would cross a cap starts.
   */
  readonly stopLatencyMs: number;
  /** How a stop is performed by default: pause (keeps the resource) or terminate. */
  readonly stopMode: StopMode;
}

export type StopMode = "pause" | "terminate";

export interface CreateRequest {
  readonly spec: DeploymentSpec;
  /** Written into the resource so reconciliation can find what a lost answer left behind. */
  readonly requestId: string;
  /** Written into the resource; only resources with our tag are ever adopted or stopped. */
  readonly ownerTag: string;
  /** The lease epoch the create was issued under; written into the resource. */
  readonly epoch: number;
  /** Sent only when the provider declares idempotency-key support. */
  readonly idempotencyKey?: string;
}

export type CreateOutcome =
  /** The provider answered with the new resource. */
  | { readonly kind: "created"; readonly report: ResourceReport }
  /** The provider answered with a refusal. Whether anything was created is still not known for sure. */
  | { readonly kind: "refused"; readonly code: string; readonly message: string }
  /** No answer (timeout, reset, 5xx after sending): a billed resource may or may not exist. */
  | { readonly kind: "lost"; readonly cause: string };

export interface Listing {
  /** True only when the provider's listing covered every resource of the account (all pages). */
  readonly complete: boolean;
  /** When the listing was requested (epoch ms); evidence from it is as old as this. */
  readonly startedAtMs: number;
  readonly resources: readonly ResourceReport[];
}

export type DescribeOutcome =
  | { readonly kind: "found"; readonly report: ResourceReport }
  | { readonly kind: "not-found" }
  | { readonly kind: "unknown"; readonly cause: string };

/** `retryAfterMs`: the provider asked for no new attempt sooner (a 429's retry-after). */
export type StopOutcome =
  | { readonly kind: "accepted" }
  | {
      readonly kind: "refused";
      readonly code: string;
      readonly message: string;
      readonly retryAfterMs?: number;
    }
  | { readonly kind: "unknown"; readonly cause: string; readonly retryAfterMs?: number };

export type ResumeOutcome = StopOutcome;

export interface ProviderPort {
  readonly capabilities: ProviderCapabilities;
  create(request: CreateRequest): Promise<CreateOutcome>;
  /** Every resource of the account visible to the credential, ours and others'. */
  list(): Promise<Listing>;
  describe(key: ResourceKey): Promise<DescribeOutcome>;
  stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome>;
  /** Present only when `capabilities.pauseResume`. */
  resume?(key: ResourceKey): Promise<ResumeOutcome>;
}

/** Check an adapter's declared capabilities at construction (a limit on everything). */
export function validateCapabilities(caps: ProviderCapabilities): readonly string[] {
  const problems: string[] = [];
  if (caps.provider.length === 0) problems.push("provider: must not be empty");
  if (!(caps.billingGranularityMs >= 1)) problems.push("billingGranularityMs: must be >= 1");
  if (!(caps.maxListingLagMs >= 0)) problems.push("maxListingLagMs: must be >= 0");
  if (caps.billingEndedStatuses.length === 0)
    problems.push("billingEndedStatuses: name at least one state that ends billing");
  const lists = [caps.billingEndedStatuses, caps.chargingStatuses, caps.idleStatuses];
  const seen = new Set<string>();
  for (const list of lists)
    for (const s of list) {
      if (seen.has(s))
        problems.push(`status ${s}: declared in more than one of billing-ended, charging, idle`);
      seen.add(s);
    }
  if (!(caps.stopSettleMs >= 0)) problems.push("stopSettleMs: must be >= 0");
  if (!(caps.stopLatencyMs >= 0 && caps.stopLatencyMs <= 600_000))
    problems.push("stopLatencyMs: must be in [0, 600000]");
  if (caps.stopMode === "pause" && !caps.pauseResume) problems.push("stopMode pause needs pauseResume");
  return problems;
}
