/**
 * What forwarding is given: the ports to this node's engines, its paired peers and the rented nodes
 * it sponsors (each implemented elsewhere: engines/, cluster-node/, @pair/sponsor), the request being
 * forwarded, and the upstream kinds a request can go to.
 * Must not know: how a port is implemented, the routing policy, how a request is relayed.
 */

import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import type { Timers } from "@pair/cluster";
import type { Clock } from "@pair/provision";
import type { RoutingUse } from "../config/index.js";
import type { DialectRequests, DialectRoute, PairError } from "@pair/dialects";
import type { EngineApi, EngineInventory } from "../engines/engine-inventory.js";
import type { Workload } from "../history/workload-history.js";
import type { RequestTimeline } from "../observability/request-timeline.js";
import type { SecretRedactor } from "../credentials/index.js";
import type { CancelSignal, Priority, Scheduler } from "../scheduler/scheduler.js";
import type { ModelAliases } from "./model-aliases.js";

/** A paired peer that is up and advertises a model, as forwarding sees it. */
export interface PeerUpstream {
  readonly nodeId: string;
  readonly name: string;
  /** Most requests this node sends it at once (its advertised capacity, at least 1). */
  readonly maxConcurrent: number;
  /** By model, the largest context window the peer publishes (context: docs/context.md). */
  readonly contextTokens?: ReadonlyMap<string, number>;
}

/** How requests reach paired peers (cluster-node/ implements it over mTLS). */
export interface PeerUpstreams {
  /** Peers that are up and serve `model`, best first. */
  serving(model: string): readonly PeerUpstream[];
  /** The pinned mTLS dispatcher and base URL for a peer's route API; undefined if it is gone. */
  link(peer: PeerUpstream): { readonly dispatcher: Dispatcher; readonly baseUrl: string } | undefined;
  /** A peer failed to connect: take it out of the view until it answers again. */
  markDown(peer: PeerUpstream, why: string): void;
  /** Rented nodes serving `model` that up peers sponsor. */
  sponsoring(model: string): readonly SponsoredRented[];
  /** Longest wait for a peer's first byte (it may itself be waiting for an engine). */
  readonly firstByteTimeoutMs: number;
  /** Call `onDown` each time `peer` fails a membership poll or is marked down; returns the stop. */
  watchDown?(peer: PeerUpstream, onDown: () => void): () => void;
  /** How long a request may have heard nothing from a peer that went down before it is given up. */
  readonly silentMs?: number;
}

/**
 * The sponsor's judgement of its rented nodes, all routing reads of their state: which may serve
 * `model` for this caller, and why one that has it may not. The same function decides what
 * `pair nodes` shows, so the view and the router agree; routing never reads a node's state itself.
 */
export interface RentedEligibility {
  serving(model: string, caller: { readonly fromPeer: boolean }): RentedServingVerdict;
}

/** Usable rented nodes for one model and caller, best not yet ordered, and the first refusal. */
export interface RentedServingVerdict {
  readonly usable: readonly RentedServing[];
  readonly refusal?: PairError;
}

/** Rented nodes this node sponsors (rented/ implements it): their eligibility, and how to reach them. */
export interface RentedUpstreams extends RentedEligibility {
  link(name: string):
    | {
        readonly baseUrl: string;
        readonly headers: Readonly<Record<string, string>>;
        readonly coldStartMs: number;
        /** Requests sent to it at once; more wait in this node's queue. */
        readonly maxConcurrent: number;
        /** A managed node: wake it if paused and tell where it serves, before the request is sent. */
        readonly prepare?: (signal: AbortSignal) => Promise<RentedPrepared>;
      }
    | undefined;
  markDown(name: string, why: string): void;
  credentialRejected(name: string, status: number): void;
  /** A request's estimated cost on one of these nodes (micro-dollars; 0 when no price is known). */
  costMicroUsd(
    name: string,
    model: string,
    use: { tokensIn?: number; tokensOut?: number; durationMs: number },
  ): number;
  /** Outbound HTTPS (certificates verified, extra CA if configured). */
  readonly dispatcher: Dispatcher;
}

/** A managed rented node made ready for a request, or why it cannot take it. */
export type RentedPrepared =
  { readonly ok: true; readonly baseUrl: string } | { readonly ok: false; readonly error: PairError };

/** A rented node this node sponsors that may serve a model, with what routing weighs. */
export interface RentedServing {
  readonly name: string;
  readonly policy: RoutingUse;
  readonly warm: boolean;
  readonly price: number | null;
  /** Its context window for the model, where known (context: docs/context.md). */
  readonly contextTokens?: number;
}

/** A peer's rented node serving a model, as its sponsor publishes it. */
export interface SponsoredRented {
  readonly peer: PeerUpstream;
  readonly name: string;
  readonly shared: boolean;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly policy: RoutingUse;
  readonly state: string;
  readonly usdPerHour: number | null;
  readonly usdPerMtok: number | null;
  /** Its context window for the model, as its sponsor publishes it (context: docs/context.md). */
  readonly contextTokens?: number;
}

