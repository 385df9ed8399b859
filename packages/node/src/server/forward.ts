/**
 * Forwarding one validated request: take a slot on the least loaded engine that serves the model,
 * send the request, and relay the reply with backpressure. Nothing is written to the client until
 * the engine's first body byte (or its complete non-streamed reply) arrives, so any failure before
 * that — refused connection, 5xx, the engine no longer has the model, no first byte in time — fails
 * over to the next engine. After the first byte, never: the stream is cut instead.
 * A client that goes away aborts the upstream request.
 * Must not know: which dialect the client speaks beyond the plan it is given.
 */

import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { DialectRequests, DialectRoute, PairError } from "../dialects/index.js";
import { pairErrorOfInvalidRequest } from "../dialects/index.js";
import { engineUrl, type EngineInventory, type EngineState } from "../engines/engine-inventory.js";
import type { Workload } from "../history/workload-history.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import { countTokens, planExchange, type TokenCounts } from "./exchange-plan.js";

export interface ForwardDeps {
  readonly nodeName: string;
  readonly inventory: EngineInventory;
  readonly scheduler: Scheduler;
  readonly dispatcher: Dispatcher;
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
  readonly signal: AbortSignal;
}

type Attempt =
  | { readonly kind: "done"; readonly outcome: ForwardOutcome }
  | { readonly kind: "next"; readonly error: PairError; readonly markDown?: string };

export async function forward(deps: ForwardDeps, fr: ForwardRequest): Promise<ForwardOutcome> {
  const model = fr.request.model;
  const tried = new Set<string>();
  let last: PairError | undefined;
  for (;;) {
    const engines = deps.inventory.serving(model).filter((e) => !tried.has(e.spec.name));
    if (engines.length === 0) {
      return {
        kind: "error",
        error: last ?? {
          code: "model_not_found",
          message: `no node serves the model "${model}"; \`pair models\` lists what the cluster serves`,
        },
      };
    }
    const targets = engines.map((e) => ({ id: e.spec.name, maxConcurrent: e.spec.maxConcurrent }));
    const slot = await deps.scheduler.acquire(targets, fr.signal);
    if (!slot.ok) {
      if (slot.reason === "aborted") return { kind: "cancelled" };
      return {
        kind: "error",
        error: {
          code: "upstream_error",
          message:
            slot.reason === "queue-full"
              ? `every engine serving "${model}" is busy and the queue is full; retry later`
              : `every engine serving "${model}" stayed busy for the whole queue wait; retry later`,
          node: deps.nodeName,
        },
      };
    }
    const engine = engines.find((e) => e.spec.name === slot.slot.target.id)!;
    tried.add(engine.spec.name);
    let attempt: Attempt;
    try {
      attempt = await attemptOn(deps, fr, engine);
    } finally {
      slot.slot.release();
    }
    if (attempt.kind === "done") return attempt.outcome;
    last = attempt.error;
    if (attempt.markDown !== undefined) deps.inventory.markDown(engine.spec.name, attempt.markDown);
    if (fr.signal.aborted) return { kind: "cancelled" };
  }
}

async function attemptOn(deps: ForwardDeps, fr: ForwardRequest, engine: EngineState): Promise<Attempt> {
  const started = deps.monoMs();
  const plan = planExchange({
    route: fr.route,
    request: fr.request,
    raw: fr.raw,
    engineApi: engine.spec.api,
    id: fr.id,
    startedMs: deps.nowMs(),
    node: deps.nodeName,
  });
  if (!plan.ok)
    return { kind: "done", outcome: { kind: "error", error: pairErrorOfInvalidRequest(plan.error) } };
  const p = plan.value;
  const url = engineUrl(engine.spec, p.enginePath);
  const timeoutMs = engine.spec.firstByteTimeoutMs;
  const upstream = new AbortController();
  const onClientGone = () => upstream.abort(new Error("client went away"));
  fr.signal.addEventListener("abort", onClientGone, { once: true });
  const firstByteTimer = setTimeout(() => upstream.abort(new FirstByteTimeout()), timeoutMs);
  const unreachable = (detail: string): Attempt => ({
    kind: "next",
    error: {
      code: "upstream_error",
      message: `engine ${engine.spec.name} failed: ${detail}`,
      node: deps.nodeName,
    },
  });
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await deps.dispatcher.request({
        origin: url.origin,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: p.stream ? "text/event-stream, application/x-ndjson" : "application/json",
        },
        body: p.body,
        signal: upstream.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: 0,
      });
    } catch (cause) {
      if (fr.signal.aborted) return { kind: "done", outcome: { kind: "cancelled" } };
      if (upstream.signal.reason instanceof FirstByteTimeout || isHeadersTimeout(cause))
        return timedOut(deps, engine, timeoutMs);
      const detail = describe(cause);
      const next = unreachable(detail);
      return isConnectFailure(cause) && next.kind === "next" ? { ...next, markDown: detail } : next;
    }
    const status = response.statusCode;
    if (status >= 400) {
      const text = await response.body.text().catch(() => "");
      const parsed = parseMaybeJson(text);
      // The engine lost the model, or failed: another engine may do better.
      if (status >= 500 || status === 404 || status === 429)
        return unreachable(`HTTP ${status}: ${String(text).slice(0, 200)}`);
      const reply = p.translateError(status, parsed);
      return {
        kind: "done",
        outcome: {
          kind: "error",
          error: { code: "invalid_request", message: text, node: deps.nodeName },
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
      if (upstream.signal.reason instanceof FirstByteTimeout) return timedOut(deps, engine, timeoutMs);
      return unreachable(`the reply broke before its first byte: ${describe(cause)}`);
    }
    clearTimeout(firstByteTimer);
    fr.workload.firstByteMs = Math.round(deps.monoMs() - started);
    fr.workload.servingNode = deps.nodeName;
    fr.workload.engine = engine.spec.name;
    const headers: Record<string, string> = {
      "x-pair-served-by": deps.nodeName,
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

/** The first chunk of a body, or undefined if it ended empty. Leaves the stream paused. */
function readFirst(body: Readable): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      done();
      body.pause();
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
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("error", onError);
  });
}

/**
 * Feed every further chunk of `body` to `onChunk` with backpressure (a false return pauses the body
 * until the client drains). Resolves "ended" at the body's end, "closed" if the client went away.
 */
function pump(
  body: Readable,
  res: ServerResponse,
  onChunk: (chunk: Buffer) => boolean | void,
): Promise<"ended" | "closed"> {
  // The body may have ended or failed already, right after its first chunk, before we listened.
  if (body.errored !== null) return Promise.reject(body.errored);
  if (body.readableEnded) return Promise.resolve("ended");
  return new Promise((resolve, reject) => {
    const done = () => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      res.off("drain", onDrain);
      res.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      if (onChunk(chunk) === false) {
        body.pause();
        res.once("drain", onDrain);
      }
    };
    const onDrain = () => body.resume();
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
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("error", onError);
    res.once("close", onClose);
    body.resume();
  });
}

class FirstByteTimeout extends Error {
  constructor() {
    super("no first byte in time");
  }
}

function timedOut(deps: ForwardDeps, engine: EngineState, timeoutMs: number): Attempt {
  return {
    kind: "next",
    error: {
      code: "cold_start_timeout",
      message: `engine ${engine.spec.name} sent no first byte within ${timeoutMs / 1000} s`,
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
