/**
 * Forwarding one validated request: take a slot on the least loaded upstream that serves the model,
 * send the request, and relay the reply with backpressure. Upstreams are this node's own engines
 * first; only when none of them serves the model (or every one of them failed) a paired peer that
 * does, over mTLS — and a request that came from a peer is never sent to another peer (no loops).
 * Nothing is written to the client until the upstream's first body byte (or its complete non-streamed
 * reply) arrives, so any failure before that — refused connection, 5xx, the model gone, no first byte
 * in time — fails over to the next upstream, and the workload records every attempt. After the first
 * byte, never: the stream is cut instead. A client that goes away aborts the upstream request (and
 * so, through a peer, the whole chain).
 * Must not know: which dialect the client speaks beyond the plan it is given, how peers are trusted.
 */

import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { DialectRequests, DialectRoute, PairError } from "../dialects/index.js";
import { isPairErrorCode, pairErrorOfInvalidRequest, type PairErrorCode } from "../dialects/index.js";
import {
  engineTarget,
  type EngineApi,
  type EngineInventory,
  type EngineSpec,
} from "../engines/engine-inventory.js";
import type { RoutingUse } from "../config/index.js";
import type { Workload } from "../history/workload-history.js";
import type { CancelSignal, Scheduler } from "../scheduler/scheduler.js";
import { countTokens, planExchange, type TokenCounts } from "./exchange-plan.js";

/** A paired peer that is up and advertises a model, as forwarding sees it. */
export interface PeerUpstream {
  readonly nodeId: string;
  readonly name: string;
  /** Most requests this node sends it at once (its advertised capacity, at least 1). */
  readonly maxConcurrent: number;
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
  /** Wall clock (epoch ms). */
  readonly nowMs: () => number;
  /** Monotonic clock (ms) for latencies. */
  readonly monoMs: () => number;
}

export type ForwardOutcome =
  | { readonly kind: "completed" }
  | { readonly kind: "cancelled" }
  | { readonly kind: "cut"; readonly detail: string }
  | { readonly kind: "error"; readonly error: PairError; readonly status?: number; readonly body?: unknown };

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
}

/** Request headers that tell a peer who asked (the peer records them; they carry no secret). */
export const PEER_REQUESTER_HEADER = "x-pair-requester";
export const SERVED_BY_HEADER = "x-pair-served-by";
export const OFF_LAN_HEADER = "x-pair-off-lan";

/** One place a request can go: a local engine or a peer, with what it takes to reach it. */
interface Upstream {
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
}

/** How often a warming rented node is asked again. */
const WARM_RETRY_MS = 1_000;

/**
 * A client's going away, as forwarding and the scheduler watch it: what they need of an
 * AbortSignal, without the EventTarget a request would otherwise build for it.
 */
export class ClientGone implements CancelSignal {
  #aborted = false;
  readonly #listeners = new Set<() => void>();

  get aborted(): boolean {
    return this.#aborted;
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.#aborted) this.#listeners.add(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    this.#listeners.delete(listener);
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener();
  }
}

/**
 * Aborts one attempt's request upstream, when the client goes away or no first byte came in time.
 * undici takes an EventEmitter with `aborted` and `reason` as a signal: lighter than a second
 * AbortController per request (the client's is the first).
 */
class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}

/** Resolves true after `ms`, false if the attempt is aborted first. */
function sleep(ms: number, abort: AttemptAbort): Promise<boolean> {
  if (abort.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      abort.off("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    abort.once("abort", onAbort);
  });
}

function pairCodeOf(body: unknown): PairErrorCode | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const o = body as { code?: unknown; error?: { code?: unknown } | string };
  const code = typeof o.error === "object" && o.error !== null ? o.error.code : o.code;
  return typeof code === "string" && isPairErrorCode(code) ? code : undefined;
}

type Attempt =
  | { readonly kind: "done"; readonly outcome: ForwardOutcome }
  | { readonly kind: "next"; readonly error: PairError; readonly markDown?: string };

const dialectOf = (route: DialectRoute): EngineApi => (route.startsWith("/v1/") ? "openai" : "ollama");

/** Each engine's upstream, made once per deps and engine (neither changes while the node runs). */
const engineUpstreams = new WeakMap<ForwardDeps, WeakMap<EngineSpec, Upstream>>();

