/**
 * Where a request may go: the upstream kinds — this node's engines, paired peers, rented nodes this
 * node or a peer sponsors — each with what it takes to reach it and to record who served it, and the
 * routing rule that orders them (`candidates`).
 * Must not know: how a request is sent or relayed (forward.ts), how peers are trusted.
 */

import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import type { RoutingUse } from "../config/index.js";
import { engineWindow, type RequestFit } from "../context/index.js";
import type { DialectRequests, DialectRoute, PairError } from "../dialects/index.js";
import type { EngineApi, EngineInventory, EngineSpec } from "../engines/engine-inventory.js";
import type { Workload } from "../history/workload-history.js";
import type { RequestTimeline } from "../observability/request-timeline.js";
import type { SecretRedactor } from "../credentials/index.js";
import type { CancelSignal, Scheduler } from "../scheduler/scheduler.js";
import { NO_ALIASES, type ModelAliases } from "./model-aliases.js";

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

/** Rented nodes this node sponsors (rented/ implements it). */
export interface RentedUpstreams {
  /** Rented nodes that may serve `model` for this caller, and why one that has it may not. */
  serving(
    model: string,
    caller: { readonly fromPeer: boolean },
  ): { usable: readonly RentedServing[]; refusal?: PairError };
  link(name: string):
    | {
        readonly baseUrl: string;
        readonly headers: Readonly<Record<string, string>>;
        readonly coldStartMs: number;
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
  /** Wall clock (epoch ms). */
  readonly nowMs: () => number;
  /** Monotonic clock (ms) for latencies. */
  readonly monoMs: () => number;
  /** Scrubs the node's secrets from what is relayed; absent: nothing is scrubbed. */
  readonly redactor?: SecretRedactor;
  /** Largest non-streamed reply or error body read from an upstream (default DEFAULT_MAX_UPSTREAM_BODY_BYTES). */
  readonly maxUpstreamBodyBytes?: number;
  /** Output reserved for a request that sets no limit, when fitting windows (default DEFAULT_OUTPUT_TOKENS). */
  readonly defaultOutputTokens?: number;
}

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
  /** The benchmarks' per-request timeline (`PAIR_TIMELINE_FILE`); undefined when off. */
  readonly timeline?: RequestTimeline | undefined;
}

/** Request headers that tell a peer who asked (the peer records them; they carry no secret). */
export const PEER_REQUESTER_HEADER = "x-pair-requester";
export const SERVED_BY_HEADER = "x-pair-served-by";
export const OFF_LAN_HEADER = "x-pair-off-lan";

/** One place a request can go: a local engine or a peer, with what it takes to reach it. */
export interface Upstream {
  /** Scheduler target id (`peer:` + node id for peers, never clashing with an engine name). */
  readonly id: string;
  /** For messages: `engine NAME` or `node NAME`. */
  readonly label: string;
  readonly api: EngineApi;
  readonly baseUrl: string;
  readonly maxConcurrent: number;
  readonly firstByteTimeoutMs: number;
  readonly dispatcher: Dispatcher;
  readonly headers: Record<string, string>;
  /** Record on the workload who served it, from the reply's headers. */
  served(workload: Workload, headers: Dispatcher.ResponseData["headers"]): void;
  markDown(why: string): void;
  /** A 503 before the first byte means "starting": wait within the first-byte budget (rented nodes). */
  readonly warmable?: boolean;
  /** 401/403 means the credential was refused (rented nodes). */
  readonly onRejected?: (status: number) => void;
  /** The node named in errors, when not this one. */
  readonly nodeName?: string;
  /** Before sending: make the node ready (a managed rented node's wake); its base URL, or why not. */
  readonly prepare?: (signal: AbortSignal) => Promise<RentedPrepared>;
  /** The name this upstream advertises the model by, when it is another name of the requested model's alias group. */
  readonly model?: string;
  /**
   * Peers: call `onDown` each time the peer is found down (a failed membership poll); returns the
   * stop. A request that heard nothing from it for `silentMs` is then given up (a frozen peer
   * keeps its sockets open, so nothing else would end it).
   */
  readonly watchDown?: (onDown: () => void) => () => void;
  readonly silentMs?: number;
}

