/**
 * Level-triggered reconciliation: given the records and one provider listing, say what each listed
 * resource is to us and which records the listing proves absent. It returns a plan (inputs for
 * `decide`) and when to look again; it performs nothing and never creates anything.
 * Rules: an exact key observes its record; a create whose answer was lost is matched only by our owner
 * tag and its request id; a resource with our owner tag and no live record is an orphan (its obligation is
 * recorded first, then it is stopped); a resource of another owner is never touched.
 * Must not know: how listings are fetched or inputs applied.
 */

import type { ResourceReport } from "./deployment.js";
import { reportEndsBilling } from "./decide.js";
import { resourceKeyString, type ResourceSlot } from "./identity.js";
import type { Listing, ProviderCapabilities } from "./provider-port.js";
import { liveRecords, type DeploymentId, type DeploymentRecord, type HostingState } from "./state.js";

export interface ReconcileScope {
  readonly provider: string;
  readonly account: string;
  readonly ownerTag: string;
  readonly capabilities: ProviderCapabilities;
  /** Look again this soon while something is starting, uncertain or stopping. */
  readonly busyRequeueMs: number;
  /** Look again this soon when all is quiet (the periodic pass that repairs missed events). */
  readonly idleRequeueMs: number;
}

export interface OrphanFinding {
  readonly report: ResourceReport;
  readonly reason: "orphan" | "billing-after-stop";
}

export interface ReconcilePlan {
  readonly observe: readonly { readonly id: DeploymentId; readonly report: ResourceReport }[];
  readonly absent: readonly DeploymentId[];
  readonly orphans: readonly OrphanFinding[];
  /** Resources of other owners, left alone. */
  readonly foreign: number;
  readonly requeueAfterMs: number;
}

export function reconcile(
  state: HostingState,
  listing: Listing,
  scope: ReconcileScope,
  nowWallMs: number,
): ReconcilePlan {
  const inScope = (d: DeploymentRecord) =>
    d.slot.provider === scope.provider && d.slot.account === scope.account;
  const live = liveRecords(state).filter(inScope);
  const index = indexRecords(state, live, inScope);
  const observe: { id: DeploymentId; report: ResourceReport }[] = [];
  const orphans: OrphanFinding[] = [];
  const matched = new Set<DeploymentId>();
  let foreign = 0;

  for (const report of listing.resources) {
    if (report.key.provider !== scope.provider || report.key.account !== scope.account) continue;
    const byKey = index.liveByKey.get(resourceKeyString(report.key));
    if (byKey !== undefined) {
      if (byKey.phase === "Declared") continue; // create in flight: its answer comes first
      observe.push({ id: byKey.id, report });
      matched.add(byKey.id);
      continue;
    }
    if (report.ownerTag !== scope.ownerTag) {
      foreign += 1;
      continue;
    }
    const byRequest =
      report.requestId === undefined
        ? undefined
        : index.unkeyedByRequest.get(requestSlotString(report.requestId, report.key));
    if (byRequest !== undefined && !matched.has(byRequest.id)) {
      observe.push({ id: byRequest.id, report });
      matched.add(byRequest.id);
      continue;
    }
    // Create in flight for this request: wait for its answer.
    if (index.declaredRequests.has(report.requestId)) continue;
    // Ours, unrecorded, and able to bill (idle counts: any request may wake it): record and stop it.
    if (reportEndsBilling(scope.capabilities, report)) continue;
    const stoppedEarlier = index.finishedByKey.get(resourceKeyString(report.key));
    if (stoppedEarlier === undefined) {
      orphans.push({ report, reason: "orphan" });
      continue;
    }
    const closedAtMs = state.obligations[stoppedEarlier.id]?.closedAtMs ?? 0;
    if (nowWallMs >= closedAtMs + scope.capabilities.stopSettleMs)
      orphans.push({ report, reason: "billing-after-stop" });
  }

  const absent = listing.complete
    ? live
        .filter((d) => d.phase !== "Declared" && d.intent?.retryInFlight !== true && !matched.has(d.id))
        .map((d) => d.id)
    : [];
  const busy = live.some((d) => d.phase !== "Active") || orphans.length > 0;
  return {
    observe,
    absent,
    orphans,
    foreign,
    requeueAfterMs: busy ? scope.busyRequeueMs : scope.idleRequeueMs,
  };
}

/**
 * The lookups one pass makes per listed resource, built once per pass so that the pass is linear in
 * records + resources. Each map keeps the FIRST record in `state.deployments` order for its key, as the
 * linear scans it replaces (`find`) did.
 */
interface RecordIndex {
  /** Live records that have a key, by the whole key. */
  readonly liveByKey: ReadonlyMap<string, DeploymentRecord>;
  /** Live records without a key, past Declared, with an intent: by request id and slot. */
  readonly unkeyedByRequest: ReadonlyMap<string, DeploymentRecord>;
  /** Request ids of live Declared records (`undefined` when one has no intent). */
  readonly declaredRequests: ReadonlySet<string | undefined>;
  /** Finished (in scope, not live) records that have a key, by the whole key. */
  readonly finishedByKey: ReadonlyMap<string, DeploymentRecord>;
}

function indexRecords(
  state: HostingState,
  live: readonly DeploymentRecord[],
  inScope: (d: DeploymentRecord) => boolean,
): RecordIndex {
  const liveByKey = new Map<string, DeploymentRecord>();
  const unkeyedByRequest = new Map<string, DeploymentRecord>();
  const declaredRequests = new Set<string | undefined>();
  const finishedByKey = new Map<string, DeploymentRecord>();
  const liveSet = new Set(live);
  for (const d of live) {
    if (d.phase === "Declared") declaredRequests.add(d.intent?.requestId);
    if (d.key !== undefined) {
      firstWins(liveByKey, resourceKeyString(d.key), d);
    } else if (d.phase !== "Declared" && d.intent !== undefined) {
      firstWins(unkeyedByRequest, requestSlotString(d.intent.requestId, d.slot), d);
    }
  }
  for (const d of Object.values(state.deployments)) {
    if (d.key !== undefined && inScope(d) && !liveSet.has(d))
      firstWins(finishedByKey, resourceKeyString(d.key), d);
  }
  return { liveByKey, unkeyedByRequest, declaredRequests, finishedByKey };
}

function firstWins(map: Map<string, DeploymentRecord>, key: string, d: DeploymentRecord): void {
  if (!map.has(key)) map.set(key, d);
}

/** Equal strings exactly when the request ids are equal and `sameSlot` holds. */
function requestSlotString(requestId: string, slot: ResourceSlot): string {
  return JSON.stringify([requestId, slot.provider, slot.account, slot.name]);
}
