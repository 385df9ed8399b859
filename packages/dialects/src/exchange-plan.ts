/**
 * What one routed request becomes for one engine: the upstream path and body, and how the reply is
 * carried back. Same dialect on both sides: the client's bytes go up unchanged and the engine's
 * bytes come back unchanged (only watched for token counts). Different dialects: the request is
 * translated, and the reply is decoded, translated and encoded again, streamed or not.
 * Must not know: sockets, scheduling, failover (the daemon's server/forward.ts), the inventory.
 */

import type { DialectResult } from "./dialect-error.js";
import { withBase64Embeddings } from "./embedding-encoding.js";
import { ollamaErrorToOpenAI, openAIErrorToOllama } from "./engine-errors.js";
import { NdjsonDecoder, encodeNdjson } from "./ndjson.js";
import { SSE_CONTENT_TYPE, SSE_DONE, SseDecoder, encodeSseData, readOpenAIStreamEvent } from "./sse.js";
import {
  ollamaChatToOpenAI,
  ollamaEmbedToOpenAI,
  ollamaEmbeddingsToOpenAI,
  ollamaGenerateToOpenAI,
} from "./translate-ollama-request.js";
import {
  ollamaChatToOpenAIChat,
  ollamaEmbedToOpenAIEmbedding,
  ollamaGenerateToOpenAICompletion,
} from "./translate-ollama-response.js";
import { OllamaToOpenAIChatStream, OllamaToOpenAICompletionStream } from "./translate-ollama-stream.js";
import {
  openAIChatToOllama,
  openAICompletionToOllama,
  openAIEmbeddingToOllama,
} from "./translate-openai-request.js";
import {
  openAIChatToOllamaChat,
  openAIChatToOllamaGenerate,
  openAICompletionToOllamaGenerate,
  openAIEmbeddingToOllamaEmbed,
  openAIEmbeddingToOllamaEmbeddings,
} from "./translate-openai-response.js";
import { OpenAIToOllamaChatStream, OpenAIToOllamaGenerateStream } from "./translate-openai-stream.js";
import type { Dialect, DialectRequests, DialectRoute } from "./validate.js";

export interface TokenCounts {
  tokensIn?: number;
  tokensOut?: number;
}

/** Turns the engine's stream bytes into the client's stream text. */
export interface StreamRelay {
  push(chunk: Uint8Array): string;
  end(): string;
}

export interface ExchangePlan {
  /** Path under the engine's base URL (`/chat/completions` for an OpenAI engine, `/api/chat` for Ollama). */
  readonly enginePath: string;
  readonly body: string | Buffer;
  /** The client asked for a stream. */
  readonly stream: boolean;
  /** The engine's bytes go back untouched. */
  readonly passthrough: boolean;
  /** Content type of a successful reply to the client (for a translated reply). */
  readonly contentType: string;
  /** Not streamed: the engine's JSON reply as the client's JSON reply. */
  translateJson(upstream: unknown, nowMs: number): unknown;
  /** Streamed: a fresh relay for one reply. */
  relay(nowMs: number, counts: TokenCounts): StreamRelay;
  /** An engine error (status and parsed body, maybe not JSON) as the client's dialect's error. */
  translateError(status: number, upstream: unknown): { readonly status: number; readonly body: unknown };
}

export interface PlanContext {
  readonly route: DialectRoute;
  readonly request: DialectRequests[DialectRoute];
  readonly raw: Buffer;
  readonly engineApi: Dialect;
  /** Completion id for translated OpenAI replies. */
  readonly id: string;
  readonly startedMs: number;
  readonly node: string;
  /**
   * The name the engine advertises the model by, when it is another name of the asked-for model's
   * alias group: the engine is sent that name, and the client's replies keep the name it asked for.
   */
  readonly upstreamModel?: string;
}

/** A plan's context once the request names the engine's model: the client's name kept for replies. */
interface NamedContext extends PlanContext {
  readonly clientModel?: string;
}

const stripV1 = (path: string) => path.replace(/^\/v1/, "");

