/**
 * The Ollama dialect's routes: request parsing and validation with Ollama's errors and
 * statuses, streaming by default (NDJSON unless `"stream": false`), then the shared pipeline.
 * Knows the dialect's rules; the wire shapes live in ollama-wire.ts, pacing and slots in the runner.
 */

import { ollamaNumCtx, ollamaTruncate } from "./context-window.js";
import { findModel, type EngineContext, type Route } from "./engine-context.js";
import { InferenceCall } from "./engine-stats.js";
import { FieldReader, describeJson, isRecord } from "./field-reader.js";
import { generate, runInference, type ResponseFormat } from "./generation-runner.js";
import {
  cutConnection,
  pause,
  readJsonObject,
  sendJson,
  sendText,
  type Exchange,
  type JsonRequest,
} from "./http-exchange.js";
import type { ResolvedModel } from "./options.js";
import {
  OLLAMA_JSON,
  chatFormat,
  fieldMessage,
  generateFormat,
  loadedBody,
  modelNotFoundMessage,
  psBody,
  showBody,
  sendOllamaError,
  tagsBody,
  writeOllamaFailure,
  type OllamaIdentity,
} from "./ollama-wire.js";
import {
  countChatTokens,
  countTextTokens,
  embedText,
  planReply,
  type CountedMessage,
  type ReplyPlan,
} from "./token-generator.js";

/** What Ollama (its HTTP router) answers for a path it does not serve. */
export function sendOllamaNotFound(exchange: Exchange): void {
  sendText(exchange.res, 404, "404 page not found");
}

function reject(exchange: Exchange, call: InferenceCall, status: number, message: string): undefined {
  sendOllamaError(exchange.res, status, message);
  call.settle("invalid");
  return undefined;
}

function rejectBody(exchange: Exchange, call: InferenceCall, parsed: JsonRequest & { ok: false }): undefined {
  switch (parsed.problem) {
    case "aborted":
      call.settle("cancelled");
      return undefined;
    case "too_large":
      return reject(exchange, call, 413, "http: request body too large");
    case "empty":
      return reject(exchange, call, 400, "missing request body");
    case "syntax":
    case "not_object":
      return reject(exchange, call, 400, parsed.detail);
  }
}

interface Started {
  readonly call: InferenceCall;
  readonly reader: FieldReader;
  readonly model: ResolvedModel;
  /** As the request named it; Ollama echoes this spelling. */
  readonly requestedName: string;
  readonly receivedMs: number;
}

/** Common start of every inference route: count, read, parse, and resolve the model. */
async function begin(ctx: EngineContext, exchange: Exchange): Promise<Started | undefined> {
  const receivedMs = ctx.options.clock.now().monoMs;
  const call = new InferenceCall(ctx.stats);
  const parsed = await readJsonObject(exchange, ctx.options.maxBodyBytes);
  if (!parsed.ok) return rejectBody(exchange, call, parsed);
  const reader = new FieldReader(parsed.value);
  const requestedName = reader.raw("model") ?? reader.raw("name");
  if (requestedName === undefined || requestedName === "")
    return reject(exchange, call, 400, "model is required");
  if (typeof requestedName !== "string") {
    const problem = {
      kind: "type",
      field: "model",
      expected: "a string",
      got: describeJson(requestedName),
    } as const;
    return reject(exchange, call, 400, fieldMessage(problem));
  }
  const model = findModel(ctx, requestedName, "ollama");
  if (!model) return reject(exchange, call, 404, modelNotFoundMessage(requestedName));
  ctx.loaded.set(model.name, ctx.options.clock.now().wallMs);
  return { call, reader, model, requestedName, receivedMs };
}

function identity(ctx: EngineContext, model: string): OllamaIdentity {
  return { model, createdAt: () => new Date(ctx.options.clock.now().wallMs).toISOString() };
}

/**
 * `stream` (default true), `options.num_predict` (negative: no limit, so the model's default),
 * `options.num_ctx` (the window to run with) and `truncate` (false: refuse a prompt over it).
 */
function readGenerationParams(
  reader: FieldReader,
  model: ResolvedModel,
): { stream: boolean; maxTokens: number | undefined; numCtx: number | undefined; truncate: boolean } {
  const stream = reader.optionalBoolean("stream") ?? true;
  const options = reader.optionalObject("options");
  const numPredict = options?.optionalInteger("num_predict", -2);
  const numCtx = options?.optionalInteger("num_ctx", 1);
  const truncate = reader.optionalBoolean("truncate") ?? true;
  const maxTokens =
    numPredict === undefined || numPredict < 0 ? undefined : Math.min(numPredict, model.contextTokens);
  return { stream, maxTokens, numCtx, truncate };
}

