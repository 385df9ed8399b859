/**
 * The durable state of the spending ledger: reservations (one budget envelope per rented node),
 * deployment bindings (who authorized what), billing episodes, and requests in flight. Plain,
 * JSON-shaped, immutable values. Every record carries `rev`, the state version that last changed it,
 * so a store writes only what changed since the version it last committed.
 * Entries and workload costs are not kept here: a decision emits them and the store appends them,
 * so the state stays small however long the history grows. Spend per local day is kept instead.
 * Must not know: how it is stored, what a provider is called, the clock.
 */

import type { DeploymentId, Evidence, ResourceKey } from "@pair/provision";
import type { TokenCounts, TokenPrices } from "./money.js";

export type NodeId = string;
export type ReservationId = string;
export type RequestId = string;

/** How a rented node is priced. One of the two, never both. */
export type NodePricing =
  | { readonly kind: "hourly"; readonly priceMicroUsdPerHour: number }
  | ({ readonly kind: "per-token" } & TokenPrices);

export type PricingKind = NodePricing["kind"];

export const BUDGET_WINDOWS = ["day", "month"] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];

/** The caps of one rented node. An absent cap is no cap. */
export interface Budget {
  /** `usd_per_day`, in micro-dollars. */
  readonly budgetMicroUsdPerDay?: number;
  /** `usd_per_month`, in micro-dollars. */
  readonly budgetMicroUsdPerMonth?: number;
  /** IANA zone the day and month windows are counted in (the sponsor's). */
  readonly timeZone: string;
  /**
   * A budget stop is issued this long before the billed granule that would cross a cap starts, so
   * that it lands in time (`stopLeadMsFor`: the stop's latency and the wait for the pass issuing it).
   * 0 issues it at the granule's start.
   */
  readonly stopLeadMs: number;
}

/** Why a route may not take requests now, and until when. */
export interface IneligibleMark {
  readonly reason: "budget-exceeded";
  readonly window: BudgetWindow;
  /** The window's key (`2026-01-31` or `2026-01`) when the mark was set. */
  readonly windowKey: string;
  /** The window resets here; the mark lapses with it. */
  readonly untilMs: number;
  /** The cap that was reached; raising the cap above it lifts the mark. */
  readonly capMicroUsd: number;
  readonly markedAtMs: number;
}

/** A budget envelope for one rented node. */
export interface Reservation {
  readonly reservationId: ReservationId;
  readonly nodeId: NodeId;
  readonly rev: number;
  readonly openedAtMs: number;
  readonly pricing: NodePricing;
  readonly budget: Budget;
  /** Σ entries per local day (`2026-01-31`, in the zone the budget had when each was entered). */
  readonly spentByDayMicroUsd: Readonly<Record<string, number>>;
  readonly spentTotalMicroUsd: number;
  /** Σ entries entered since the current session started. */
  readonly spentThisSessionMicroUsd: number;
  /** In-flight hourly workloads have been given their share of billed time up to here. */
  readonly attributedUntilMs: number;
  readonly ineligible?: IneligibleMark;
}

/** Which reservation pays for a deployment, and how its provider bills. */
export interface DeploymentBinding {
  readonly deploymentId: DeploymentId;
  readonly rev: number;
  readonly reservationId: ReservationId;
  readonly nodeId: NodeId;
  /** From `ProviderCapabilities.billingGranularityMs` at binding time. */
  readonly billingGranularityMs: number;
  readonly provider: string;
  /** A ComputeAuthorization was issued for it, or the sponsor bound it (an orphan). */
  readonly boundBy: "authorization" | "sponsor";
  readonly boundAtMs: number;
  /** Evidence came before any observation: nothing billed is known, and nothing more will accrue. */
  readonly closedWithoutEpisode?: { readonly evidence: Evidence; readonly atMs: number };
}

/**
 * The last word about the resource. `unknown`: nothing observed since a restart, or an orphan recorded
 * without a state; taken as charging until an observation says otherwise.
 */
export type LastObservation = "charging" | "idle" | "unknown";

/**
 * A stretch of charging on one granule grid. Granule `k` starts at `anchorMs + k × granularity` and is
 * billed as soon as it starts, at the rate in force when it starts.
 */
export interface ChargingRun {
  readonly anchorMs: number;
  readonly rateMicroUsdPerHour: number;
  /** The first granule billed at `rateMicroUsdPerHour`. */
  readonly rateFromGranule: number;
  /** Granules `[0, billedGranules)` have been entered. */
  readonly billedGranules: number;
  /** Micro-dollars entered for granules `[rateFromGranule, billedGranules)`; rounding is per rate, not per granule. */
  readonly billedAtRateMicroUsd: number;
}