/** Read token counts from any reply object of either dialect. */
export function countTokens(value: unknown, counts: TokenCounts): void {
  if (typeof value !== "object" || value === null) return;
  const v = value as Record<string, unknown>;
  const usage = v["usage"];
  if (typeof usage === "object" && usage !== null) {
    const u = usage as Record<string, unknown>;
    if (typeof u["prompt_tokens"] === "number") counts.tokensIn = u["prompt_tokens"];
    if (typeof u["completion_tokens"] === "number") counts.tokensOut = u["completion_tokens"];
  }
  if (typeof v["prompt_eval_count"] === "number") counts.tokensIn = v["prompt_eval_count"];
  if (typeof v["eval_count"] === "number") counts.tokensOut = v["eval_count"];
}

function passthroughPlan(ctx: PlanContext, stream: boolean): ExchangePlan {
  const openai = ctx.engineApi === "openai";
  return {
    enginePath: openai ? stripV1(ctx.route) : ctx.route,
    body: ctx.raw,
    stream,
    passthrough: true,
    contentType: openai ? (stream ? SSE_CONTENT_TYPE : "application/json") : "application/x-ndjson",
    translateJson: unchanged,
    relay: openai ? watchOpenAI : watchOllama,
    translateError: unchangedError,
  };
}

// A pass-through plan's functions do not depend on the request: made once, not per request.
const unchanged = (upstream: unknown): unknown => upstream;
const unchangedError = (status: number, upstream: unknown) => ({ status, body: upstream });
const watchOpenAI = (_nowMs: number, counts: TokenCounts): StreamRelay => watcher(true, counts);
const watchOllama = (_nowMs: number, counts: TokenCounts): StreamRelay => watcher(false, counts);

/** How many of the last raw chunks a pass-through keeps to read the final counts from. */
const TAIL_CHUNKS = 4;

/**
 * A relay that forwards nothing itself and does almost nothing per chunk: it keeps references to the
 * last few chunks, and at the end parses only the last frame there, the one that carries the final
 * usage (OpenAI: the last `data:` event before `[DONE]`, when the client asked for usage or the
 * engine always sends it) or the `done` object (Ollama: the last line). The bytes the client gets
 * are the engine's, untouched.
 */
function watcher(openai: boolean, counts: TokenCounts): StreamRelay {
  const tail: Uint8Array[] = [];
  return {
    push(chunk) {
      tail.push(chunk);
      if (tail.length > TAIL_CHUNKS) tail.shift();
      return "";
    },
    end() {
      // Native searches from the end of the bytes, over the last frame or two only; the delimiters
      // and markers are ASCII, so byte offsets are safe to decode from.
      const only = tail.length === 1 ? tail[0] : undefined;
      const bytes =
        only === undefined ? Buffer.concat(tail) : Buffer.from(only.buffer, only.byteOffset, only.byteLength);
      const frame = openai ? lastSseData(bytes) : lastLine(bytes);
      if (frame === undefined) return "";
      const marker = bytes.indexOf(openai ? USAGE_MARKER : DONE_MARKER, frame.start);
      if (marker < 0 || marker >= frame.end) return "";
      countTokens(readJson(bytes.toString("utf8", frame.start, frame.end)), counts);
      return "";
    },
  };
}

const NEWLINE = 0x0a;
const USAGE_MARKER = Buffer.from('"usage":{');
const DONE_MARKER = Buffer.from('"done":true');
const DATA_FIELD = Buffer.from("data:");
const DONE_EVENT = Buffer.from("[DONE]");

/** End of `bytes` without trailing whitespace. */
function trimmedEnd(bytes: Buffer, end: number): number {
  let e = end;
  while (e > 0 && (bytes[e - 1] === NEWLINE || bytes[e - 1] === 0x0d || bytes[e - 1] === 0x20)) e -= 1;
  return e;
}