/** `upstream` for a request that asked for `asked`, when it advertises the model as `advertised`. */
function named(upstream: Upstream, asked: string, advertised: string): Upstream {
  return advertised === asked ? upstream : { ...upstream, model: advertised };
}

const dialectOf = (route: DialectRoute): EngineApi => (route.startsWith("/v1/") ? "openai" : "ollama");

/** Each engine's upstream, made once per deps and engine (neither changes while the node runs). */
const engineUpstreams = new WeakMap<ForwardDeps, WeakMap<EngineSpec, Upstream>>();

export function engineUpstream(deps: ForwardDeps, spec: EngineSpec): Upstream {
  let bySpec = engineUpstreams.get(deps);
  if (bySpec === undefined) engineUpstreams.set(deps, (bySpec = new WeakMap<EngineSpec, Upstream>()));
  let upstream = bySpec.get(spec);
  if (upstream === undefined) bySpec.set(spec, (upstream = makeEngineUpstream(deps, spec)));
  return upstream;
}

function makeEngineUpstream(deps: ForwardDeps, spec: EngineSpec): Upstream {
  return {
    id: spec.name,
    label: `engine ${spec.name}`,
    api: spec.api,
    baseUrl: spec.baseUrl,
    maxConcurrent: spec.maxConcurrent,
    firstByteTimeoutMs: spec.firstByteTimeoutMs,
    dispatcher: deps.dispatcher,
    headers: {},
    served(workload) {
      workload.servingNode = deps.nodeName;
      workload.engine = spec.name;
    },
    markDown: (why) => deps.inventory.markDown(spec.name, why),
  };
}

/**
 * A peer's upstream for a request, made once per peer, link and request shape (dialect, requester)
 * rather than per request: a request on a node with many peers looks at each of them. Shared like the
 * engine upstreams (an upstream is never changed after it is made); remade when the link changes.
 */
interface PeerUpstreamMemo {
  readonly dispatcher: Dispatcher;
  readonly linkBaseUrl: string;
  readonly firstByteTimeoutMs: number;
  readonly upstream: Upstream;
}
const peerUpstreamMemos = new WeakMap<PeerUpstreams, WeakMap<PeerUpstream, Map<string, PeerUpstreamMemo>>>();
/** Request shapes remembered per peer (requesters are few: this node's clients and peers). */
const MAX_SHAPES_PER_PEER = 32;

/** Each peer's upstream for this request: what the request decides is looked up once, not per peer. */
function peerUpstreamsFor(
  peers: PeerUpstreams,
  fr: ForwardRequest,
): (peer: PeerUpstream) => Upstream | undefined {
  const api = dialectOf(fr.route);
  const requester = fr.workload.requester;
  const shape = `${api} ${requester}`;
  let byPeer = peerUpstreamMemos.get(peers);
  if (byPeer === undefined)
    peerUpstreamMemos.set(peers, (byPeer = new WeakMap<PeerUpstream, Map<string, PeerUpstreamMemo>>()));
  const memos = byPeer;
  return (peer) => {
    const link = peers.link(peer);
    if (link === undefined) return undefined;
    let byShape = memos.get(peer);
    if (byShape === undefined) memos.set(peer, (byShape = new Map<string, PeerUpstreamMemo>()));
    const memo = byShape.get(shape);
    if (
      memo !== undefined &&
      memo.dispatcher === link.dispatcher &&
      memo.linkBaseUrl === link.baseUrl &&
      memo.firstByteTimeoutMs === peers.firstByteTimeoutMs
    )
      return memo.upstream;
    if (byShape.size >= MAX_SHAPES_PER_PEER) byShape.clear();
    const upstream = makePeerUpstream(peers, peer, link, api, requester);
    byShape.set(shape, {
      dispatcher: link.dispatcher,
      linkBaseUrl: link.baseUrl,
      firstByteTimeoutMs: peers.firstByteTimeoutMs,
      upstream,
    });
    return upstream;
  };
}

