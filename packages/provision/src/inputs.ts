/**
 * Everything `decide()` accepts, refuses, commands and reports. Inputs are what the shell observed
 * or was asked; commands are what it must do next; events are what happened, for the ledger,
 * history and logs. Refusals are results, never exceptions.
 * Must not know: how any of them is carried out.
 */

import type { DeploymentSpec, ResourceReport } from "./deployment.js";
import type { ComputeAuthorization, Evidence, StopReason } from "./evidence.js";
import type { ResourceKey } from "./identity.js";
import type { IllegalTransition, Phase } from "./lifecycle.js";
import type { HostingPolicy } from "./policy.js";
import type {
  CreateOutcome,
  CreateRequest,
  ProviderCapabilities,
  ResumeOutcome,
  StopMode,
  StopOutcome,
} from "./provider-port.js";
import type { DeploymentId, HostingState, ObligationCause, TransferTarget } from "./state.js";
import type { Instant } from "./time.js";

/** Who is acting, under which lease epoch. Every mutation of an existing record carries one. */
export interface LeaseClaim {
  readonly controllerId: string;
  readonly epoch: number;
}

export type Input =
  | {
      readonly type: "Declare";
      readonly id: DeploymentId;
      readonly spec: DeploymentSpec;
      readonly ownerTag: string;
      readonly capabilities: ProviderCapabilities;
      readonly authorization: ComputeAuthorization | undefined;
      readonly policy: HostingPolicy;
      readonly at: Instant;
    }
  | {
      /** Bring an existing resource (this exact key) into use: declared like a create, under a ledger authorization. */
      readonly type: "DeclareResume";
      readonly id: DeploymentId;
      readonly key: ResourceKey;
      readonly ownerTag: string;
      readonly capabilities: ProviderCapabilities;
      readonly authorization: ComputeAuthorization | undefined;
      readonly policy: HostingPolicy;
      readonly at: Instant;
    }
  | {
      readonly type: "AcquireLease";
      readonly id: DeploymentId;
      readonly controllerId: string;
      readonly ttlMs: number;
      readonly at: Instant;
    }
  | {
      readonly type: "ReleaseLease";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly at: Instant;
    }
  | { readonly type: "Cancel"; readonly id: DeploymentId; readonly lease: LeaseClaim; readonly at: Instant }
  | {
      readonly type: "BeginCreate";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly requestId: string;
      readonly at: Instant;
    }
  | {
      readonly type: "RetryCreate";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly at: Instant;
    }
  | {
      readonly type: "CreateAnswered";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly outcome: CreateOutcome;
      readonly at: Instant;
    }
  | {
      readonly type: "BeginResume";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly requestId: string;
      readonly at: Instant;
    }
  | {
      readonly type: "ResumeAnswered";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly outcome: ResumeOutcome;
      readonly at: Instant;
    }
  | {
      readonly type: "Observed";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly report: ResourceReport;
      /** Where the report came from; only a listing proves the resource is visible in listings. */
      readonly source: "listing" | "describe";
      readonly at: Instant;
    }
  | {
      readonly type: "AbsentFromListing";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly listing: { readonly complete: boolean; readonly startedAtMs: number };
      readonly at: Instant;
    }
  | {
      readonly type: "RequireStop";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly reason: StopReason;
      readonly at: Instant;
    }
  | {
      readonly type: "StopAnswered";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly mode: StopMode;
      readonly outcome: StopOutcome;
      readonly at: Instant;
    }
  | {
      readonly type: "ConfirmExternally";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly confirmedBy: string;
      readonly note: string;
      readonly at: Instant;
    }
  | {
      readonly type: "Disown";
      readonly id: DeploymentId;
      readonly lease: LeaseClaim;
      readonly transferredTo: TransferTarget;
      readonly at: Instant;
    }
  | {
      readonly type: "RecordOrphan";
      readonly id: DeploymentId;
      readonly report: ResourceReport;
      readonly ownerTag: string;
      readonly capabilities: ProviderCapabilities;
      readonly reason: "orphan" | "billing-after-stop";
      readonly at: Instant;
    };

export type InputType = Input["type"];

export type Command =
  | { readonly type: "CreateResource"; readonly id: DeploymentId; readonly request: CreateRequest }
  | { readonly type: "ResumeResource"; readonly id: DeploymentId; readonly key: ResourceKey }
  | {
      readonly type: "StopResource";
      readonly id: DeploymentId;
      readonly key: ResourceKey;
      readonly mode: StopMode;
    };

