/**
 * What the ledger missed of the hosting store: the hosting store (`managed/<node>.db`) and the ledger
 * (`managed/ledger.db`) are two SQLite files committed one after the other, so a sponsor killed
 * between a discharge's commit and the ledger's leaves the obligation closed and the ledger's episode
 * open — and nothing would close it again (the hosting record is done: no more events), so the
 * ledger would bill the ended resource on for ever. At start each managed node feeds these discharges
 * again: the ledger bills the episode up to the restart (its outage rule: cautious, never under) and
 * closes it with the hosting store's evidence.
 * Must not know: how events reach the ledger, providers, SQLite.
 */

import type { LedgerState } from "@pair/ledger";
import type { HostingEvent, HostingState } from "@pair/provision";

/** `ObligationDischarged` events for obligations discharged with evidence whose ledger episode is still open. */
export function dischargesMissedByLedger(hosting: HostingState, ledger: LedgerState): HostingEvent[] {
  const missed: HostingEvent[] = [];
  for (const o of Object.values(hosting.obligations)) {
    if (o.state !== "discharged" || o.evidence === undefined) continue;
    if (ledger.episodes[o.deploymentId]?.state !== "open") continue;
    missed.push({
      type: "ObligationDischarged",
      id: o.deploymentId,
      key: o.key ?? hosting.deployments[o.deploymentId]?.key,
      evidence: o.evidence,
      atMs: o.closedAtMs ?? o.evidence.observedAtMs,
    });
  }
  return missed;
}
