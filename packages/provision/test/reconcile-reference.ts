// The reconciliation pass as it was before it was indexed (two nested scans, quadratic): the
// reference the indexed `reconcile` must agree with on every state and listing.
import {
  liveRecords,
  reportEndsBilling,
  sameResource,
  sameSlot,
  type DeploymentId,
  type DeploymentRecord,
  type HostingState,
  type Listing,
  type OrphanFinding,
  type ReconcilePlan,
  type ReconcileScope,
  type ResourceReport,
} from "@pair/provision";

export function reconcileReference(
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