/**
 * A sponsor outage of an episode last seen idle: from that observation to the session start. Whether
 * it is billed as charging waits for the first observation after the restart.
 */
export interface PendingOutage {
  readonly fromMs: number;
  readonly untilMs: number;
}

/** One deployment's billed time, from its first sighting until evidence says it stopped. */
export interface BillingEpisode {
  readonly deploymentId: DeploymentId;
  readonly rev: number;
  readonly reservationId: ReservationId;
  readonly nodeId: NodeId;
  readonly key?: ResourceKey;
  readonly billingGranularityMs: number;
  readonly openedBy: "intent" | "observation" | "orphan";
  /** When billing began: the first observation, an orphan's reported creation, or its first sighting. */
  readonly startedAtMs: number;
  /** False for an orphan whose creation time the provider did not report ("unknown, since first seen"). */
  readonly startKnown: boolean;
  readonly state: "open" | "closed";
  readonly lastObservation: LastObservation;
  /** Present while the episode accrues at a rate (last word: charging, or unknown). */
  readonly run?: ChargingRun;
  /** When the resource was last observed (absent in states written before it was kept). */
  readonly lastObservedAtMs?: number;
  /** An outage begun while the resource was last seen idle, decided at the next observation (outage.ts). */
  readonly outage?: PendingOutage;
  readonly accruedUntilMs: number;
  readonly accruedMicroUsd: number;
  /** A budget stop was required (once; the hosting contract retries the stop itself). */
  readonly stopRequiredAtMs?: number;
  readonly closedAtMs?: number;
  readonly evidence?: Evidence;
}

/** Who a workload was for, where known. */
export interface WorkloadAttribution {
  /** The cluster node the request entered through. */
  readonly originNodeId?: string;
  readonly requesterId?: string;
  readonly model?: string;
}

/** A request dispatched to a rented node and not yet settled or released. */
export interface InFlightRequest {
  readonly requestId: RequestId;
  readonly rev: number;
  readonly reservationId: ReservationId;
  readonly nodeId: NodeId;
  readonly pricingKind: PricingKind;
  /** Reserved against the budget until settled (0 on hourly routes: their time is billed by episode). */
  readonly heldMicroUsd: number;
  readonly estimate?: TokenCounts;
  readonly reservedAtMs: number;
  readonly attribution: WorkloadAttribution;
  /** Hourly routes: this request's share of the node's billed time so far, in nano-dollars. */
  readonly attributedNanoUsd: number;
}

export interface LedgerState {
  /** Incremented by every accepted input; the store's compare-and-set version. */
  readonly version: number;
  /** Names this ledger in every ComputeAuthorization it issues. */
  readonly ledgerId: string;
  /** The latest wall time the ledger acted at. An input stamped earlier acts at this time instead. */
  readonly clockMs: number;
  readonly sessionStartedAtMs: number;
  /** Sequence number the next entry gets. Entries are numbered 0, 1, 2, … without gaps. */
  readonly nextEntrySeq: number;
  readonly reservations: Readonly<Record<ReservationId, Reservation>>;
  readonly bindings: Readonly<Record<DeploymentId, DeploymentBinding>>;
  readonly episodes: Readonly<Record<DeploymentId, BillingEpisode>>;
  readonly inFlight: Readonly<Record<RequestId, InFlightRequest>>;
}

/** A new, empty ledger. */
export function emptyLedgerState(ledgerId: string): LedgerState {
  if (ledgerId.trim() === "") throw new RangeError("emptyLedgerState: ledgerId must not be empty");
  return {
    version: 0,
    ledgerId,
    clockMs: 0,
    sessionStartedAtMs: 0,
    nextEntrySeq: 0,
    reservations: {},
    bindings: {},
    episodes: {},
    inFlight: {},
  };
}

export function reservationOfNode(
  state: Pick<LedgerState, "reservations">,
  nodeId: NodeId,
): Reservation | undefined {
  return Object.values(state.reservations).find((r) => r.nodeId === nodeId);
}

export function openEpisodesOf(
  state: Pick<LedgerState, "episodes">,
  reservationId?: ReservationId,
): BillingEpisode[] {
  return Object.values(state.episodes).filter(
    (e) => e.state === "open" && (reservationId === undefined || e.reservationId === reservationId),
  );
}

export function inFlightOf(
  state: Pick<LedgerState, "inFlight">,
  reservationId: ReservationId,
): InFlightRequest[] {
  return Object.values(state.inFlight).filter((r) => r.reservationId === reservationId);
}
