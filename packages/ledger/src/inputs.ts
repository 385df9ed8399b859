/**
 * Everything the ledger's `decide()` accepts, commands, reports and refuses. Inputs are what the
 * sponsor was asked or observed (the hosting contract's events among them); commands are what it must
 * do next; events are what happened; entries and workload costs are appended to the history.
 * Refusals are results, never exceptions.
 * Must not know: how any command is carried out, or how anything is stored.
 */

import type {
  ComputeAuthorization,
  DeploymentId,
  Evidence,
  HostingEvent,
  Instant,
  ProviderCapabilities,
  StopReason,
} from "@pair/provision";
import type { LedgerEntry, WorkloadCost } from "./entries.js";
import type { TokenCounts } from "./money.js";
import type {
  Budget,
  BudgetWindow,
  LedgerState,
  NodeId,
  NodePricing,
  RequestId,
  ReservationId,
  WorkloadAttribution,
} from "./state.js";

/** Where a request goes. Local routes cost nothing and are never blocked by a budget. */
export type RouteRef = { readonly kind: "local" } | { readonly kind: "rented"; readonly nodeId: NodeId };

/** Which reservation pays for a deployment the ledger has not authorized (an orphan). */
export interface OrphanBinding {
  readonly reservationId: ReservationId;
  readonly capabilities: ProviderCapabilities;
}

export type LedgerInput =
  | {
      readonly type: "OpenReservation";
      readonly reservationId: ReservationId;
      readonly nodeId: NodeId;
      readonly pricing: NodePricing;
      readonly budget: Budget;
      readonly at: Instant;
    }
  | { readonly type: "ChangeBudget"; readonly nodeId: NodeId; readonly budget: Budget; readonly at: Instant }
  | {
      readonly type: "ChangePrice";
      readonly nodeId: NodeId;
      readonly pricing: NodePricing;
      readonly at: Instant;
    }
  | {
      /** Issue a ComputeAuthorization for a deployment about to be declared. */
      readonly type: "Authorize";
      readonly reservationId: ReservationId;
      readonly deploymentId: DeploymentId;
      readonly capabilities: ProviderCapabilities;
      readonly at: Instant;
    }
  | {
      /** An event of the hosting contract. `bind` is needed only for an orphan the ledger never authorized. */
      readonly type: "HostingEventReported";
      readonly event: HostingEvent;
      readonly bind?: OrphanBinding;
      readonly at: Instant;
    }
  | {
      /** ConfirmStopped(evidence): the only input that closes an episode (also via ObligationDischarged). */
      readonly type: "ConfirmStopped";
      readonly deploymentId: DeploymentId;
      readonly evidence: Evidence;
      readonly at: Instant;
    }
  | {
      /** Before dispatch: reserve the estimate (tokens: prompt + max output) against the budget. */
      readonly type: "ReserveRequest";
      readonly requestId: RequestId;
      readonly route: RouteRef;
      readonly estimate?: TokenCounts;
      readonly attribution?: WorkloadAttribution;
      readonly at: Instant;
    }
  | {
      /** On completion: enter what the response reported (the estimate when it reported nothing). */
      readonly type: "SettleRequest";
      readonly requestId: RequestId;
      readonly usage: TokenCounts | undefined;
      readonly at: Instant;
    }
  | { readonly type: "ReleaseRequest"; readonly requestId: RequestId; readonly at: Instant }
  | { readonly type: "SessionStarted"; readonly at: Instant }
  | { readonly type: "Tick"; readonly at: Instant };

export type LedgerInputType = LedgerInput["type"];

export type LedgerCommand = {
  readonly type: "RequireStop";
  readonly deploymentId: DeploymentId;
  readonly reason: Extract<StopReason, "budget-exceeded">;
};