function makePeerUpstream(
  peers: PeerUpstreams,
  peer: PeerUpstream,
  link: { readonly dispatcher: Dispatcher; readonly baseUrl: string },
  api: EngineApi,
  requester: string,
): Upstream {
  return {
    id: `peer:${peer.nodeId}`,
    label: `node ${peer.name}`,
    // The peer answers in the client's own dialect: its route API mirrors the client API.
    api,
    baseUrl: api === "openai" ? `${link.baseUrl}/v1` : link.baseUrl,
    maxConcurrent: Math.max(1, peer.maxConcurrent),
    firstByteTimeoutMs: peers.firstByteTimeoutMs,
    dispatcher: link.dispatcher,
    headers: { [PEER_REQUESTER_HEADER]: requester },
    served(workload, headers) {
      // The peer names who served it (itself, or a rented node it sponsors); the name is checked
      // for shape only, since a pinned peer is trusted to report its own work.
      const by = headers[SERVED_BY_HEADER];
      workload.servingNode = typeof by === "string" && /^[\w.@-]{1,128}$/.test(by) ? by : peer.name;
      // Off the LAN through a peer: that peer is the rented node's sponsor.
      if (headers[OFF_LAN_HEADER] === "1") {
        workload.offLan = true;
        workload.sponsor = peer.name;
      }
    },
    markDown: (why) => peers.markDown(peer, why),
    ...(peers.watchDown === undefined
      ? {}
      : { watchDown: (onDown: () => void) => peers.watchDown!(peer, onDown), silentMs: peers.silentMs ?? 0 }),
  };
}

function rentedUpstream(deps: ForwardDeps, rented: RentedUpstreams, name: string): Upstream | undefined {
  const link = rented.link(name);
  if (link === undefined) return undefined;
  return {
    id: `rented:${name}`,
    label: `rented node ${name}`,
    api: "openai",
    baseUrl: link.baseUrl,
    maxConcurrent: RENTED_MAX_CONCURRENT,
    firstByteTimeoutMs: link.coldStartMs,
    dispatcher: rented.dispatcher,
    headers: link.headers,
    served(workload) {
      workload.servingNode = name;
      workload.sponsor = deps.nodeName;
      workload.offLan = true;
    },
    markDown: (why) => rented.markDown(name, why),
    warmable: true,
    onRejected: (status) => rented.credentialRejected(name, status),
    nodeName: name,
    ...(link.prepare === undefined ? {} : { prepare: link.prepare }),
  };
}

/** Requests this node sends one rented node at once (the provider queues beyond its own replicas). */
const RENTED_MAX_CONCURRENT = 64;

export interface Candidates {
  readonly upstreams: Upstream[];
  /** Why a node that has the model may not take it (instead of `model_not_found`). */
  readonly refusal?: PairError;
}

/** A rented candidate with what the policy and the cost order read. */
interface RentedCandidate {
  readonly upstream: Upstream;
  readonly policy: RoutingUse;
  /** Running now: no cold start. */
  readonly warm: boolean;
  /** Its price (per hour or per million tokens), for the cheaper-first order; null when unknown. */
  readonly price: number | null;
}

/** Warm first (waking a node costs time and money), then cheaper, then unknown prices. */
function byWarmthAndPrice(a: RentedCandidate, b: RentedCandidate): number {
  if (a.warm !== b.warm) return a.warm ? -1 : 1;
  return (a.price ?? Number.POSITIVE_INFINITY) - (b.price ?? Number.POSITIVE_INFINITY);
}

