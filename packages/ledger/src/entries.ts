/**
 * The ledger's history. An entry is money: billed time of an episode, or the token cost of a request.
 * Spend is the sum of entries, nothing else. A workload cost says what one request is estimated to
 * have cost and who asked; it is attribution, not spend (an hourly node's time is already entered by
 * its episode). Both are append-only and never change once written.
 * Must not know: how they are stored or shown.
 */

import type { DeploymentId } from "@pair/provision";
import type { NodeId, PricingKind, RequestId, ReservationId, WorkloadAttribution } from "./state.js";

export const ENTRY_KINDS = ["billed-time", "token-usage"] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

interface EntryBase {
  /** 0, 1, 2, … in the order entered, without gaps. */
  readonly seq: number;
  readonly reservationId: ReservationId;
  readonly nodeId: NodeId;
  /** When the money was spent: the first granule's start, or when the request was dispatched. */
  readonly atMs: number;
  readonly amountMicroUsd: number;
  /** When the ledger entered it. */
  readonly recordedAtMs: number;
}

/** Whole billed granules of one episode, all starting within one local day, at one rate. */
export interface BilledTimeEntry extends EntryBase {
  readonly kind: "billed-time";
  readonly deploymentId: DeploymentId;
  /** Index of the first granule on the run's grid, and how many. */
  readonly firstGranule: number;
  readonly granules: number;
  readonly granularityMs: number;
  readonly rateMicroUsdPerHour: number;
}

/** One request on a per-token route. */
export interface TokenUsageEntry extends EntryBase {
  readonly kind: "token-usage";
  readonly requestId: RequestId;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** False when the response reported no usage and the estimate was entered instead. */
  readonly usageReported: boolean;
  readonly estimateMicroUsd: number;
}

export type LedgerEntry = BilledTimeEntry | TokenUsageEntry;

/** The start of the last granule a billed-time entry covers. */
export function lastGranuleStartMs(entry: BilledTimeEntry): number {
  return entry.atMs + (entry.granules - 1) * entry.granularityMs;
}

export const WORKLOAD_OUTCOMES = ["settled", "released", "lost-in-restart"] as const;
export type WorkloadOutcome = (typeof WORKLOAD_OUTCOMES)[number];

/** What one request to a rented node is estimated to have cost, and for whom. */
export interface WorkloadCost {
  readonly requestId: RequestId;
  readonly reservationId: ReservationId;
  /** The rented node that served it. */
  readonly nodeId: NodeId;
  readonly pricingKind: PricingKind;
  readonly attribution: WorkloadAttribution;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  readonly outcome: WorkloadOutcome;
  /** Hourly: its share of the node's billed time while it ran. Per-token: its token cost. */
  readonly estimatedCostMicroUsd: number;
  /** The token-usage entry, when one was made. */
  readonly entrySeq?: number;
}
