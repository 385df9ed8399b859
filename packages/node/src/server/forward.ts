/**
 * Forwarding one validated request: take a slot on the least loaded upstream that serves the model
 * (which upstreams, in which order: upstreams.ts), send the request, and relay the reply with
 * backpressure — over mTLS to a peer, over verified HTTPS to a rented node (waiting out its warming).
 * Nothing is written to the client until the upstream's first body byte (or its complete non-streamed
 * reply) arrives, so any failure before that — refused connection, 5xx, the model gone, no first byte
 * in time — fails over to the next upstream, and the workload records every attempt. After the first
 * byte, never: the stream is cut instead. A client that goes away aborts the upstream request (and
 * so, through a peer, the whole chain). A peer found down (a failed membership poll) that has sent
 * nothing for its silence window is given up: before the first byte that is a failover, after it a
 * cut — a frozen peer keeps its sockets open, and no timeout would end a stream that may pause.
 * Must not know: which dialect the client speaks beyond the plan it is given, how peers are trusted.
 */

import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import type { PairError } from "../dialects/index.js";
import { isPairErrorCode, pairErrorOfInvalidRequest, type PairErrorCode } from "../dialects/index.js";
import {
  contextRefusalOf,
  ollamaBodyFor,
  refineFit,
  requestFit,
  ROUTE_REASON_HEADER,
  type RequestFit,
} from "../context/index.js";
import { engineTarget } from "../engines/engine-inventory.js";
import type { Workload } from "../history/workload-history.js";
import type { CancelSignal } from "../scheduler/scheduler.js";
import { countTokens, planExchange, type TokenCounts } from "./exchange-plan.js";
import {
  describe,
  FirstByteTimeout,
  forPeer,
  isConnectFailure,
  isHeadersTimeout,
  peerClosedHint,
  PeerSilent,
  scrubbedTail,
} from "./upstream-failures.js";
import {
  CappedBody,
  UpstreamBodyTooLarge,
  UpstreamExchange,
  type UpstreamHead,
} from "./upstream-exchange.js";
import { NO_ALIASES } from "./model-aliases.js";
import {
  candidates,
  DEFAULT_MAX_UPSTREAM_BODY_BYTES,
  OFF_LAN_HEADER,
  SERVED_BY_HEADER,
  type ForwardDeps,
  type ForwardRequest,
  type Upstream,
} from "./upstreams.js";

export {
  OFF_LAN_HEADER,
  PEER_REQUESTER_HEADER,
  SERVED_BY_HEADER,
  type ForwardDeps,
  type ForwardRequest,
  type PeerUpstream,
  type PeerUpstreams,
  type RentedPrepared,
  type RentedServing,
  type RentedUpstreams,
  type SponsoredRented,
} from "./upstreams.js";

export type ForwardOutcome =
  | { readonly kind: "completed" }
  | { readonly kind: "cancelled" }
  | { readonly kind: "cut"; readonly detail: string }
  | { readonly kind: "error"; readonly error: PairError; readonly status?: number; readonly body?: unknown };

const ONCE = { once: true } as const;

/** How often a warming rented node is asked again. */
const WARM_RETRY_MS = 1_000;

/**
 * A client's going away, as forwarding and the scheduler watch it: what they need of an
 * AbortSignal, without the EventTarget a request would otherwise build for it.
 */
export class ClientGone implements CancelSignal {
  #aborted = false;
  readonly #listeners = new Set<() => void>();
  #res: ServerResponse | undefined = undefined;
  /** Bound once: no closure made per request for the response's `close`. */
  readonly #onClose = this.#closed.bind(this);