function engineUpstream(deps: ForwardDeps, spec: EngineSpec): Upstream {
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

function peerUpstream(peers: PeerUpstreams, peer: PeerUpstream, fr: ForwardRequest): Upstream | undefined {
  const link = peers.link(peer);
  if (link === undefined) return undefined;
  const api = dialectOf(fr.route);
  return {
    id: `peer:${peer.nodeId}`,
    label: `node ${peer.name}`,
    // The peer answers in the client's own dialect: its route API mirrors the client API.
    api,
    baseUrl: api === "openai" ? `${link.baseUrl}/v1` : link.baseUrl,
    maxConcurrent: Math.max(1, peer.maxConcurrent),
    firstByteTimeoutMs: peers.firstByteTimeoutMs,
    dispatcher: link.dispatcher,
    headers: { [PEER_REQUESTER_HEADER]: fr.workload.requester },
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

interface Candidates {
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
function candidates(deps: ForwardDeps, fr: ForwardRequest, tried: ReadonlySet<string>): Candidates {
  const model = fr.request.model;
  const fresh = (u: Upstream | undefined): u is Upstream => u !== undefined && !tried.has(u.id);
  const peers = fr.localOnly === true ? undefined : deps.peers;
  const localAll = deps.inventory.serving(model).map((e) => engineUpstream(deps, e.spec));
  const peerAll = peers === undefined ? [] : peers.serving(model).map((p) => peerUpstream(peers, p, fr));
  const lanAdvertises = localAll.length > 0 || peerAll.some((u) => u !== undefined);

  let refusal: PairError | undefined;
  const rentedAll: RentedCandidate[] = [];
  const rented = deps.rented;
  if (rented !== undefined) {
    const own = rented.serving(model, { fromPeer: fr.localOnly === true });
    refusal = own.refusal;
    for (const r of own.usable) {
      const upstream = rentedUpstream(deps, rented, r.name);
      if (fresh(upstream)) rentedAll.push({ upstream, policy: r.policy, warm: r.warm, price: r.price });
    }
  }
  if (peers !== undefined) {
    const sponsored = peers.sponsoring(model);
    for (const r of sponsored.filter((x) => x.shared && x.eligible)) {
      const upstream = peerUpstream(peers, r.peer, fr);
      if (fresh(upstream) && !rentedAll.some((c) => c.upstream.id === upstream.id))
        rentedAll.push({
          upstream,
          policy: r.policy,
          warm: r.state === "running",
          price: r.usdPerHour ?? r.usdPerMtok,
        });
    }
    const other = sponsored.find((r) => !r.shared || !r.eligible);
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
  const withPolicy = (...uses: RoutingUse[]) =>
    rentedAll
      .filter((c) => uses.includes(c.policy))
      .sort(byWarmthAndPrice)
      .map((c) => c.upstream);

  const preferred = withPolicy("prefer");
  if (preferred.length > 0) return { upstreams: preferred };
  const lan = [...localAll.filter(fresh)];
  if (lan.length === 0) lan.push(...peerAll.filter(fresh));
  if (lan.length > 0) {
    const overflow = withPolicy("overflow");
    const allBusy = lan.every((u) => deps.scheduler.inFlight(u.id) >= u.maxConcurrent);
    return { upstreams: allBusy && overflow.length > 0 ? overflow : lan };
  }
  // No local engine left to try: rented nodes, as their policies allow.
  const upstreams = lanAdvertises ? withPolicy("overflow") : withPolicy("when-no-local-node", "overflow");
  if (upstreams.length > 0) return { upstreams };
  if (lanAdvertises) return { upstreams: [] };
  return refusal === undefined ? { upstreams: [] } : { upstreams: [], refusal };
}

export async function forward(deps: ForwardDeps, fr: ForwardRequest): Promise<ForwardOutcome> {
  const model = fr.request.model;
  const tried = new Set<string>();
  let last: PairError | undefined;
  for (;;) {
    const { upstreams, refusal } = candidates(deps, fr, tried);
    if (upstreams.length === 0) {
      return {
        kind: "error",
        error: last ??
          refusal ?? {
            code: "model_not_found",
            message: `no node serves the model "${model}"; \`pair models\` lists what the cluster serves`,
          },
      };
    }
    const slot = await deps.scheduler.acquire(upstreams, fr.signal);
    if (!slot.ok) {
      if (slot.reason === "aborted") return { kind: "cancelled" };
      return {
        kind: "error",
        error: {
          code: "upstream_error",
          message:
            slot.reason === "queue-full"
              ? `every node serving "${model}" is busy and the queue is full; retry later`
              : `every node serving "${model}" stayed busy for the whole queue wait; retry later`,
          node: deps.nodeName,
        },
      };
    }
    const upstream = upstreams.find((u) => u.id === slot.slot.target.id)!;
    tried.add(upstream.id);
    let attempt: Attempt;
    try {
      attempt = await attemptOn(deps, fr, upstream);
    } finally {
      slot.slot.release();
    }
    if (attempt.kind === "done") {
      fr.workload.attempts.push({ target: upstream.label });
      return attempt.outcome;
    }
    fr.workload.attempts.push({ target: upstream.label, error: attempt.error.code });
    last = attempt.error;
    if (attempt.markDown !== undefined) upstream.markDown(attempt.markDown);
    if (fr.signal.aborted) return { kind: "cancelled" };
  }
}

async function attemptOn(deps: ForwardDeps, fr: ForwardRequest, engine: Upstream): Promise<Attempt> {
  const started = deps.monoMs();
  const plan = planExchange({
    route: fr.route,
    request: fr.request,
    raw: fr.raw,
    engineApi: engine.api,
    id: fr.id,
    startedMs: deps.nowMs(),
    node: deps.nodeName,
  });
  if (!plan.ok)
    return { kind: "done", outcome: { kind: "error", error: pairErrorOfInvalidRequest(plan.error) } };
  const p = plan.value;
  let target = engineTarget(engine.baseUrl, p.enginePath);
  const timeoutMs = engine.firstByteTimeoutMs;
  const upstream = new AttemptAbort();
  const onClientGone = () => upstream.abort(new Error("client went away"));
  fr.signal.addEventListener("abort", onClientGone, { once: true });
  const firstByteTimer = setTimeout(() => upstream.abort(new FirstByteTimeout()), timeoutMs);
  const unreachable = (detail: string): Attempt => ({
    kind: "next",
    error: {
      code: "upstream_error",
      message: `${engine.label} failed: ${detail}`,
      node: deps.nodeName,
    },
  });
  try {
    let response: Dispatcher.ResponseData;
    const deadline = deps.monoMs() + timeoutMs;
    if (engine.prepare !== undefined) {
      // A managed rented node may first have to be resumed (wake on request): warming, within the budget.
      fr.workload.warming = true;
      // Only this rare path pays for an AbortSignal (the wake's HTTP calls take one).
      const wake = new AbortController();
      const onAbort = () => wake.abort(upstream.reason);
      upstream.once("abort", onAbort);
      const prepared = await engine.prepare(wake.signal).finally(() => upstream.off("abort", onAbort));
      if (!prepared.ok) {
        if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
        if (upstream.reason instanceof FirstByteTimeout) return timedOut(deps, engine, timeoutMs);
        return { kind: "next", error: prepared.error };
      }
      target = engineTarget(prepared.baseUrl, p.enginePath);
    }
    for (;;) {
      try {
        response = await engine.dispatcher.request({
          origin: target.origin,
          path: target.path,
          method: "POST",
          headers: {
            ...engine.headers,
            "content-type": "application/json",
            accept: p.stream ? "text/event-stream, application/x-ndjson" : "application/json",
          },
          body: p.body,
          signal: upstream,
          headersTimeout: timeoutMs,
          bodyTimeout: 0,
        });
      } catch (cause) {
        if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
        if (upstream.reason instanceof FirstByteTimeout || isHeadersTimeout(cause))
          return timedOut(deps, engine, timeoutMs);
        const detail = describe(cause);
        const next = unreachable(detail);
        return isConnectFailure(cause) && next.kind === "next" ? { ...next, markDown: detail } : next;
      }
      // A rented node scaled to zero or starting answers 503: it is warming, not failing. Wait and ask
      // again within its cold-start budget (the first-byte timer bounds the whole wait).
      if (response.statusCode === 503 && engine.warmable === true) {
        await response.body.dump().catch(() => undefined);
        fr.workload.warming = true;
        const waitMs = Math.min(WARM_RETRY_MS, Math.max(0, deadline - deps.monoMs()));
        const woke = await sleep(waitMs, upstream);
        if (!woke) {
          if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
          return timedOut(deps, engine, timeoutMs);
        }
        continue;
      }
      break;
    }
    fr.workload.warming = false;
    const status = response.statusCode;
    if (status >= 400) {
      const text = await response.body.text().catch(() => "");
      const parsed = parseMaybeJson(text);
      if ((status === 401 || status === 403) && engine.onRejected !== undefined) {
        engine.onRejected(status);
        return {
          kind: "next",
          error: {
            code: "credential_rejected",
            message:
              `${engine.label} refused its credential (HTTP ${status}); set it again with ` +
              "`pair credential set NAME` on its sponsor",
            node: engine.nodeName ?? deps.nodeName,
          },
        };
      }
      // The engine lost the model, or failed: another engine may do better.
      if (status >= 500 || status === 404 || status === 429)
        return unreachable(`HTTP ${status}: ${String(text).slice(0, 200)}`);
      const reply = p.translateError(status, parsed);
      // A peer answers with PAIR's own codes (rented_node_not_shared, …): record the code it gave.
      const given = pairCodeOf(parsed);
      return {
        kind: "done",
        outcome: {
          kind: "error",
          error: { code: given ?? "invalid_request", message: text, node: deps.nodeName },
          status: reply.status,
          body: reply.body,
        },
      };
    }
    const counts: TokenCounts = {};
    const body = response.body;
    // An error between two listeners (after the first chunk, before the pump) must not go unheard:
    // it is kept on the stream (`errored`) and read by the pump.
    body.on("error", () => undefined);
    let first: Buffer | undefined;
    try {
      first = await readFirst(body);
    } catch (cause) {
      if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
      if (upstream.reason instanceof FirstByteTimeout) return timedOut(deps, engine, timeoutMs);
      return unreachable(`the reply broke before its first byte: ${describe(cause)}`);
    }
    clearTimeout(firstByteTimer);
    fr.workload.firstByteMs = Math.round(deps.monoMs() - started);
    engine.served(fr.workload, response.headers);
    const headers: Record<string, string> = {
      [SERVED_BY_HEADER]: fr.workload.servingNode ?? deps.nodeName,
      ...(fr.workload.offLan ? { [OFF_LAN_HEADER]: "1" } : {}),
      "content-type": p.passthrough
        ? String(response.headers["content-type"] ?? p.contentType)
        : p.contentType,
    };
    if (p.stream) headers["cache-control"] = "no-cache";

    if (!p.stream) {
      // A non-streamed reply is small: collect it whole, then answer (failover stays possible until then).
      const chunks: Buffer[] = first === undefined ? [] : [first];
      try {
        if (first !== undefined && (await pump(body, fr.res, (c) => void chunks.push(c))) === "closed")
          return { kind: "done", outcome: { kind: "cancelled" } };
      } catch (cause) {
        if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
        return unreachable(`the reply broke: ${describe(cause)}`);
      }
      const raw = Buffer.concat(chunks);
      const parsed = parseMaybeJson(raw.toString("utf8"));
      countTokens(parsed, counts);
      const reply = p.passthrough ? raw : JSON.stringify(p.translateJson(parsed, deps.nowMs()));
      fr.res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(reply)) });
      fr.res.end(reply);
      applyCounts(fr.workload, counts);
      return { kind: "done", outcome: { kind: "completed" } };
    }

    // The headers leave with the first chunk, in one write.
    fr.res.writeHead(200, headers);
    const relay = p.relay(deps.nowMs(), counts);
    // Chunks that arrive in the same tick leave in one write: cork on the first, uncork on the next tick.
    let corked = false;
    const uncork = () => {
      corked = false;
      fr.res.uncork();
    };
    const forwardChunk = (chunk: Buffer) => {
      const out = relay.push(chunk);
      const data = p.passthrough ? chunk : out;
      if (data.length === 0) return true;
      if (!corked) {
        corked = true;
        fr.res.cork();
        process.nextTick(uncork);
      }
      return fr.res.write(data);
    };
    try {
      if (first !== undefined) {
        forwardChunk(first);
        if ((await pump(body, fr.res, forwardChunk)) === "closed")
          return { kind: "done", outcome: { kind: "cancelled" } };
      }
      const tail = relay.end();
      if (tail.length > 0) fr.res.write(tail);
    } catch (cause) {
      if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
      // After the first byte there is no failover: end the stream the way the dialect's clients notice.
      const tail = relay.end();
      if (tail.length > 0 && !fr.res.destroyed) fr.res.write(tail);
      fr.res.destroy();
      applyCounts(fr.workload, counts);
      return { kind: "done", outcome: { kind: "cut", detail: describe(cause) } };
    }
    fr.res.end();
    applyCounts(fr.workload, counts);
    return { kind: "done", outcome: { kind: "completed" } };
  } finally {
    clearTimeout(firstByteTimer);
    fr.signal.removeEventListener("abort", onClientGone);
  }
}

/**
 * The body's bytes come off it with `read()` on `readable`, never with `data` events: a read takes
 * everything buffered at once, so the many small chunks an engine's chunked reply is parsed into
 * (one per token) leave in one write to the client, not one write (and one HTTP chunk) each.
 */

/** The first bytes of a body (all it has buffered), or undefined if it ended empty. */
function readFirst(body: Readable): Promise<Buffer | undefined> {
  if (body.errored !== null) return Promise.reject(body.errored);
  if (body.readableEnded) return Promise.resolve(undefined);
  const now = body.read() as Buffer | null;
  if (now !== null) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const done = () => {
      body.off("readable", onReadable);
      body.off("end", onEnd);
      body.off("error", onError);
    };
    const onReadable = () => {
      const chunk = body.read() as Buffer | null;
      if (chunk === null) return; // nothing yet, or the end (`end` follows)
      done();
      resolve(chunk);
    };
    const onEnd = () => {
      done();
      resolve(undefined);
    };
    const onError = (e: Error) => {
      done();
      reject(e);
    };
    body.on("readable", onReadable);
    body.once("end", onEnd);
    body.once("error", onError);
  });
}

