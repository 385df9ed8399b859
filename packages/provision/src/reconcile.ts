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
import { sameResource, sameSlot } from "./identity.js";
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
  const finished = Object.values(state.deployments).filter((d) => inScope(d) && !live.includes(d));
  const observe: { id: DeploymentId; report: ResourceReport }[] = [];
  const orphans: OrphanFinding[] = [];
  const matched = new Set<DeploymentId>();
  let foreign = 0;

  for (const report of listing.resources) {
    if (report.key.provider !== scope.provider || report.key.account !== scope.account) continue;
    const byKey = live.find((d) => d.key !== undefined && sameResource(d.key, report.key));
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
    const byRequest = live.find(
      (d) =>
        d.key === undefined &&
        d.phase !== "Declared" &&
        d.intent !== undefined &&
        d.intent.requestId === report.requestId &&
        sameSlot(d.slot, report.key),
    );
    if (byRequest !== undefined && !matched.has(byRequest.id)) {
      observe.push({ id: byRequest.id, report });
      matched.add(byRequest.id);
      continue;
    }
    // Create in flight for this request: wait for its answer.
    if (live.some((d) => d.phase === "Declared" && d.intent?.requestId === report.requestId)) continue;
    // Ours, unrecorded, and able to bill (idle counts: any request may wake it): record and stop it.
    if (reportEndsBilling(scope.capabilities, report)) continue;
    const stoppedEarlier = finished.find((d) => d.key !== undefined && sameResource(d.key, report.key));
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