  /** Abort when `res` closes before its reply finished (the client went away), until `unwatch()`. */
  watch(res: ServerResponse): void {
    this.#res = res;
    res.on("close", this.#onClose);
  }

  unwatch(): void {
    this.#res?.off("close", this.#onClose);
  }

  #closed(): void {
    // Both, for a peer's HTTP/2 stream: reset by the peer, Node's compatibility response reports
    // writableFinished (its stream's writable side is done) though end() was never called.
    const res = this.#res;
    if (res !== undefined && !(res.writableEnded && res.writableFinished)) this.abort();
  }

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
 * Aborts one attempt's request upstream, when the client goes away or no first byte came in time:
 * the attempt's UpstreamExchange listens for `abort`. Lighter than a second AbortController per
 * request (the client's is the first).
 */
class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  /** For the client's `ClientGone`: bound once, not a closure per request. */
  readonly onClientGone = this.#clientGone.bind(this);

  #clientGone(): void {
    this.abort(new Error("client went away"));
  }

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

export async function forward(deps: ForwardDeps, fr: ForwardRequest): Promise<ForwardOutcome> {
  const model = fr.request.model;
  const tried = new Set<string>();
  let last: PairError | undefined;
  // context: the request's fit, counted by an engine's tokenizer when near its window (docs/context.md)
  const fit = requestFit(fr, deps.defaultOutputTokens);
  const counting = refineFit(
    fit,
    deps.inventory,
    (deps.aliases ?? NO_ALIASES).namesOf(model),
    deps.dispatcher,
    fr,
  );
  if (counting !== undefined) await counting;
  for (;;) {
    const { upstreams, refusal } = candidates(deps, fr, tried, fit);
    // context: what history records, and the reason when windows decided the route
    if (fit.estimated !== undefined) fr.workload.estPromptTokens = fit.estimated;
    if (fit.decided) fr.workload.routeReason = "context";
    if (upstreams.length === 0) {
      // context: nothing left can hold it
      if (fit.skippedAny && (last === undefined || last.code === "context_too_long"))
        return { kind: "error", error: fit.tooLong(model, deps.nodeName) };
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
    fr.timeline?.mark("slot");
    const upstream = upstreams.find((u) => u.id === slot.slot.target.id)!;
    tried.add(upstream.id);
    let attempt: Attempt;
    try {
      attempt = await attemptOn(deps, fr, upstream, fit);
    } finally {
      slot.slot.release();
    }
    if (attempt.kind === "done") {
      fr.workload.attempts.push({ target: upstream.label });
      return attempt.outcome;
    }
    fr.workload.attempts.push({ target: upstream.label, error: attempt.error.code });
    last = fr.localOnly === true ? forPeer(upstream, attempt.error) : attempt.error;
    if (attempt.markDown !== undefined) upstream.markDown(attempt.markDown);
    if (fr.signal.aborted) return { kind: "cancelled" };
  }
}

async function attemptOn(
  deps: ForwardDeps,
  fr: ForwardRequest,
  engine: Upstream,
  fit: RequestFit,
): Promise<Attempt> {
  const started = deps.monoMs();
  const plan = planExchange({
    route: fr.route,
    request: fr.request,
    raw: fr.raw,
    engineApi: engine.api,
    id: fr.id,
    startedMs: deps.nowMs(),
    node: deps.nodeName,
    ...(engine.model === undefined ? {} : { upstreamModel: engine.model }),
  });
  if (!plan.ok)
    return { kind: "done", outcome: { kind: "error", error: pairErrorOfInvalidRequest(plan.error) } };
  const p = plan.value;
  // context: a local Ollama engine gets the num_ctx the prompt needs (never a silent truncation)
  const body =
    engine.api === "ollama"
      ? ollamaBodyFor(fit, deps.inventory, engine.id, engine.model ?? fr.request.model, fr.request, p.body)
      : p.body;
  const maxBodyBytes = deps.maxUpstreamBodyBytes ?? DEFAULT_MAX_UPSTREAM_BODY_BYTES;
  let target = engineTarget(engine.baseUrl, p.enginePath);
  const timeoutMs = engine.firstByteTimeoutMs;
  const upstream = new AttemptAbort();
  fr.signal.addEventListener("abort", upstream.onClientGone, ONCE);
  const firstByteTimer = setTimeout(() => upstream.abort(new FirstByteTimeout()), timeoutMs);
  // When the upstream last sent anything (or the attempt began): a peer found down is given up only
  // if it has been silent for its window, so a busy peer missing one poll does not cut live streams.
  let heardMs = started;
  const silentMs = engine.silentMs ?? 0;
  const stopWatching = engine.watchDown?.(() => {
    if (deps.monoMs() - heardMs >= silentMs) upstream.abort(new PeerSilent(engine.label, silentMs));
  });
  let exchange: UpstreamExchange | undefined;
  try {
    let response: UpstreamHead;
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
      fr.timeline?.mark("upstreamSent");
      exchange?.close();
      exchange = new UpstreamExchange(fr.res, upstream);
      try {
        response = await exchange.start(engine.dispatcher, {
          origin: target.origin,
          path: target.path,
          method: "POST",
          headers: requestHeaders(deps, engine, p.stream),
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: 0,
        });
      } catch (cause) {
        if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
        if (upstream.reason instanceof FirstByteTimeout || isHeadersTimeout(cause))
          return timedOut(deps, engine, timeoutMs);
        if (upstream.reason instanceof PeerSilent) return unreachable(deps, engine, upstream.reason.message);
        const hint = peerClosedHint(engine, cause);
        const detail = describe(cause) + hint;
        const next = unreachable(deps, engine, detail);
        // A peer that refuses this node's certificate is down for it until membership sees it again.
        return (isConnectFailure(cause) || hint !== "") && next.kind === "next"
          ? { ...next, markDown: detail }
          : next;
      }
      // A rented node scaled to zero or starting answers 503: it is warming, not failing. Wait and ask
      // again within its cold-start budget (the first-byte timer bounds the whole wait).
      if (response.statusCode === 503 && engine.warmable === true) {
        await exchange.discard(maxBodyBytes);
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
    fr.timeline?.mark("upstreamHeaders");
    const status = response.statusCode;
    if (status >= 400) {
      let text = "";
      try {
        // Scrubbed before anything reads it: every message, log line and reply below derives from it.
        text = scrub(deps, (await exchange.collect(maxBodyBytes)).toString("utf8"));
      } catch (cause) {
        if (cause instanceof UpstreamBodyTooLarge) return tooLarge(deps, engine, maxBodyBytes);
      }
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
      // context: a refusal for the prompt's length fails over to a node with a larger window
      const tooLong = contextRefusalOf(status, parsed);
      if (tooLong !== undefined) {
        fit.refused(engine.id, engine.label, tooLong.windowTokens);
        fr.workload.routeReason = "context";
        const message = `${engine.label} refused the prompt as too long: ${tooLong.message}`;
        return { kind: "next", error: { code: "context_too_long", message, node: deps.nodeName } };
      }
      // The engine lost the model, or failed: another engine may do better.
      if (status >= 500 || status === 404 || status === 429)
        return unreachable(deps, engine, `HTTP ${status}: ${String(text).slice(0, 200)}`);
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
    let first: Buffer | undefined;
    try {
      first = await exchange.first();
    } catch (cause) {
      if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
      if (upstream.reason instanceof FirstByteTimeout) return timedOut(deps, engine, timeoutMs);
      if (upstream.reason instanceof PeerSilent) return unreachable(deps, engine, upstream.reason.message);
      return unreachable(deps, engine, `the reply broke before its first byte: ${describe(cause)}`);
    }
    clearTimeout(firstByteTimer);
    heardMs = deps.monoMs();
    fr.timeline?.mark("firstRead");
    fr.workload.firstByteMs = Math.round(deps.monoMs() - started);
    engine.served(fr.workload, response.headers);
    // Built by assignment: a spread in an object literal followed by more properties is slow in V8.
    const headers: Record<string, string> = {};
    headers[SERVED_BY_HEADER] = fr.workload.servingNode ?? deps.nodeName;
    if (fr.workload.offLan) headers[OFF_LAN_HEADER] = "1";
    // context: say when windows decided the route
    if (fr.workload.routeReason !== undefined) headers[ROUTE_REASON_HEADER] = fr.workload.routeReason;
    headers["content-type"] = p.passthrough
      ? String(response.headers["content-type"] ?? p.contentType)
      : p.contentType;
    if (p.stream) headers["cache-control"] = "no-cache";

    if (!p.stream) {
      // A non-streamed reply is small: collect it whole, then answer (failover stays possible until then).
      // Up to the cap: past it the upstream's connection is cut at once, nothing more is buffered.
      const body = new CappedBody(exchange, maxBodyBytes);
      const collect = (c: Buffer) => {
        heardMs = deps.monoMs();
        body.push(c);
      };
      if (first !== undefined) collect(first);
      try {
        if (first !== undefined && !body.over && (await exchange.pump(collect)) === "closed")
          return { kind: "done", outcome: { kind: "cancelled" } };
      } catch (cause) {
        if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
        if (!body.over) return unreachable(deps, engine, `the reply broke: ${describe(cause)}`);
      }
      if (body.over) return tooLarge(deps, engine, maxBodyBytes);
      const whole = Buffer.concat(body.chunks);
      const raw = deps.redactor?.redactBytes(whole) ?? whole;
      const parsed = parseMaybeJson(raw.toString("utf8"));
      countTokens(parsed, counts);
      const reply = p.passthrough ? raw : JSON.stringify(p.translateJson(parsed, deps.nowMs()));
      headers["content-length"] = String(Buffer.byteLength(reply));
      fr.res.writeHead(200, headers);
      fr.res.end(reply);
      applyCounts(fr.workload, counts);
      return { kind: "done", outcome: { kind: "completed" } };
    }

    // The headers leave with the first chunk, in one write.
    fr.res.writeHead(200, headers);
    const relay = p.relay(deps.nowMs(), counts);
    // Only a rented node is sent a secret, so only its stream could echo one back.
    const scrubber =
      engine.id.startsWith("rented:") && deps.redactor?.active === true ? deps.redactor.stream() : undefined;
    // Chunks that arrive in the same tick leave in one write: cork on the first, uncork on the next tick.
    let corked = false;
    const uncork = () => {
      corked = false;
      fr.res.uncork();
      fr.timeline?.mark("firstFlushed");
    };
    const forwardChunk = (chunk: Buffer) => {
      if (stopWatching !== undefined) heardMs = deps.monoMs();
      const out = relay.push(chunk);
      const relayed = p.passthrough ? chunk : out;
      const data = scrubber === undefined ? relayed : scrubber.push(relayed);
      if (data.length === 0) return true;
      if (!corked) {
        corked = true;
        fr.res.cork();
        process.nextTick(uncork);
      }
      return fr.res.write(data);
    };
    // The reply's end (the relay's tail, then the chunked terminator or the HTTP/2 trailer) is written
    // in the tick of the upstream's last chunk, while still corked: it leaves in the same write.
    let ended = false;
    const endReply = () => {
      ended = true;
      const tail = scrubbedTail(relay.end(), scrubber);
      if (tail.length > 0) fr.res.write(tail);
      fr.res.end();
    };
    try {
      if (first !== undefined) {
        forwardChunk(first);
        fr.timeline?.mark("firstWritten");
        if ((await exchange.pump(forwardChunk, endReply)) === "closed")
          return { kind: "done", outcome: { kind: "cancelled" } };
      }
      if (!ended) endReply();
    } catch (cause) {
      if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
      // After the first byte there is no failover: end the stream the way the dialect's clients notice.
      if (!ended) {
        const tail = scrubbedTail(relay.end(), scrubber);
        if (tail.length > 0 && !fr.res.destroyed) fr.res.write(tail);
      }
      fr.res.destroy();
      applyCounts(fr.workload, counts);
      const detail = upstream.reason instanceof PeerSilent ? upstream.reason.message : describe(cause);
      return { kind: "done", outcome: { kind: "cut", detail } };
    }
    applyCounts(fr.workload, counts);
    return { kind: "done", outcome: { kind: "completed" } };
  } finally {
    clearTimeout(firstByteTimer);
    stopWatching?.();
    fr.signal.removeEventListener("abort", upstream.onClientGone);
    exchange?.close();
  }
}

/** Each upstream's request headers, streamed and not: made once per upstream, not per request. */
const upstreamHeaders = new WeakMap<Upstream, readonly [Record<string, string>, Record<string, string>]>();

function requestHeaders(deps: ForwardDeps, upstream: Upstream, stream: boolean): Record<string, string> {
  let pair = upstreamHeaders.get(upstream);
  if (pair === undefined) {
    // What a rented node is sent (its token, a pod's key) is a secret the redactor must know.
    if (upstream.id.startsWith("rented:"))
      for (const value of Object.values(upstream.headers))
        deps.redactor?.add(value.replace(/^Bearer\s+/i, ""));
    const json = { ...upstream.headers, "content-type": "application/json" };
    pair = [
      { ...json, accept: "text/event-stream, application/x-ndjson" },
      { ...json, accept: "application/json" },
    ];
    upstreamHeaders.set(upstream, pair);
  }
  return stream ? pair[0] : pair[1];
}

function unreachable(deps: ForwardDeps, engine: Upstream, detail: string): Attempt {
  return {
    kind: "next",
    error: {
      code: "upstream_error",
      message: `${engine.label} failed: ${scrub(deps, detail)}`,
      node: deps.nodeName,
    },
  };
}

function scrub(deps: ForwardDeps, text: string): string {
  return deps.redactor === undefined ? text : deps.redactor.redact(text);
}

/** The reply outgrew the cap: 502, naming the cap and its key (no failover: another node's reply would be as big). */
function tooLarge(deps: ForwardDeps, engine: Upstream, maxBodyBytes: number): Attempt {
  const mib = Math.round((maxBodyBytes / 1024 / 1024) * 100) / 100;
  return {
    kind: "done",
    outcome: {
      kind: "error",
      error: {
        code: "upstream_error",
        message:
          `${engine.label} sent a reply larger than ${mib} MiB, this node's cap on a non-streamed reply ` +
          "(node.max_upstream_body_mb); ask for a streamed reply, or raise the cap",
        node: deps.nodeName,
      },
    },
  };
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
