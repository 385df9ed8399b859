/**
 * What one routed request becomes for one engine: the upstream path and body, and how the reply is
 * carried back. Same dialect on both sides: the client's bytes go up unchanged and the engine's
 * bytes come back unchanged (only watched for token counts). Different dialects: the request is
 * translated, and the reply is decoded, translated and encoded again, streamed or not.
 * Must not know: sockets, scheduling, failover (forward.ts), the inventory.
 */

import {
  NdjsonDecoder,
  OllamaToOpenAIChatStream,
  OllamaToOpenAICompletionStream,
  OpenAIToOllamaChatStream,
  OpenAIToOllamaGenerateStream,
  SSE_CONTENT_TYPE,
  SSE_DONE,
  SseDecoder,
  encodeNdjson,
  encodeSseData,
  ollamaChatToOpenAI,
  ollamaChatToOpenAIChat,
  ollamaEmbedToOpenAI,
  ollamaEmbedToOpenAIEmbedding,
  ollamaEmbeddingsToOpenAI,
  ollamaErrorToOpenAI,
  ollamaGenerateToOpenAI,
  ollamaGenerateToOpenAICompletion,
  openAIChatToOllama,
  openAIChatToOllamaChat,
  openAIChatToOllamaGenerate,
  openAICompletionToOllama,
  openAICompletionToOllamaGenerate,
  openAIEmbeddingToOllama,
  openAIEmbeddingToOllamaEmbed,
  openAIEmbeddingToOllamaEmbeddings,
  openAIErrorToOllama,
  readOpenAIStreamEvent,
  type DialectRequests,
  type DialectResult,
  type DialectRoute,
} from "../dialects/index.js";
import type { EngineApi } from "../engines/engine-inventory.js";

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
  readonly engineApi: EngineApi;
  /** Completion id for translated OpenAI replies. */
  readonly id: string;
  readonly startedMs: number;
  readonly node: string;
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
    translateJson: (upstream) => upstream,
    relay: (_nowMs, counts) => watcher(openai, counts),
    translateError: (status, upstream) => ({ status, body: upstream }),
  };
}