/**
 * Where the request may go now. Local means this node's engines, then peers' engines (free); rented
 * means nodes this node sponsors and nodes peers sponsor and share (billed), each with its policy:
 * `prefer` ahead of local; `when-no-local-node` only while no local engine advertises the model (a
 * local engine that went down no longer does); `overflow` also when every local engine serving it is
 * at `max_concurrent`, or every local attempt failed; `never` not at all. Among rented candidates a
 * warm one beats a cold one, then the cheaper wins. A request a peer forwarded never goes to another
 * peer, and reaches only shared rented nodes.
 */
export function candidates(
  deps: ForwardDeps,
  fr: ForwardRequest,
  tried: ReadonlySet<string>,
  fit?: RequestFit,
): Candidates {
  const model = fr.request.model;
  // Every name of the model's alias group, the asked-for one first (so an upstream advertising
  // several names of the group is sent the asked-for one); just the model without a group.
  const names = (deps.aliases ?? NO_ALIASES).namesOf(model);
  const peers = fr.localOnly === true ? undefined : deps.peers;
  // Module functions and loops rather than closures and flatMap: this runs for every request.
  const localList: Upstream[] = [];
  for (const name of names)
    for (const e of deps.inventory.serving(name))
      // context: an engine whose window cannot hold the request is no candidate (docs/context.md)
      if (fit === undefined || fit.holds(engineWindow(e, name), e.spec.name, `engine ${e.spec.name}`))
        localList.push(named(engineUpstream(deps, e.spec), model, name));
  const localAll = uniqueUpstreams(localList, names.length);
  const localFresh = freshOnly(localAll, tried);
  // Peers are looked at only when no local engine is left to try (a peer's upstream is not made
  // otherwise); with one, the LAN advertises the model whatever the peers say.
  const peerView = peers === undefined ? undefined : new PeerCandidates(peers, fr, names, fit);

  let refusal: PairError | undefined;
  const rentedAll: RentedCandidate[] = [];
  const rented = deps.rented;
  if (rented !== undefined) {
    for (const name of names) {
      const own = rented.serving(name, { fromPeer: fr.localOnly === true });
      refusal ??= own.refusal;
      for (const r of own.usable) {
        // context: as for engines
        if (fit?.holds(r.contextTokens, `rented:${r.name}`, `rented node ${r.name}`) === false) continue;
        const upstream = rentedUpstream(deps, rented, r.name);
        if (upstream !== undefined && !tried.has(upstream.id) && !listed(rentedAll, upstream.id))
          rentedAll.push({
            upstream: named(upstream, model, name),
            policy: r.policy,
            warm: r.warm,
            price: r.price,
          });
      }
    }
  }
  if (peers !== undefined) {
    const sponsored = names.flatMap((name) => peers.sponsoring(name).map((r) => ({ r, name })));
    for (const { r, name } of sponsored.filter((x) => x.r.shared && x.r.eligible)) {
      // context: as for engines
      if (fit?.holds(r.contextTokens, `rented:${r.name}`, `rented node ${r.name}`) === false) continue;
      const upstream = peerView?.upstream(r.peer);
      if (upstream !== undefined && !tried.has(upstream.id) && !listed(rentedAll, upstream.id))
        rentedAll.push({
          upstream: named(upstream, model, name),
          policy: r.policy,
          warm: r.state === "running",
          price: r.usdPerHour ?? r.usdPerMtok,
        });
    }
    const other = sponsored.map((x) => x.r).find((r) => !r.shared || !r.eligible);
    if (refusal === undefined && other !== undefined)
      refusal = other.shared
        ? {
            code: "rented_node_ineligible",
            message: `rented node ${other.name} (sponsored by ${other.peer.name}) cannot take requests now: ${other.reason ?? "ineligible"}`,
            node: other.name,
          }
        : {
            code: "rented_node_not_shared",
            message:
              `the only node serving "${model}" is rented node ${other.name}, and its sponsor ` +
              `${other.peer.name} does not share it with the cluster (on ${other.peer.name}: ` +
              `pair rented share ${other.name} on)`,
            node: other.name,
          };
  }
  const preferred = withPolicies(rentedAll, PREFER);
  if (preferred.length > 0) return { upstreams: preferred };
  const lan = localFresh.length > 0 ? localFresh : freshOnly(peerView?.all() ?? [], tried);
  if (lan.length > 0) {
    const overflow = withPolicies(rentedAll, OVERFLOW);
    const allBusy = overflow.length > 0 && allAtLimit(deps.scheduler, lan);
    return { upstreams: allBusy && overflow.length > 0 ? overflow : lan };
  }
  // No local engine left to try: rented nodes, as their policies allow.
  const advertised = localAll.length > 0 || (peerView?.all().length ?? 0) > 0;
  const upstreams = withPolicies(rentedAll, advertised ? OVERFLOW : NO_LOCAL_OR_OVERFLOW);
  if (upstreams.length > 0) return { upstreams };
  if (advertised) return { upstreams: [] };
  return refusal === undefined ? { upstreams: [] } : { upstreams: [], refusal };
}