/**
 * The prompt as the model sees it under its `num_ctx`: cut to fit (Ollama's default, silent), or,
 * with `truncate: false`, refused with Ollama's 400.
 */
function fitPrompt(
  ctx: EngineContext,
  model: ResolvedModel,
  params: { numCtx: number | undefined; truncate: boolean },
  promptTokens: number,
  echo: string,
): { promptTokens: number; echo: string } | undefined {
  const cut = ollamaTruncate(promptTokens, ollamaNumCtx(ctx, model, params.numCtx), echo);
  return cut.truncated && !params.truncate ? undefined : cut;
}

const TOO_LONG = "the input length exceeds the context length";

async function runGeneration(
  ctx: EngineContext,
  exchange: Exchange,
  started: Started,
  plan: ReplyPlan,
  promptTokens: number,
  stream: boolean,
  format: ResponseFormat,
): Promise<void> {
  const job = {
    plan,
    promptTokens,
    stream,
    format,
    receivedMs: started.receivedMs,
    model: started.model.name,
  };
  await runInference(ctx, exchange, started.call, writeOllamaFailure, (cut) =>
    generate(ctx, exchange, job, cut),
  );
}

function readMessages(reader: FieldReader): CountedMessage[] {
  const raw = reader.raw("messages");
  const messages: CountedMessage[] = [];
  if (raw === undefined || raw === null) return messages;
  if (!Array.isArray(raw)) return reader.mistyped("messages", "an array", raw) ?? messages;
  raw.forEach((message: unknown, index) => {
    if (!isRecord(message)) return reader.mistyped(`messages[${index}]`, "an object", message);
    const fields = reader.child(message, `messages[${index}].`);
    const role = fields.requiredString("role");
    const content = fields.optionalString("content") ?? "";
    if (role !== undefined) messages.push({ role, content });
  });
  return messages;
}

async function chat(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const started = await begin(ctx, exchange);
  if (!started) return;
  const { call, reader, model, requestedName } = started;
  const messages = readMessages(reader);
  const params = readGenerationParams(reader, model);
  const { stream, maxTokens } = params;
  if (reader.problem) return reject(exchange, call, 400, fieldMessage(reader.problem));
  const who = identity(ctx, requestedName);
  if (messages.length === 0) {
    sendJson(exchange.res, 200, loadedBody(requestedName, who.createdAt(), "chat"), OLLAMA_JSON);
    return call.settle("completed");
  }
  const lastUser = messages.findLast((message) => message.role === "user") ?? messages.at(-1);
  const seen = fitPrompt(ctx, model, params, countChatTokens(messages), lastUser?.content ?? "");
  if (seen === undefined) return reject(exchange, call, 400, TOO_LONG);
  const plan = planReply(model, {
    promptText: messages.map((message) => `${message.role}: ${message.content}`).join("\n"),
    echoText: seen.echo,
    maxTokens,
  });
  await runGeneration(ctx, exchange, started, plan, seen.promptTokens, stream, chatFormat(who));
}

async function generateRoute(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const started = await begin(ctx, exchange);
  if (!started) return;
  const { call, reader, model, requestedName } = started;
  const prompt = reader.optionalString("prompt") ?? "";
  const system = reader.optionalString("system") ?? "";
  const raw = reader.optionalBoolean("raw") ?? false;
  const params = readGenerationParams(reader, model);
  const { stream, maxTokens } = params;
  if (reader.problem) return reject(exchange, call, 400, fieldMessage(reader.problem));
  const who = identity(ctx, requestedName);
  if (prompt === "") {
    sendJson(exchange.res, 200, loadedBody(requestedName, who.createdAt(), "generate"), OLLAMA_JSON);
    return call.settle("completed");
  }
  const promptText = system ? `${system}\n${prompt}` : prompt;
  const seen = fitPrompt(ctx, model, params, Math.max(1, countTextTokens(promptText)), prompt);
  if (seen === undefined) return reject(exchange, call, 400, TOO_LONG);
  const plan = planReply(model, { promptText, echoText: seen.echo, maxTokens });
  await runGeneration(
    ctx,
    exchange,
    started,
    plan,
    seen.promptTokens,
    stream,
    generateFormat(who, promptText, !raw),
  );
}

