/**
 * The durable state of the hosting contract: deployment records, stop obligations and lease
 * high-water marks. Plain, JSON-shaped, immutable values, so a store can persist them as they are.
 * Every record carries `rev`, the state version that last changed it: a store writes only the
 * records with `rev` above the version it last committed.
 * Must not know: how it is stored.
 */

import type { ProvisionedDeployment, DeploymentSpec } from "./deployment.js";
import type { ComputeAuthorization, Evidence, StopReason } from "./evidence.js";
import type { ResourceKey, ResourceSlot } from "./identity.js";
import type { Phase } from "./lifecycle.js";
import type { ProviderCapabilities, StopMode } from "./provider-port.js";

export type DeploymentId = string;

/** How a record came to exist. */
export type DeploymentOrigin =
  /** Declared by us and created through the provider. */
  | "create"
  /** A resource that exists already (exact key), brought into use by us: resumed when paused. */
  | "resume"
  /** Found by reconciliation: our owner tag, no live record. Recorded only to be stopped. */
  | "orphan";

export interface LeaseHolder {
  readonly controllerId: string;
  readonly epoch: number;
  /** Monotonic expiry; meaningless after a restart, which drops every lease. */
  readonly expiresAtMonoMs: number;
}

/** The intent to create (or resume), persisted before the call is sent. */
export interface CreateIntent {
  readonly requestId: string;
  readonly epoch: number;
  /** Wall time the create was (about to be) sent first. */
  readonly sentAtMs: number;
  /** Wall time of the latest send (a retry with the idempotency key sends again). */
  readonly lastSentAtMs: number;
  readonly idempotencyKey?: string;
  /** What became of the answer, once known. */
  readonly answer?: "created" | "resumed" | "refused" | "lost";
  /** A create retry with the idempotency key is in flight. */
  readonly retryInFlight?: boolean;
}

export interface DeploymentRecord {
  readonly id: DeploymentId;
  readonly rev: number;
  readonly origin: DeploymentOrigin;
  readonly slot: ResourceSlot;
  /** Known once the provider assigned an incarnation (create answer or reconciliation); a resume's from the start. */
  readonly key?: ResourceKey;
  readonly ownerTag: string;
  /** What a create asked for. Absent for a resume (the resource exists) and an orphan (only to be stopped). */
  readonly spec?: DeploymentSpec;
  readonly authorization?: ComputeAuthorization;
  /** The adapter's capabilities as declared when the record was made. */
  readonly capabilities: ProviderCapabilities;
  readonly phase: Phase;
  readonly declaredAtMs: number;
  readonly intent?: CreateIntent;
  /** Latest observation. Dropped on restart (liveness is not durable). */
  readonly observed?: ProvisionedDeployment;
  /** Wall time the resource was first seen charging, for lifetime ceilings and the ledger. */
  readonly firstChargingAtMs?: number;
  /** The resource has appeared in a listing at least once (listing lag no longer applies). */
  readonly seenInListing: boolean;
  readonly stopReason?: StopReason;
  readonly stopMode?: StopMode;
  readonly stopAttempts: number;
  readonly lastStopAttemptAtMs?: number;
  /** The provider's retry-after on the last unconfirmed stop: no attempt before this (epoch ms). */
  readonly stopNotBeforeMs?: number;
  /** Highest epoch ever granted for this deployment. Durable; never reused. */
  readonly leaseHighWater: number;
  /** Current lease. Dropped on restart. */
  readonly lease?: LeaseHolder;
}

/** What opened an obligation: a create or resume about to be sent, or an orphan found billing. */
export type ObligationCause = "create-intent" | "resume-intent" | "orphan";

export type ObligationState = "open" | "discharged" | "transferred";

/** A finalizer on a billed resource: open before it can bill, closed only by evidence. */
export interface StopObligation {
  /** One obligation per deployment record; the id is the deployment's id. */
  readonly deploymentId: DeploymentId;
  readonly rev: number;
  readonly openedAtMs: number;
  readonly openedBecause: ObligationCause;
  readonly state: ObligationState;
  /** The resource it covers, once known. */
  readonly key?: ResourceKey;
  readonly slot: ResourceSlot;
  readonly evidence?: Evidence;
  readonly closedAtMs?: number;
  /** For `transferred`: who holds the obligation now. */
  readonly transferredTo?: TransferTarget;
}

export interface TransferTarget {
  readonly controllerId: string;
  readonly epoch: number;
}

export interface HostingState {
  /** Incremented by every accepted input; the store's compare-and-set version. */
  readonly version: number;
  readonly deployments: Readonly<Record<DeploymentId, DeploymentRecord>>;
  readonly obligations: Readonly<Record<DeploymentId, StopObligation>>;
}

export const EMPTY_STATE: HostingState = { version: 0, deployments: {}, obligations: {} };

/** Phases in which a resource may bill and must have an open obligation. */
export function mayBill(record: DeploymentRecord): boolean {
  switch (record.phase) {
    case "Declared":
      return record.intent !== undefined;
    case "Requested":
    case "Uncertain":
    case "Active":
    case "StopRequired":
      return true;
    case "Stopped":
    case "Cancelled":
    case "Disowned":
      return false;
  }
}

export function openObligations(state: HostingState): StopObligation[] {
  return Object.values(state.obligations).filter((o) => o.state === "open");
}

export function liveRecords(state: HostingState): DeploymentRecord[] {
  return Object.values(state.deployments).filter(
    (d) => d.phase !== "Stopped" && d.phase !== "Cancelled" && d.phase !== "Disowned",
  );
}