/** A relay that forwards nothing itself but watches the engine's stream for token counts. */
function watcher(openai: boolean, counts: TokenCounts): StreamRelay {
  const sse = openai ? new SseDecoder() : undefined;
  const nd = openai ? undefined : new NdjsonDecoder();
  const see = (items: readonly unknown[]) => items.forEach((item) => countTokens(item, counts));
  return {
    push(chunk) {
      if (sse !== undefined) {
        const r = sse.push(chunk);
        if (r.ok) for (const e of r.value) if (e.data.includes("usage")) see([readJson(e.data)]);
      } else if (nd !== undefined) {
        const r = nd.push(chunk);
        if (r.ok) see(r.value);
      }
      return "";
    },
    end: () => "",
  };
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

type Translator<I, O> = { push(item: I, nowMs?: number): O[]; finish(nowMs?: number): O[] };

/** Decode an OpenAI engine's SSE, translate each chunk, encode NDJSON for an Ollama client. */
function sseToNdjson(translator: Translator<never, unknown>, counts: TokenCounts): StreamRelay {
  const decoder = new SseDecoder();
  let out = "";
  const take = (events: readonly { data: string }[]) => {
    for (const e of events) {
      const ev = readOpenAIStreamEvent(e);
      if (ev.kind !== "json") continue;
      countTokens(ev.value, counts);
      for (const item of translator.push(ev.value as never)) out += encodeNdjson(item);
    }
  };
  return {
    push(chunk) {
      out = "";
      const r = decoder.push(chunk);
      if (r.ok) take(r.value);
      return out;
    },
    end() {
      out = "";
      const r = decoder.end();
      if (r.ok) take(r.value);
      for (const item of translator.finish()) out += encodeNdjson(item);
      return out;
    },
  };
}

/** Decode an Ollama engine's NDJSON, translate each object, encode SSE for an OpenAI client. */
function ndjsonToSse(translator: Translator<never, unknown>, counts: TokenCounts): StreamRelay {
  const decoder = new NdjsonDecoder();
  let out = "";
  let ended = false;
  const take = (values: readonly unknown[]) => {
    for (const v of values) {
      countTokens(v, counts);
      for (const item of translator.push(v as never)) out += encodeSseData(item);
    }
  };
  return {
    push(chunk) {
      out = "";
      const r = decoder.push(chunk);
      if (r.ok) take(r.value);
      return out;
    },
    end() {
      out = "";
      const r = decoder.end();
      if (r.ok) take(r.value);
      for (const item of translator.finish()) out += encodeSseData(item);
      if (!ended) out += SSE_DONE;
      ended = true;
      return out;
    },
  };
}

function openAIClientOnOllamaEngine(ctx: PlanContext): DialectResult<ExchangePlan> {
  const created = Math.floor(ctx.startedMs / 1000);
  const model = ctx.request.model;
  const base = {
    passthrough: false,
    translateError: (status: number, upstream: unknown) => ollamaErrorToOpenAI(status, upstream, ctx.node),
  };
  switch (ctx.route) {
    case "/v1/chat/completions": {
      const req = ctx.request as DialectRequests["/v1/chat/completions"];
      const up = openAIChatToOllama(req);
      if (!up.ok) return up;
      const includeUsage = req.stream_options?.include_usage === true;
      return {
        ok: true,
        value: {
          ...base,
          enginePath: up.value.path,
          body: JSON.stringify(up.value.body),
          stream: up.value.stream,
          contentType: up.value.stream ? SSE_CONTENT_TYPE : "application/json",
          translateJson: (u, nowMs) =>
            ollamaChatToOpenAIChat(u as never, { id: ctx.id, model, created: Math.floor(nowMs / 1000) }),
          relay: (_nowMs, counts) =>
            ndjsonToSse(
              new OllamaToOpenAIChatStream({ id: ctx.id, model, created, includeUsage, node: ctx.node }),
              counts,
            ),
        },
      };
    }
    case "/v1/completions": {
      const req = ctx.request as DialectRequests["/v1/completions"];
      const up = openAICompletionToOllama(req);
      if (!up.ok) return up;
      const includeUsage = req.stream_options?.include_usage === true;
      return {
        ok: true,
        value: {
          ...base,
          enginePath: up.value.path,
          body: JSON.stringify(up.value.body),
          stream: up.value.stream,
          contentType: up.value.stream ? SSE_CONTENT_TYPE : "application/json",
          translateJson: (u, nowMs) =>
            ollamaGenerateToOpenAICompletion(u as never, {
              id: ctx.id,
              model,
              created: Math.floor(nowMs / 1000),
            }),
          relay: (_nowMs, counts) =>
            ndjsonToSse(
              new OllamaToOpenAICompletionStream({
                id: ctx.id,
                model,
                created,
                includeUsage,
                node: ctx.node,
              }),
              counts,
            ),
        },
      };
    }
    case "/v1/embeddings": {
      const req = ctx.request as DialectRequests["/v1/embeddings"];
      const up = openAIEmbeddingToOllama(req);
      if (!up.ok) return up;
      return {
        ok: true,
        value: {
          ...base,
          enginePath: up.value.path,
          body: JSON.stringify(up.value.body),
          stream: false,
          contentType: "application/json",
          translateJson: (u) =>
            ollamaEmbedToOpenAIEmbedding(u as never, {
              model,
              ...(req.encoding_format === undefined ? {} : { encodingFormat: req.encoding_format }),
            }),
          relay: () => ({ push: () => "", end: () => "" }),
        },
      };
    }
    default:
      return {
        ok: false,
        error: { code: "invalid_request", message: `${ctx.route} is not an OpenAI route`, path: "" },
      };
  }
}

function ollamaClientOnOpenAIEngine(ctx: PlanContext): DialectResult<ExchangePlan> {
  const model = ctx.request.model;
  const base = {
    passthrough: false,
    translateError: (status: number, upstream: unknown) => openAIErrorToOllama(status, upstream, ctx.node),
  };
  const replyCtx = (nowMs: number) => ({ model, nowMs, startedMs: ctx.startedMs });
  switch (ctx.route) {
    case "/api/chat": {
      const up = ollamaChatToOpenAI(ctx.request as DialectRequests["/api/chat"]);
      if (!up.ok) return up;
      return {
        ok: true,
        value: {
          ...base,
          enginePath: stripV1(up.value.path),
          body: JSON.stringify(up.value.body),
          stream: up.value.stream,
          contentType: "application/x-ndjson",
          translateJson: (u, nowMs) => openAIChatToOllamaChat(u as never, replyCtx(nowMs)),
          relay: (nowMs, counts) =>
            sseToNdjson(new OpenAIToOllamaChatStream({ model, nowMs, node: ctx.node }), counts),
        },
      };
    }
    case "/api/generate": {
      const up = ollamaGenerateToOpenAI(ctx.request as DialectRequests["/api/generate"]);
      if (!up.ok) return up;
      const viaChat = up.value.path === "/v1/chat/completions";
      return {
        ok: true,
        value: {
          ...base,
          enginePath: stripV1(up.value.path),
          body: JSON.stringify(up.value.body),
          stream: up.value.stream,
          contentType: "application/x-ndjson",
          translateJson: (u, nowMs) =>
            viaChat
              ? openAIChatToOllamaGenerate(u as never, replyCtx(nowMs))
              : openAICompletionToOllamaGenerate(u as never, replyCtx(nowMs)),
          relay: (nowMs, counts) =>
            sseToNdjson(new OpenAIToOllamaGenerateStream({ model, nowMs, node: ctx.node }), counts),
        },
      };
    }
    case "/api/embed":
    case "/api/embeddings": {
      const legacy = ctx.route === "/api/embeddings";
      const up = legacy
        ? ollamaEmbeddingsToOpenAI(ctx.request as DialectRequests["/api/embeddings"])
        : ollamaEmbedToOpenAI(ctx.request as DialectRequests["/api/embed"]);
      if (!up.ok) return up;
      return {
        ok: true,
        value: {
          ...base,
          enginePath: stripV1(up.value.path),
          body: JSON.stringify(up.value.body),
          stream: false,
          contentType: "application/json",
          translateJson: (u, nowMs) =>
            legacy
              ? openAIEmbeddingToOllamaEmbeddings(u as never)
              : openAIEmbeddingToOllamaEmbed(u as never, replyCtx(nowMs)),
          relay: () => ({ push: () => "", end: () => "" }),
        },
      };
    }
    default:
      return {
        ok: false,
        error: { code: "invalid_request", message: `${ctx.route} is not an Ollama route`, path: "" },
      };
  }
}

/** Whether the client asked for a stream, in its own dialect's default. */
export function clientStreams(route: DialectRoute, request: DialectRequests[DialectRoute]): boolean {
  if (route.endsWith("embed") || route.endsWith("embeddings")) return false;
  const stream = (request as { stream?: boolean }).stream;
  return route.startsWith("/v1/") ? stream === true : stream !== false;
}

export function planExchange(ctx: PlanContext): DialectResult<ExchangePlan> {
  const clientDialect = ctx.route.startsWith("/v1/") ? "openai" : "ollama";
  if (clientDialect === ctx.engineApi)
    return { ok: true, value: passthroughPlan(ctx, clientStreams(ctx.route, ctx.request)) };
  return clientDialect === "openai" ? openAIClientOnOllamaEngine(ctx) : ollamaClientOnOpenAIEngine(ctx);
}
