/**
 * The cluster as /metrics shows it: each rented node's state and spend (on its sponsor), and each
 * paired peer up or down. Read from the views when scraped; nothing is counted on the request path.
 * Must not know: how rented nodes or peers are kept.
 */

import type { Metrics, Sample } from "./metrics.js";

/** What these metrics read of a rented node's admin view. */
interface RentedRow {
  readonly name: string;
  readonly state: string;
  readonly managed: { readonly spend_usd: { readonly total: number } | null } | null;
}

interface PeerRow {
  readonly name: string;
  readonly state: "up" | "down";
}

export interface ClusterSources {
  readonly rented: () => readonly RentedRow[];
  readonly peers: () => readonly PeerRow[];
}

export function registerClusterMetrics(metrics: Metrics, sources: ClusterSources): void {
  metrics.family(
    "pair_rented_state",
    "1 for the state each rented node this node sponsors is in.",
    "gauge",
    (): Sample[] => sources.rented().map((r) => ({ labels: { node: r.name, state: r.state }, value: 1 })),
  );
  metrics.family(
    "pair_rented_spend_usd_total",
    "What the ledger accrued for each managed rented node this node sponsors, in US dollars.",
    "counter",
    (): Sample[] =>
      sources
        .rented()
        .flatMap((r) =>
          r.managed?.spend_usd === null || r.managed === null
            ? []
            : [{ labels: { node: r.name }, value: r.managed.spend_usd.total }],
        ),
  );
  metrics.family("pair_peer_up", "1 when the paired peer answered its last refresh.", "gauge", (): Sample[] =>
    sources.peers().map((p) => ({ labels: { peer: p.name }, value: p.state === "up" ? 1 : 0 })),
  );
}