export type HostingEvent =
  | { readonly type: "DeploymentDeclared"; readonly id: DeploymentId; readonly atMs: number }
  | {
      readonly type: "LeaseGranted";
      readonly id: DeploymentId;
      readonly controllerId: string;
      readonly epoch: number;
    }
  | {
      readonly type: "CreateIntentRecorded";
      readonly id: DeploymentId;
      readonly requestId: string;
      readonly atMs: number;
    }
  | {
      /** A resume is about to be sent: from now on the resource may bill under this record. */
      readonly type: "ResumeIntentRecorded";
      readonly id: DeploymentId;
      readonly requestId: string;
      readonly key: ResourceKey;
      readonly atMs: number;
    }
  | {
      readonly type: "ObligationOpened";
      readonly id: DeploymentId;
      readonly because: ObligationCause;
      readonly key?: ResourceKey;
      readonly atMs: number;
    }
  | {
      readonly type: "PhaseChanged";
      readonly id: DeploymentId;
      readonly from: Phase;
      readonly to: Phase;
      readonly atMs: number;
    }
  | {
      readonly type: "CreateOutcomeUncertain";
      readonly id: DeploymentId;
      readonly answer: "refused" | "lost";
      readonly detail: string;
    }
  | {
      /** The resume was refused or its answer lost: whether it took effect only reconciliation can tell. */
      readonly type: "ResumeOutcomeUncertain";
      readonly id: DeploymentId;
      readonly answer: "refused" | "lost";
      readonly detail: string;
    }
  | {
      /** A provider report of the resource; `charging` per the adapter's declared charging states. */
      readonly type: "ResourceObserved";
      readonly id: DeploymentId;
      readonly key: ResourceKey;
      readonly status: string | undefined;
      readonly charging: boolean;
      readonly atMs: number;
    }
  | {
      readonly type: "StopRequired";
      readonly id: DeploymentId;
      readonly reason: StopReason;
      readonly atMs: number;
    }
  | {
      readonly type: "StopFailed";
      readonly id: DeploymentId;
      readonly detail: string;
      readonly attempts: number;
    }
  | {
      readonly type: "ObligationDischarged";
      readonly id: DeploymentId;
      readonly key: ResourceKey | undefined;
      readonly evidence: Evidence;
      readonly atMs: number;
    }
  | {
      readonly type: "ObligationTransferred";
      readonly id: DeploymentId;
      readonly to: TransferTarget;
      readonly atMs: number;
    }
  | {
      readonly type: "OrphanRecorded";
      readonly id: DeploymentId;
      readonly key: ResourceKey;
      readonly reason: "orphan" | "billing-after-stop";
      readonly createdAtMs: number | undefined;
      /** The provider's state word when found, and whether that state charges (as in ResourceObserved). */
      readonly status: string | undefined;
      readonly charging: boolean;
      readonly atMs: number;
    };

export type Refusal =
  | { readonly code: "unknown-deployment"; readonly id: DeploymentId }
  | { readonly code: "duplicate-deployment"; readonly id: DeploymentId }
  | { readonly code: "authorization-required"; readonly id: DeploymentId }
  | { readonly code: "max-active-exceeded"; readonly limit: number }
  | { readonly code: "invalid-input"; readonly detail: string }
  | { readonly code: "no-lease"; readonly id: DeploymentId }
  | {
      readonly code: "stale-epoch";
      readonly id: DeploymentId;
      readonly epoch: number;
      readonly current: number;
    }
  | { readonly code: "lease-expired"; readonly id: DeploymentId }
  | { readonly code: "lease-held"; readonly id: DeploymentId; readonly holder: string }
  | (IllegalTransition & { readonly id: DeploymentId })
  | {
      readonly code: "wrong-phase";
      readonly id: DeploymentId;
      readonly phase: Phase;
      readonly expected: string;
    }
  | { readonly code: "key-mismatch"; readonly id: DeploymentId; readonly detail: string }
  | { readonly code: "not-evidence"; readonly id: DeploymentId; readonly detail: string }
  | { readonly code: "blind-retry-refused"; readonly id: DeploymentId }
  | { readonly code: "foreign-resource"; readonly key: ResourceKey }
  | { readonly code: "already-recorded"; readonly key: ResourceKey; readonly by: DeploymentId };

/**
 * Every refusal's code, as data (docs/errors.md lists each; a test compares). The `satisfies` and the
 * check below fail to compile when a code is added to `Refusal` and not here, or the reverse.
 */
export const REFUSAL_CODES = [
  "unknown-deployment",
  "duplicate-deployment",
  "authorization-required",
  "max-active-exceeded",
  "invalid-input",
  "no-lease",
  "stale-epoch",
  "lease-expired",
  "lease-held",
  "illegal-transition",
  "wrong-phase",
  "key-mismatch",
  "not-evidence",
  "blind-retry-refused",
  "foreign-resource",
  "already-recorded",
] as const satisfies readonly Refusal["code"][];

/** Compiles only while REFUSAL_CODES holds every code of `Refusal`. */
const _everyRefusalCode: Exclude<Refusal["code"], (typeof REFUSAL_CODES)[number]> extends never
  ? true
  : never = true;

export interface Decision {
  readonly state: HostingState;
  readonly commands: readonly Command[];
  readonly events: readonly HostingEvent[];
}