export interface ForwardDeps {
  readonly nodeName: string;
  readonly inventory: EngineInventory;
  readonly scheduler: Scheduler;
  readonly dispatcher: Dispatcher;
  /** Paired peers; absent: this node's engines only. */
  readonly peers?: PeerUpstreams;
  /** Rented nodes this node sponsors; absent: none. */
  readonly rented?: RentedUpstreams;
  /** Names that stand for the same model (`model_aliases:`); absent: exact names only. */
  readonly aliases?: ModelAliases;
  /** Wall time (epoch ms) for what is recorded and shown; monotonic time for latencies and deadlines. */
  readonly clock: Clock;
  /** A request's first-byte bound, its warm-retry waits and its warming notes. */
  readonly timers: Timers;
  /** Scrubs the node's secrets from what is relayed; absent: nothing is scrubbed. */
  readonly redactor?: SecretRedactor;
  /** Largest non-streamed reply or error body read from an upstream (default DEFAULT_MAX_UPSTREAM_BODY_BYTES). */
  readonly maxUpstreamBodyBytes?: number;
  /** Output reserved for a request that sets no limit, when fitting windows (default DEFAULT_OUTPUT_TOKENS). */
  readonly defaultOutputTokens?: number;
  /** The node's log (one line each; secrets already scrubbed by the node); absent: nothing logged. */
  readonly log?: (line: string) => void;
  /** While a request waits for a warming node, a log line this often (default WARMING_NOTE_MS). */
  readonly warmingNoteMs?: number;
}

/** A request waiting for a warming node is logged again each 30 s, so a long wake shows in the log. */
export const WARMING_NOTE_MS = 30_000;

/** Default of `node.max_upstream_body_mb`: a non-streamed reply is small, a 32 MiB one is not. */
export const DEFAULT_MAX_UPSTREAM_BODY_BYTES = 32 * 1024 * 1024;

export interface ForwardRequest {
  readonly route: DialectRoute;
  readonly request: DialectRequests[DialectRoute];
  readonly raw: Buffer;
  readonly workload: Workload;
  readonly id: string;
  readonly res: ServerResponse;
  /** The client went away (an AbortSignal, or the lighter `ClientGone`). */
  readonly signal: CancelSignal;
  /** The request came from a peer: serve it from this node's engines only. */
  readonly localOnly?: boolean;
  /** A batch line waits behind users' requests (scheduler.ts); default interactive. */
  readonly priority?: Priority;
  /** The benchmarks' per-request timeline (`PAIR_TIMELINE_FILE`); undefined when off. */
  readonly timeline?: RequestTimeline | undefined;
}

/** Request headers that tell a peer who asked (the peer records them; they carry no secret). */
export const PEER_REQUESTER_HEADER = "x-pair-requester";
/** Sent to a peer with a batch line, so the peer's scheduler puts it behind its users' requests too. */
export const PEER_PRIORITY_HEADER = "x-pair-priority";
export const SERVED_BY_HEADER = "x-pair-served-by";
export const OFF_LAN_HEADER = "x-pair-off-lan";

/** What every upstream has: where it is, how to reach it, how many requests it takes at once. */
interface UpstreamReach {
  /** Scheduler target id: an engine's name, `peer:` + node id, `rented:` + name (never clashing). */
  readonly id: string;
  /** For messages: `engine NAME`, `node NAME`, `rented node NAME`. */
  readonly label: string;
  readonly api: EngineApi;
  readonly baseUrl: string;
  readonly maxConcurrent: number;
  readonly firstByteTimeoutMs: number;
  readonly dispatcher: Dispatcher;
  readonly headers: Readonly<Record<string, string>>;
  /** The name this upstream advertises the model by, when it is another name of the requested model's alias group. */
  readonly model?: string;
}

/** One of this node's engines. */
export interface EngineUpstream extends UpstreamReach {
  readonly kind: "engine";
  readonly engine: string;
}

/** A paired peer (over mTLS): it serves from its engines, or from a rented node it sponsors. */
export interface PeerNodeUpstream extends UpstreamReach {
  readonly kind: "peer";
  readonly peer: PeerUpstream;
}

/**
 * A rented node this node sponsors (over verified HTTPS, with its credential in `headers`): a 503
 * before the first byte means "warming", a 401/403 that its credential was refused.
 */
export interface RentedUpstream extends UpstreamReach {
  readonly kind: "rented";
  readonly name: string;
  /** Before sending: make the node ready (a managed rented node's wake); its base URL, or why not. */
  readonly prepare?: (signal: AbortSignal) => Promise<RentedPrepared>;
}

/** One place a request can go, with what it takes to reach it. */
export type Upstream = EngineUpstream | PeerNodeUpstream | RentedUpstream;