export type LedgerEvent =
  | {
      readonly type: "ReservationOpened";
      readonly reservationId: ReservationId;
      readonly nodeId: NodeId;
      readonly atMs: number;
    }
  | {
      readonly type: "BudgetChanged";
      readonly nodeId: NodeId;
      readonly budget: Budget;
      readonly atMs: number;
    }
  | {
      readonly type: "PriceChanged";
      readonly nodeId: NodeId;
      readonly pricing: NodePricing;
      readonly atMs: number;
    }
  | {
      readonly type: "AuthorizationIssued";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      readonly authorization: ComputeAuthorization;
      readonly atMs: number;
    }
  | {
      readonly type: "EpisodeOpened";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      readonly openedBy: "intent" | "observation" | "orphan";
      readonly startedAtMs: number;
      readonly startKnown: boolean;
    }
  | {
      readonly type: "EpisodeClosed";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      readonly evidence: Evidence;
      readonly accruedMicroUsd: number;
      readonly atMs: number;
    }
  | {
      readonly type: "StopConfirmedBeforeBilling";
      readonly deploymentId: DeploymentId;
      readonly evidence: Evidence;
      readonly atMs: number;
    }
  | {
      readonly type: "BudgetStopRequired";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      readonly window: BudgetWindow;
      readonly atMs: number;
    }
  | {
      readonly type: "RouteMarkedIneligible";
      readonly nodeId: NodeId;
      readonly reason: "budget-exceeded";
      readonly window: BudgetWindow;
      readonly untilMs: number;
      readonly atMs: number;
    }
  | {
      readonly type: "RouteEligibleAgain";
      readonly nodeId: NodeId;
      readonly because: "window-reset" | "cap-raised";
      readonly atMs: number;
    }
  | {
      readonly type: "RequestReserved";
      readonly requestId: RequestId;
      readonly nodeId: NodeId;
      readonly heldMicroUsd: number;
      readonly atMs: number;
    }
  | {
      readonly type: "RequestSettled";
      readonly requestId: RequestId;
      readonly nodeId: NodeId;
      readonly estimatedCostMicroUsd: number;
      readonly atMs: number;
    }
  | {
      readonly type: "RequestReleased";
      readonly requestId: RequestId;
      readonly nodeId: NodeId;
      readonly atMs: number;
    }
  | {
      /**
       * Observed charging after an idle observation: the run starts at that idle observation, since
       * billing may have begun any time after it (charging-start.ts). `amountMicroUsd` is what was
       * entered at once for the granules started between the two observations.
       */
      readonly type: "RunBackdated";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      readonly lastIdleAtMs: number;
      readonly observedAtMs: number;
      readonly amountMicroUsd: number;
    }
  | {
      /** The first observation after a restart decided an outage noted at SessionStarted (outage.ts). */
      readonly type: "OutageSettled";
      readonly deploymentId: DeploymentId;
      readonly nodeId: NodeId;
      /** The outage: from the last observation before the restart to the session start. */
      readonly fromMs: number;
      readonly untilMs: number;
      readonly billedAs: "charging" | "idle";
      /** Start of the first granule entered for it (the grid extended back over `fromMs`). */
      readonly billedFromMs: number;
      readonly amountMicroUsd: number;
      readonly atMs: number;
    }
  | {
      readonly type: "SessionBegan";
      readonly atMs: number;
      /** Open episodes now taken as charging until observed. */
      readonly assumedCharging: number;
      /** Requests in flight at the restart, entered at their estimate. */
      readonly lostRequests: number;
    };

export type LedgerRefusal =
  | { readonly code: "invalid-input"; readonly detail: string }
  | { readonly code: "duplicate-reservation"; readonly reservationId: ReservationId; readonly nodeId: NodeId }
  | { readonly code: "unknown-reservation"; readonly reservationId: ReservationId }
  | { readonly code: "unknown-node"; readonly nodeId: NodeId }
  | {
      readonly code: "budget-exceeded";
      readonly nodeId: NodeId;
      readonly window: BudgetWindow;
      readonly capMicroUsd: number;
      readonly spentMicroUsd: number;
      readonly heldMicroUsd: number;
      /** What the refused request or deployment needed (0 when the route is marked ineligible). */
      readonly neededMicroUsd: number;
      /** When the window resets. */
      readonly untilMs: number;
    }
  | { readonly code: "already-bound"; readonly deploymentId: DeploymentId }
  | { readonly code: "unbound-deployment"; readonly deploymentId: DeploymentId }
  | { readonly code: "episode-closed"; readonly deploymentId: DeploymentId }
  | { readonly code: "not-evidence"; readonly deploymentId: DeploymentId; readonly detail: string }
  | { readonly code: "duplicate-request"; readonly requestId: RequestId }
  | { readonly code: "unknown-request"; readonly requestId: RequestId };

export interface LedgerDecision {
  readonly state: LedgerState;
  readonly commands: readonly LedgerCommand[];
  readonly events: readonly LedgerEvent[];
  /** Entries made by this decision, numbered from the previous state's `nextEntrySeq`. */
  readonly entries: readonly LedgerEntry[];
  /** Requests that ended in this decision. */
  readonly workloads: readonly WorkloadCost[];
}
