/**
 * Where a request may go: the upstream kinds — this node's engines, paired peers, rented nodes this
 * node or a peer sponsors — each with what it takes to reach it and to record who served it, made
 * once and remembered (the memo caches below); and `candidates`, which gathers a snapshot of them for
 * a request and asks the routing policy (routing-policy.ts, pure) for their order.
 * Must not know: how a request is sent or relayed (forward.ts), how peers are trusted, the policy.
 */

import type { Dispatcher } from "undici";
import { engineWindow, type RequestFit } from "../context/index.js";
import type { DialectRoute } from "@pair/dialects";
import type { EngineApi, EngineSpec } from "../engines/engine-inventory.js";
import type { Workload } from "../history/workload-history.js";
import type { Priority } from "../scheduler/scheduler.js";
import {
  OFF_LAN_HEADER,
  PEER_PRIORITY_HEADER,
  PEER_REQUESTER_HEADER,
  SERVED_BY_HEADER,
  type EngineUpstream,
  type ForwardDeps,
  type ForwardRequest,
  type PeerNodeUpstream,
  type PeerUpstream,
  type PeerUpstreams,
  type RentedUpstream,
  type RentedUpstreams,
  type Upstream,
} from "./forward-deps.js";
import { NO_ALIASES } from "./model-aliases.js";
import {
  selectCandidates,
  sponsoredRefusal,
  type CandidateCheck,
  type RentedOption,
  type Selection,
} from "./routing-policy.js";

export * from "./forward-deps.js";

/** Record on the workload who served it, from the reply's headers. */
export function recordServed(
  deps: ForwardDeps,
  upstream: Upstream,
  workload: Workload,
  headers: Dispatcher.ResponseData["headers"],
): void {
  switch (upstream.kind) {
    case "engine":
      workload.servingNode = deps.nodeName;
      workload.engine = upstream.engine;
      return;
    case "peer": {
      // The peer names who served it (itself, or a rented node it sponsors); the name is checked
      // for shape only, since a pinned peer is trusted to report its own work.
      const by = headers[SERVED_BY_HEADER];
      workload.servingNode = typeof by === "string" && /^[\w.@-]{1,128}$/.test(by) ? by : upstream.peer.name;
      // Off the LAN through a peer: that peer is the rented node's sponsor.
      if (headers[OFF_LAN_HEADER] === "1") {
        workload.offLan = true;
        workload.sponsor = upstream.peer.name;
      }
      return;
    }
    case "rented":
      workload.servingNode = upstream.name;
      workload.sponsor = deps.nodeName;
      workload.offLan = true;
      return;
  }
}

/** The upstream failed to connect: out of the view until it answers again. */
export function markDown(deps: ForwardDeps, upstream: Upstream, why: string): void {
  switch (upstream.kind) {
    case "engine":
      return deps.inventory.markDown(upstream.engine, why);
    case "peer":
      return deps.peers?.markDown(upstream.peer, why);
    case "rented":
      return deps.rented?.markDown(upstream.name, why);
  }
}

/**
 * A peer: call `onDown` each time it is found down (a failed membership poll), and how long a
 * request may have heard nothing from it before it is given up (a frozen peer keeps its sockets
 * open, so nothing else would end it); undefined for other upstreams, or without the watch.
 */
