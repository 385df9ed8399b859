/**
 * The admin API's JSON as the dashboard reads it: nodes (self, peers, rented), a sponsor's own
 * rented nodes, workloads, the session. Field names are those of interface.md (`pair nodes --json`,
 * `pair jobs --json`); fields a view does not use are left out.
 * Must not know: how any of it is fetched or shown.
 */

export type RoutingUse = "when-no-local-node" | "overflow" | "prefer" | "never";

export const ROUTING_USES: readonly RoutingUse[] = ["when-no-local-node", "overflow", "prefer", "never"];

export interface SelfOrPeerRow {
  readonly name: string;
  readonly kind: "self" | "peer";
  readonly node_id: string | null;
  readonly state: string;
  readonly models: readonly string[];
  readonly in_flight: number;
  readonly capacity: number;
  readonly last_seen: string | null;
  readonly address?: string;
  readonly last_error?: string;
}

export interface RentedRow {
  readonly name: string;
  readonly kind: "rented";
  readonly label: string;
  readonly provider: string;
  readonly gpu: string | null;
  readonly state: string;
  readonly usd_per_hour: number | null;
  readonly usd_per_mtok: number | null;
  readonly models: readonly string[];
  readonly shared: boolean;
  readonly sponsor: string;
  readonly policy: RoutingUse;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly off_lan: true;
  readonly warnings?: readonly string[];
}

export type NodeRow = SelfOrPeerRow | RentedRow;

/** A rented node as its sponsor's admin API shows it (`GET /pair/v1/rented`). */
export interface SponsoredNode {
  readonly name: string;
  readonly provider: string;
  readonly credential: string | null;
  readonly state: string;
  readonly models: readonly string[];
  readonly allowlist: readonly string[];
  readonly shared: boolean;
  readonly policy: RoutingUse;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly warnings: readonly string[];
  readonly last_error: string | null;
  readonly source: "config" | "attached";
  readonly overridden: boolean;
}

export interface Workload {
  readonly id: string;
  readonly model: string;
  readonly origin_node: string;
  readonly serving_node: string | null;
  readonly sponsor: string | null;
  readonly off_lan: boolean;
  readonly status: string;
  readonly started_at: string;
  readonly first_byte_ms: number | null;
  readonly duration_ms: number | null;
  readonly tokens_in: number | null;
  readonly tokens_out: number | null;
  readonly est_cost_usd: number;
  readonly requester: string;
  readonly engine: string | null;
  readonly error_code: string | null;
  readonly warming: boolean;
}

export interface SessionInfo {
  readonly node: string;
  readonly csrf_token: string;
  readonly expires_at: string;
}