/** The value of the last SSE `data:` field that is not `[DONE]`. */
function lastSseData(bytes: Buffer): { start: number; end: number } | undefined {
  let end = trimmedEnd(bytes, bytes.length);
  for (let tries = 0; tries < 2 && end > 0; tries += 1) {
    // A field starts a line: `data:` inside a JSON string does not count.
    let field = bytes.lastIndexOf(DATA_FIELD, end - 1);
    while (field > 0 && bytes[field - 1] !== NEWLINE) field = bytes.lastIndexOf(DATA_FIELD, field - 1);
    if (field < 0) return undefined;
    let start = field + DATA_FIELD.length;
    if (bytes[start] === 0x20) start += 1;
    const stop = bytes.indexOf(NEWLINE, start);
    const valueEnd = stop < 0 || stop > end ? end : stop;
    if (bytes.indexOf(DONE_EVENT, start) !== start) return { start, end: valueEnd };
    end = trimmedEnd(bytes, field);
  }
  return undefined;
}

/** The last non-empty NDJSON line. */
function lastLine(bytes: Buffer): { start: number; end: number } | undefined {
  const end = trimmedEnd(bytes, bytes.length);
  if (end === 0) return undefined;
  return { start: bytes.lastIndexOf(NEWLINE, end - 1) + 1, end };
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

type Translator<I, O> = { push(item: I, nowMs?: number): O[]; finish(nowMs?: number): O[] };

/** An incremental decoder of the engine's stream, as values (JSON objects) ready to translate. */
interface ValueDecoder {
  push(chunk: Uint8Array): readonly unknown[];
  end(): readonly unknown[];
}

/** OpenAI's SSE: every `data:` event holding JSON (the `[DONE]` sentinel is dropped). */
function sseValues(): ValueDecoder {
  const decoder = new SseDecoder();
  const values = (r: ReturnType<SseDecoder["push"]>) =>
    r.ok ? r.value.map(readOpenAIStreamEvent).flatMap((ev) => (ev.kind === "json" ? [ev.value] : [])) : [];
  return { push: (chunk) => values(decoder.push(chunk)), end: () => values(decoder.end()) };
}

/** Ollama's NDJSON: one JSON value per line. */
function ndjsonValues(): ValueDecoder {
  const decoder = new NdjsonDecoder();
  return {
    push: (chunk) => {
      const r = decoder.push(chunk);
      return r.ok ? r.value : [];
    },
    end: () => {
      const r = decoder.end();
      return r.ok ? r.value : [];
    },
  };
}

/**
 * Decode the engine's stream, count tokens, translate every value and encode it for the client;
 * `trailer` closes the client's stream (OpenAI's `[DONE]`).
 */
function translatingRelay(
  decoder: ValueDecoder,
  translator: Translator<never, unknown>,
  encode: (item: unknown) => string,
  counts: TokenCounts,
  trailer = "",
): StreamRelay {
  const take = (values: readonly unknown[]) => {
    let out = "";
    for (const v of values) {
      countTokens(v, counts);
      for (const item of translator.push(v as never)) out += encode(item);
    }
    return out;
  };
  let ended = false;
  return {
    push: (chunk) => take(decoder.push(chunk)),
    end() {
      if (ended) return "";
      ended = true;
      let out = take(decoder.end());
      for (const item of translator.finish()) out += encode(item);
      return out + trailer;
    },
  };
}

/** An OpenAI engine's SSE → NDJSON for an Ollama client. */
function sseToNdjson(translator: Translator<never, unknown>, counts: TokenCounts): StreamRelay {
  return translatingRelay(sseValues(), translator, encodeNdjson, counts);
}

/** An Ollama engine's NDJSON → SSE for an OpenAI client. */
function ndjsonToSse(translator: Translator<never, unknown>, counts: TokenCounts): StreamRelay {
  return translatingRelay(ndjsonValues(), translator, encodeSseData, counts, SSE_DONE);
}

const NO_RELAY = (): StreamRelay => ({ push: () => "", end: () => "" });

interface Upstream {
  readonly path: string;
  readonly body: unknown;
  readonly stream: boolean;
}

interface Side {
  readonly translateError: ExchangePlan["translateError"];
  readonly contentType: (stream: boolean) => string;
  readonly enginePath: (path: string) => string;
}

/** A translated plan from a translated request and the two reply translations. */
function translated(
  up: DialectResult<Upstream>,
  side: Side,
  translateJson: ExchangePlan["translateJson"],
  relay: ExchangePlan["relay"] = NO_RELAY,
): DialectResult<ExchangePlan> {
  if (!up.ok) return up;
  const { path, body, stream } = up.value;
  return {
    ok: true,
    value: {
      passthrough: false,
      translateError: side.translateError,
      enginePath: side.enginePath(path),
      body: JSON.stringify(body),
      stream,
      contentType: side.contentType(stream),
      translateJson,
      relay,
    },
  };
}

function notARoute(route: string, dialect: string): DialectResult<ExchangePlan> {
  return {
    ok: false,
    error: { code: "invalid_request", message: `${route} is not an ${dialect} route`, path: "" },
  };
}

function openAIClientOnOllamaEngine(ctx: NamedContext): DialectResult<ExchangePlan> {
  const model = ctx.clientModel ?? ctx.request.model;
  const side: Side = {
    translateError: (status, upstream) => ollamaErrorToOpenAI(status, upstream, ctx.node),
    contentType: (stream) => (stream ? SSE_CONTENT_TYPE : "application/json"),
    enginePath: (path) => path,
  };
  const stream = (includeUsage: boolean) => ({
    id: ctx.id,
    model,
    created: Math.floor(ctx.startedMs / 1000),
    includeUsage,
    node: ctx.node,
  });
  const reply = (nowMs: number) => ({ id: ctx.id, model, created: Math.floor(nowMs / 1000) });
  switch (ctx.route) {
    case "/v1/chat/completions": {
      const req = ctx.request as DialectRequests["/v1/chat/completions"];
      const usage = req.stream_options?.include_usage === true;
      return translated(
        openAIChatToOllama(req),
        side,
        (u, nowMs) => ollamaChatToOpenAIChat(u as never, reply(nowMs)),
        (_nowMs, counts) => ndjsonToSse(new OllamaToOpenAIChatStream(stream(usage)), counts),
      );
    }
    case "/v1/completions": {
      const req = ctx.request as DialectRequests["/v1/completions"];
      const usage = req.stream_options?.include_usage === true;
      return translated(
        openAICompletionToOllama(req),
        side,
        (u, nowMs) => ollamaGenerateToOpenAICompletion(u as never, reply(nowMs)),
        (_nowMs, counts) => ndjsonToSse(new OllamaToOpenAICompletionStream(stream(usage)), counts),
      );
    }
    case "/v1/embeddings": {
      const req = ctx.request as DialectRequests["/v1/embeddings"];
      const format = req.encoding_format === undefined ? {} : { encodingFormat: req.encoding_format };
      return translated(openAIEmbeddingToOllama(req), side, (u) =>
        ollamaEmbedToOpenAIEmbedding(u as never, { model, ...format }),
      );
    }
    default:
      return notARoute(ctx.route, "OpenAI");
  }
}

function ollamaClientOnOpenAIEngine(ctx: NamedContext): DialectResult<ExchangePlan> {
  const model = ctx.clientModel ?? ctx.request.model;
  const side: Side = {
    translateError: (status, upstream) => openAIErrorToOllama(status, upstream, ctx.node),
    contentType: (stream) => (stream ? "application/x-ndjson" : "application/json"),
    enginePath: stripV1,
  };
  const reply = (nowMs: number) => ({ model, nowMs, startedMs: ctx.startedMs });
  const stream = (nowMs: number) => ({ model, nowMs, node: ctx.node });
  switch (ctx.route) {
    case "/api/chat":
      return translated(
        ollamaChatToOpenAI(ctx.request as DialectRequests["/api/chat"]),
        side,
        (u, nowMs) => openAIChatToOllamaChat(u as never, reply(nowMs)),
        (nowMs, counts) => sseToNdjson(new OpenAIToOllamaChatStream(stream(nowMs)), counts),
      );
    case "/api/generate": {
      const up = ollamaGenerateToOpenAI(ctx.request as DialectRequests["/api/generate"]);
      const viaChat = up.ok && up.value.path === "/v1/chat/completions";
      return translated(
        up,
        side,
        (u, nowMs) =>
          viaChat
            ? openAIChatToOllamaGenerate(u as never, reply(nowMs))
            : openAICompletionToOllamaGenerate(u as never, reply(nowMs)),
        (nowMs, counts) => sseToNdjson(new OpenAIToOllamaGenerateStream(stream(nowMs)), counts),
      );
    }
    case "/api/embed":
      return translated(ollamaEmbedToOpenAI(ctx.request as DialectRequests["/api/embed"]), side, (u, nowMs) =>
        openAIEmbeddingToOllamaEmbed(u as never, reply(nowMs)),
      );
    case "/api/embeddings":
      return translated(
        ollamaEmbeddingsToOpenAI(ctx.request as DialectRequests["/api/embeddings"]),
        side,
        (u) => openAIEmbeddingToOllamaEmbeddings(u as never),
      );
    default:
      return notARoute(ctx.route, "Ollama");
  }
}

/** Whether the client asked for a stream, in its own dialect's default. */
export function clientStreams(route: DialectRoute, request: DialectRequests[DialectRoute]): boolean {
  if (route.endsWith("embed") || route.endsWith("embeddings")) return false;
  const stream = (request as { stream?: boolean }).stream;
  return route.startsWith("/v1/") ? stream === true : stream !== false;
}

export function planExchange(ctx: PlanContext): DialectResult<ExchangePlan> {
  const asked = ctx.request.model;
  const plan =
    ctx.upstreamModel !== undefined && ctx.upstreamModel !== asked
      ? renamedPlan(ctx, asked, ctx.upstreamModel)
      : planFor(ctx);
  return asksBase64FromOpenAI(ctx) ? base64Plan(plan) : plan;
}

/** An OpenAI client asked an OpenAI engine for base64 embeddings, which the engine may ignore. */
function asksBase64FromOpenAI(ctx: PlanContext): boolean {
  return (
    ctx.route === "/v1/embeddings" &&
    ctx.engineApi === "openai" &&
    (ctx.request as DialectRequests["/v1/embeddings"]).encoding_format === "base64"
  );
}

/** The plan with float vectors in its reply re-encoded as base64 (no longer a pass-through). */
function base64Plan(plan: DialectResult<ExchangePlan>): DialectResult<ExchangePlan> {
  if (!plan.ok) return plan;
  const inner = plan.value;
  return {
    ok: true,
    value: {
      ...inner,
      passthrough: false,
      translateJson: (upstream, nowMs) => withBase64Embeddings(inner.translateJson(upstream, nowMs)),
    },
  };
}

function planFor(ctx: NamedContext): DialectResult<ExchangePlan> {
  const clientDialect = ctx.route.startsWith("/v1/") ? "openai" : "ollama";
  if (clientDialect === ctx.engineApi)
    return { ok: true, value: passthroughPlan(ctx, clientStreams(ctx.route, ctx.request)) };
  return clientDialect === "openai" ? openAIClientOnOllamaEngine(ctx) : ollamaClientOnOpenAIEngine(ctx);
}

/** `value` with its `model` field (when it has one) set to `model`. */
function withModel(value: unknown, model: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  return typeof v["model"] === "string" ? { ...v, model } : value;
}

/**
 * The plan for an engine that advertises the model under another name of its alias group: the
 * request (parsed and raw) carries the engine's name; every reply object carries the client's. Same
 * dialect on both sides is then no longer a pass-through: each reply value is rewritten.
 */
function renamedPlan(ctx: PlanContext, asked: string, upstreamModel: string): DialectResult<ExchangePlan> {
  const parsed = JSON.parse(ctx.raw.toString("utf8")) as Record<string, unknown>;
  const inner = planFor({
    ...ctx,
    request: { ...ctx.request, model: upstreamModel },
    raw: Buffer.from(JSON.stringify({ ...parsed, model: upstreamModel })),
    clientModel: asked,
  });
  if (!inner.ok || !inner.value.passthrough) return inner;
  const rename: Translator<never, unknown> = { push: (v) => [withModel(v, asked)], finish: () => [] };
  const openai = ctx.engineApi === "openai";
  return {
    ok: true,
    value: {
      ...inner.value,
      passthrough: false,
      translateJson: (upstream) => withModel(upstream, asked),
      relay: (_nowMs, counts) =>
        openai
          ? translatingRelay(sseValues(), rename, encodeSseData, counts, SSE_DONE)
          : translatingRelay(ndjsonValues(), rename, encodeNdjson, counts),
    },
  };
}