export function watchDown(
  deps: ForwardDeps,
  upstream: Upstream,
  onDown: () => void,
): { readonly stop: () => void; readonly silentMs: number } | undefined {
  const peers = deps.peers;
  if (upstream.kind !== "peer" || peers?.watchDown === undefined) return undefined;
  return { stop: peers.watchDown(upstream.peer, onDown), silentMs: peers.silentMs ?? 0 };
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

function makeEngineUpstream(deps: ForwardDeps, spec: EngineSpec): EngineUpstream {
  return {
    kind: "engine",
    engine: spec.name,
    id: spec.name,
    label: `engine ${spec.name}`,
    api: spec.api,
    baseUrl: spec.baseUrl,
    maxConcurrent: spec.maxConcurrent,
    firstByteTimeoutMs: spec.firstByteTimeoutMs,
    dispatcher: deps.dispatcher,
    headers: {},
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
  const priority = fr.priority ?? "interactive";
  const shape = `${api} ${requester} ${priority}`;
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
    const upstream = makePeerUpstream(peers, peer, link, api, requester, priority);
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
  priority: Priority,
): PeerNodeUpstream {
  return {
    kind: "peer",
    peer,
    id: `peer:${peer.nodeId}`,
    label: `node ${peer.name}`,
    // The peer answers in the client's own dialect: its route API mirrors the client API.
    api,
    baseUrl: api === "openai" ? `${link.baseUrl}/v1` : link.baseUrl,
    maxConcurrent: Math.max(1, peer.maxConcurrent),
    firstByteTimeoutMs: peers.firstByteTimeoutMs,
    dispatcher: link.dispatcher,
    headers:
      priority === "batch"
        ? { [PEER_REQUESTER_HEADER]: requester, [PEER_PRIORITY_HEADER]: priority }
        : { [PEER_REQUESTER_HEADER]: requester },
  };
}

function rentedUpstream(rented: RentedUpstreams, name: string): RentedUpstream | undefined {
  const link = rented.link(name);
  if (link === undefined) return undefined;
  return {
    kind: "rented",
    name,
    id: `rented:${name}`,
    label: `rented node ${name}`,
    api: "openai",
    baseUrl: link.baseUrl,
    maxConcurrent: link.maxConcurrent,
    firstByteTimeoutMs: link.coldStartMs,
    dispatcher: rented.dispatcher,
    headers: link.headers,
    ...(link.prepare === undefined ? {} : { prepare: link.prepare }),
  };
}

export type Candidates = Selection<Upstream>;

/**
 * Where the request may go now (the order: `selectCandidates`). A request a peer forwarded never
 * goes to another peer, and reaches only shared rented nodes. `checks`: more a candidate must pass.
 */
export function candidates(
  deps: ForwardDeps,
  fr: ForwardRequest,
  tried: ReadonlySet<string>,
  fit?: RequestFit,
  checks?: readonly CandidateCheck<Upstream>[],
): Candidates {
  const model = fr.request.model;
  // Every name of the model's alias group, the asked-for one first (so an upstream advertising
  // several names of the group is sent the asked-for one); just the model without a group.
  const names = (deps.aliases ?? NO_ALIASES).namesOf(model);
  const peers = fr.localOnly === true ? undefined : deps.peers;
  // Module functions and loops rather than closures and flatMap: this runs for every request.
  const local: Upstream[] = [];
  for (const name of names)
    for (const e of deps.inventory.serving(name))
      // context: an engine whose window cannot hold the request is no candidate (docs/context.md)
      if (fit === undefined || fit.holds(engineWindow(e, name), e.spec.name, `engine ${e.spec.name}`))
        local.push(named(engineUpstream(deps, e.spec), model, name));
  // Peers are looked at only when no local engine is left to try (a peer's upstream is not made
  // otherwise); with one, the LAN advertises the model whatever the peers say.
  const peerView = peers === undefined ? undefined : new PeerCandidates(peers, fr, names, fit);
  const rented: RentedOption<Upstream>[] = [];
  if (deps.rented !== undefined) ownRented(deps.rented, fr, names, rented, fit);
  if (peerView !== undefined) peerView.sponsored(rented);
  return selectCandidates({
    local: uniqueUpstreams(local, names.length),
    peers: peerView === undefined ? noPeers : () => peerView.all(),
    rented,
    tried,
    inFlight: (id) => deps.scheduler.inFlight(id),
    ...(checks === undefined ? {} : { checks }),
    ...(fr.priority === "batch" ? { batch: true } : {}),
  });
}

const noPeers = (): readonly Upstream[] => [];

/** The rented nodes this node sponsors with the model, as its sponsor side judges them, into `out`. */
function ownRented(
  rented: RentedUpstreams,
  fr: ForwardRequest,
  names: readonly string[],
  out: RentedOption<Upstream>[],
  fit: RequestFit | undefined,
): void {
  const model = fr.request.model;
  for (const name of names) {
    const own = rented.serving(name, { fromPeer: fr.localOnly === true });
    for (const r of own.usable) {
      // context: as for engines
      if (fit?.holds(r.contextTokens, `rented:${r.name}`, `rented node ${r.name}`) === false) continue;
      const upstream = rentedUpstream(rented, r.name);
      if (upstream !== undefined)
        out.push({
          eligible: true,
          candidate: named(upstream, model, name),
          policy: r.policy,
          warm: r.warm,
          price: r.price,
        });
    }
    if (own.refusal !== undefined) out.push({ eligible: false, refusal: own.refusal });
  }
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

  /** Rented nodes peers sponsor with the model, as their sponsors publish them, into `out`. */
  sponsored(out: RentedOption<Upstream>[]): void {
    const model = this.#fr.request.model;
    for (const name of this.#names)
      for (const r of this.#peers.sponsoring(name)) {
        const refusal = sponsoredRefusal(r, model);
        if (refusal !== undefined) {
          out.push({ eligible: false, refusal });
          continue;
        }
        // context: as for engines
        if (this.#fit?.holds(r.contextTokens, `rented:${r.name}`, `rented node ${r.name}`) === false)
          continue;
        const upstream = this.upstream(r.peer);
        if (upstream !== undefined)
          out.push({
            eligible: true,
            candidate: named(upstream, model, name),
            policy: r.policy,
            warm: r.state === "running",
            price: r.usdPerHour ?? r.usdPerMtok,
          });
      }
  }
}

/** Each upstream once: with one name (no alias group, the common case) none can be listed twice. */
function uniqueUpstreams(list: Upstream[], names: number): Upstream[] {
  return names === 1 ? list : list.filter((u, i) => list.findIndex((v) => v.id === u.id) === i);
}
