/**
 * The admin API's JSON as the dashboard reads it: nodes (self, peers, rented), a sponsor's own
 * rented nodes, workloads, the session. Field names are those of docs/reference.md (`pair nodes --json`,
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
  /** What its sponsor published of its spend (managed nodes; null: unknown). Older nodes leave it out. */
  readonly spend_usd?: { readonly session: number; readonly day: number; readonly month: number } | null;
}

export type NodeRow = SelfOrPeerRow | RentedRow;

/** One model of the cluster (`GET /pair/v1/models`, as `pair models --json`). */
export interface ModelRow {
  readonly model: string;
  readonly nodes: readonly string[];
  /** Each node's context window for the model, in tokens, where known (absent from older nodes). */
  readonly context_tokens?: Readonly<Record<string, number>>;
}

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
  /** Managed endpoints only (lifecycle.managed: true). */
  readonly managed?: ManagedFacts | null;
  /** The caps, USD (null: none). Older nodes leave it out. */
  readonly budget?: { readonly usd_per_day: number | null; readonly usd_per_month: number | null };
  /** The provider's own word and message (nodes the create API made, api-create.md). */
  readonly provider_state?: string | null;
  readonly provider_message?: string | null;
  readonly created?: { readonly started_at: string; readonly elapsed_s: number } | null;
}

export interface ManagedFacts {
  readonly paused_by: string | null;
  readonly budget_exceeded: boolean;
  readonly spend_usd: {
    readonly session: number;
    readonly today: number;
    readonly month: number;
    readonly total: number;
  } | null;
  readonly usd_per_hour: number | null;
  readonly open_obligations: number;
  readonly last_error: string | null;
  /** When a PAIR workload last ran on it; the idle pause after `idle_pause_min` without one. */
  readonly last_active_at?: string;
  readonly idle_pause_min?: number;
}

export type LifecycleAction = "pause" | "resume" | "delete";

/** One entry of `GET /pair/v1/rented/history?name=`, oldest first. */
export interface StateChange {
  readonly at: string;
  readonly state: string;
  readonly reason: string | null;
}

/** `GET /pair/v1/rented/account`. */
export interface RentedAccount {
  readonly credential: string;
  readonly signed_in: boolean;
  readonly namespace: string | null;
  readonly account_type: "user" | "org" | null;
  readonly message: string | null;
}

/** One row of `GET /pair/v1/rented/hardware`. */
export interface HardwareOffer {
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instance_type: string;
  readonly instance_size: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly vram_gb: number | null;
  readonly usd_per_hour: number;
  readonly quota_available: number | null;
}

/** `POST /pair/v1/rented/create`'s body (api-create.md). */
export interface CreateRentedRequest {
  readonly name: string;
  readonly provider: "huggingface-endpoint";
  readonly credential?: string;
  readonly namespace?: string;
  readonly repo?: string;
  readonly catalog?: string;
  readonly vendor: string;
  readonly region: string;
  readonly instance_type: string;
  readonly instance_size: string;
  readonly access?: "private" | "authenticated";
  readonly scale_to_zero_min?: number;
  readonly budget?: { readonly usd_per_day?: number; readonly usd_per_month?: number };
  readonly lifecycle?: { readonly idle_pause_min?: number; readonly wake_on_request?: boolean };
  readonly share_with_cluster?: boolean;
  readonly routing?: { readonly use: RoutingUse };
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

/** `GET /pair/v1/rented/spend?name=&range=`: a managed node's billed spend per bucket. */
export interface SpendSeries {
  readonly name: string;
  readonly range: "24h" | "30d";
  readonly bucket_s: number;
  readonly points: readonly { readonly start: string; readonly usd: number }[];
}

/** A batch as `GET /pair/v1/batches` lists it (OpenAI's batch object, with PAIR's `pair` counts). */
export interface Batch {
  readonly id: string;
  readonly endpoint: string;
  /** OpenAI's batch status: validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled. */
  readonly status: string;
  readonly created_at: number;
  readonly expires_at: number | null;
  readonly completed_at: number | null;
  readonly failed_at: number | null;
  readonly expired_at: number | null;
  readonly cancelled_at: number | null;
  readonly request_counts: { readonly total: number; readonly completed: number; readonly failed: number };
  readonly errors: { readonly data: readonly { readonly code: string; readonly message: string }[] } | null;
  readonly pair: {
    readonly requester: string;
    readonly pending: number;
    readonly running: number;
    readonly reruns: number;
    /** Completed lines by the node that served them. */
    readonly by_node?: Readonly<Record<string, number>>;
    /** Its `--rent auto` rental, or null. */
    readonly rent?: BatchRental | null;
  };
}

/** A `--rent auto` batch's rental, as `pair.rent` gives it (money in USD). */
export interface BatchRental {
  /** watching, renting, serving, stopping, stopped, unavailable. */
  readonly state: string;
  readonly node: string | null;
  readonly gpu: string | null;
  readonly budget_usd: number | null;
  readonly spent_usd: number;
  readonly stop_reason: string | null;
}

export interface BatchList {
  readonly data: readonly Batch[];
  readonly has_more: boolean;
}