/**
 * Feed the rest of `body` to `onChunk` with backpressure (a false return stops reading until the
 * client drains). Resolves "ended" at the body's end, "closed" if the client went away.
 */
function pump(
  body: Readable,
  res: ServerResponse,
  onChunk: (chunk: Buffer) => boolean | void,
): Promise<"ended" | "closed"> {
  // The body may have ended or failed already, right after its first bytes.
  if (body.errored !== null) return Promise.reject(body.errored);
  if (body.readableEnded) return Promise.resolve("ended");
  return new Promise((resolve, reject) => {
    let draining = false;
    const done = () => {
      body.off("readable", onReadable);
      body.off("end", onEnd);
      body.off("error", onError);
      res.off("drain", onDrain);
      res.off("close", onClose);
    };
    const onReadable = () => {
      if (draining) return;
      for (let chunk = body.read() as Buffer | null; chunk !== null; chunk = body.read() as Buffer | null)
        if (onChunk(chunk) === false) {
          draining = true;
          res.once("drain", onDrain);
          return;
        }
    };
    const onDrain = () => {
      draining = false;
      onReadable();
    };
    const onEnd = () => {
      done();
      resolve("ended");
    };
    const onError = (e: Error) => {
      done();
      reject(e);
    };
    const onClose = () => {
      done();
      resolve("closed");
    };
    body.on("readable", onReadable);
    body.once("end", onEnd);
    body.once("error", onError);
    res.once("close", onClose);
    onReadable();
  });
}

class FirstByteTimeout extends Error {
  constructor() {
    super("no first byte in time");
  }
}

function timedOut(deps: ForwardDeps, engine: Upstream, timeoutMs: number): Attempt {
  return {
    kind: "next",
    error: {
      code: "cold_start_timeout",
      message: `${engine.label} sent no first byte within ${timeoutMs / 1000} s`,
      node: deps.nodeName,
    },
  };
}

function applyCounts(w: Workload, counts: TokenCounts): void {
  if (counts.tokensIn !== undefined) w.tokensIn = counts.tokensIn;
  if (counts.tokensOut !== undefined) w.tokensOut = counts.tokensOut;
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : "";
    return `${typeof code === "string" ? `${code} ` : ""}${cause.message}${inner}`;
  }
  return String(cause);
}

function isHeadersTimeout(cause: unknown): boolean {
  return (cause as { code?: unknown } | null)?.code === "UND_ERR_HEADERS_TIMEOUT";
}

function isConnectFailure(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  const inner = (cause as { cause?: { code?: unknown } } | null)?.cause?.code;
  return [code, inner].some(
    (c) => c === "ECONNREFUSED" || c === "UND_ERR_CONNECT_TIMEOUT" || c === "EHOSTUNREACH",
  );
}