/**
 * The peers' side of one request's candidates: each peer's upstream and the peers serving the model,
 * made only when looked at (most requests are served by a local engine and never look).
 */
class PeerCandidates {
  readonly #peers: PeerUpstreams;
  readonly #fr: ForwardRequest;
  readonly #names: readonly string[];
  readonly #fit: RequestFit | undefined;
  #upstreamOf: ((peer: PeerUpstream) => Upstream | undefined) | undefined = undefined;
  #all: Upstream[] | undefined = undefined;

  constructor(peers: PeerUpstreams, fr: ForwardRequest, names: readonly string[], fit?: RequestFit) {
    this.#peers = peers;
    this.#fr = fr;
    this.#names = names;
    this.#fit = fit;
  }

  upstream(peer: PeerUpstream): Upstream | undefined {
    return (this.#upstreamOf ??= peerUpstreamsFor(this.#peers, this.#fr))(peer);
  }

  /** Up peers serving any name of the model, each once. */
  all(): Upstream[] {
    if (this.#all !== undefined) return this.#all;
    const model = this.#fr.request.model;
    const list: Upstream[] = [];
    for (const name of this.#names)
      for (const p of this.#peers.serving(name)) {
        const u = this.upstream(p);
        // context: as for engines
        if (u !== undefined && this.#fit?.holds(p.contextTokens?.get(name), u.id, u.label) !== false)
          list.push(named(u, model, name));
      }
    return (this.#all = uniqueUpstreams(list, this.#names.length));
  }
}

const PREFER: readonly RoutingUse[] = ["prefer"];
const OVERFLOW: readonly RoutingUse[] = ["overflow"];
const NO_LOCAL_OR_OVERFLOW: readonly RoutingUse[] = ["when-no-local-node", "overflow"];

/** Every one of these upstreams is at its `max_concurrent`. */
function allAtLimit(scheduler: Scheduler, list: readonly Upstream[]): boolean {
  for (const u of list) if (scheduler.inFlight(u.id) < u.maxConcurrent) return false;
  return true;
}

/** `list` without upstreams already tried (the list itself when none was). */
function freshOnly(list: Upstream[], tried: ReadonlySet<string>): Upstream[] {
  if (tried.size === 0) return list;
  return list.filter((u) => !tried.has(u.id));
}

/** Each upstream once: with one name (no alias group, the common case) none can be listed twice. */
function uniqueUpstreams(list: Upstream[], names: number): Upstream[] {
  return names === 1 ? list : list.filter((u, i) => list.findIndex((v) => v.id === u.id) === i);
}

function listed(rented: readonly RentedCandidate[], id: string): boolean {
  for (const c of rented) if (c.upstream.id === id) return true;
  return false;
}

/** The rented candidates under one of these policies, warm and cheap first (none: a shared empty list). */
function withPolicies(rented: readonly RentedCandidate[], uses: readonly RoutingUse[]): Upstream[] {
  if (rented.length === 0) return [];
  return rented
    .filter((c) => uses.includes(c.policy))
    .sort(byWarmthAndPrice)
    .map((c) => c.upstream);
}