/** `POST /api/embed` (`input`: text or texts) and the legacy `POST /api/embeddings` (`prompt`). */
function embedRoute(legacy: boolean) {
  return async (ctx: EngineContext, exchange: Exchange): Promise<void> => {
    const started = await begin(ctx, exchange);
    if (!started) return;
    const { call, reader, model, requestedName, receivedMs } = started;
    let texts: string[] = [];
    const raw = reader.raw(legacy ? "prompt" : "input");
    if (typeof raw === "string") texts = raw === "" ? [] : [raw];
    else if (Array.isArray(raw) && raw.every((item) => typeof item === "string")) texts = raw;
    else if (raw !== undefined && raw !== null)
      reader.mistyped(legacy ? "prompt" : "input", "a string or an array of strings", raw);
    const dimensions = legacy ? undefined : reader.optionalInteger("dimensions", 1);
    if (reader.problem) return reject(exchange, call, 400, fieldMessage(reader.problem));
    if (dimensions !== undefined && dimensions > model.embeddingDimensions) {
      return reject(
        exchange,
        call,
        400,
        `invalid dimensions: the model's embeddings have ${model.embeddingDimensions}`,
      );
    }
    await runInference(ctx, exchange, call, writeOllamaFailure, async (cut) => {
      const grantedMs = ctx.options.clock.now().monoMs;
      if (texts.length > 0) await pause(ctx.options.firstTokenDelayMs, exchange.signal);
      if (exchange.signal.aborted) return "cancelled";
      if (cut !== undefined) {
        cutConnection(exchange);
        return "faulted";
      }
      const vectors = texts.map((text) => embedText(model, text, dimensions));
      const doneMs = ctx.options.clock.now().monoMs;
      const body = legacy
        ? { embedding: vectors[0] ?? [] }
        : {
            model: requestedName,
            embeddings: vectors,
            total_duration: Math.round((doneMs - receivedMs) * 1e6),
            load_duration: Math.round((grantedMs - receivedMs) * 1e6),
            prompt_eval_count: texts.reduce((sum, text) => sum + Math.max(1, countTextTokens(text)), 0),
          };
      sendJson(exchange.res, 200, body, OLLAMA_JSON);
      return "completed";
    });
  };
}

function tags(ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendJson(exchange.res, 200, tagsBody(ctx.options.models), OLLAMA_JSON);
  return Promise.resolve();
}

/** `POST /api/show`: the model by the name given (`model`, or the older `name`). */
async function show(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const parsed = await readJsonObject(exchange, ctx.options.maxBodyBytes);
  if (!parsed.ok)
    return sendOllamaError(
      exchange.res,
      400,
      parsed.problem === "empty" ? "missing request body" : "invalid request",
    );
  const requested = parsed.value["model"] ?? parsed.value["name"];
  if (typeof requested !== "string" || requested === "")
    return sendOllamaError(exchange.res, 400, "model is required");
  const model = findModel(ctx, requested, "ollama");
  if (!model) return sendOllamaError(exchange.res, 404, modelNotFoundMessage(requested));
  sendJson(exchange.res, 200, showBody(model), OLLAMA_JSON);
}

function ps(ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendJson(
    exchange.res,
    200,
    psBody(ctx.options.models, ctx.loaded, ctx.options.clock.now().wallMs, ctx.numCtx),
    OLLAMA_JSON,
  );
  return Promise.resolve();
}

function version(ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendJson(exchange.res, 200, { version: ctx.options.ollamaVersion }, OLLAMA_JSON);
  return Promise.resolve();
}

function running(_ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendText(exchange.res, 200, "Ollama is running");
  return Promise.resolve();
}

export const ollamaRoutes: readonly Route[] = [
  { method: "GET", path: "/", handler: running },
  { method: "HEAD", path: "/", handler: running },
  { method: "GET", path: "/api/version", handler: version },
  { method: "GET", path: "/api/tags", handler: tags },
  { method: "GET", path: "/api/ps", handler: ps },
  { method: "POST", path: "/api/show", handler: show },
  { method: "POST", path: "/api/chat", handler: chat },
  { method: "POST", path: "/api/generate", handler: generateRoute },
  { method: "POST", path: "/api/embed", handler: embedRoute(false) },
  { method: "POST", path: "/api/embeddings", handler: embedRoute(true) },
];
