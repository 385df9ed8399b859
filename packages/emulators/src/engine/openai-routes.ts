/**
 * The OpenAI dialect's routes (what vLLM, llama.cpp server and LM Studio serve): request
 * parsing and validation with OpenAI's error envelope, then the shared pipeline. Knows the
 * dialect's rules; the wire shapes live in openai-wire.ts, pacing and slots in the runner.
 */

import { openAiOverflow } from "./context-window.js";
import { findModel, type EngineContext, type Route } from "./engine-context.js";
import { InferenceCall } from "./engine-stats.js";
import { FieldReader, describeJson, isRecord } from "./field-reader.js";
import { generate, runInference } from "./generation-runner.js";
import {
  cutConnection,
  pause,
  readJsonObject,
  sendJson,
  type Exchange,
  type JsonRequest,
} from "./http-exchange.js";
import type { ResolvedModel } from "./options.js";
import {
  chatFormat,
  completionFormat,
  embeddingsBody,
  encodeEmbedding,
  fieldError,
  invalidRequest,
  modelNotFound,
  modelObject,
  sendOpenAiError,
  writeOpenAiFailure,
  type OpenAiError,
} from "./openai-wire.js";
import {
  countChatTokens,
  countTextTokens,
  embedText,
  planReply,
  type CountedMessage,
} from "./token-generator.js";

/** The error for a path no route serves (OpenAI answers unknown URLs with its envelope). */
export function sendOpenAiNotFound(exchange: Exchange): void {
  sendOpenAiError(
    exchange.res,
    404,
    invalidRequest(`Invalid URL (${exchange.req.method ?? "GET"} ${exchange.path})`),
  );
}

function reject(exchange: Exchange, call: InferenceCall, status: number, error: OpenAiError): undefined {
  sendOpenAiError(exchange.res, status, error);
  call.settle("invalid");
  return undefined;
}

/** Answers a body that could not be read as one JSON object. */
function rejectBody(exchange: Exchange, call: InferenceCall, parsed: JsonRequest & { ok: false }): undefined {
  switch (parsed.problem) {
    case "aborted":
      call.settle("cancelled");
      return undefined;
    case "too_large":
      return reject(exchange, call, 413, invalidRequest(`Request too large: ${parsed.detail}.`));
    case "empty":
    case "syntax":
    case "not_object":
      return reject(
        exchange,
        call,
        400,
        invalidRequest(
          `We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON: ${parsed.detail}.)`,
        ),
      );
  }
}

/** Common start of every inference route: count, read, parse, and resolve the model. */
async function begin(
  ctx: EngineContext,
  exchange: Exchange,
): Promise<
  { call: InferenceCall; reader: FieldReader; model: ResolvedModel; receivedMs: number } | undefined
> {
  const receivedMs = ctx.options.clock.now().monoMs;
  const call = new InferenceCall(ctx.stats);
  const parsed = await readJsonObject(exchange, ctx.options.maxBodyBytes);
  if (!parsed.ok) return rejectBody(exchange, call, parsed);
  const reader = new FieldReader(parsed.value);
  const name = reader.raw("model");
  if (name === undefined || name === null || name === "") {
    return reject(exchange, call, 400, invalidRequest("you must provide a model parameter"));
  }
  if (typeof name !== "string") {
    return reject(
      exchange,
      call,
      400,
      fieldError({ kind: "type", field: "model", expected: "a string", got: describeJson(name) }),
    );
  }
  const model = findModel(ctx, name, "openai");
  if (!model) return reject(exchange, call, 404, modelNotFound(name));
  exchange.res.setHeader("x-request-id", `req_emu${ctx.nextId()}`);
  return { call, reader, model, receivedMs };
}

/** Text of a message's `content`: a string, null, or an array of parts whose text parts count. */
function contentText(reader: FieldReader): string | undefined {
  const value = reader.raw("content");
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (!Array.isArray(value))
    return reader.mistyped("content", "a string or an array of content parts", value);
  let text = "";
  for (const part of value) {
    if (!isRecord(part) || typeof part["type"] !== "string") {
      return reader.mistyped("content", "an array of content parts", part);
    }
    if (part["type"] === "text" && typeof part["text"] === "string")
      text += (text ? "\n" : "") + part["text"];
  }
  return text;
}

function readMessages(reader: FieldReader): CountedMessage[] {
  const raw = reader.raw("messages");
  const messages: CountedMessage[] = [];
  if (raw === undefined) reader.missing("messages", "an array");
  else if (!Array.isArray(raw)) reader.mistyped("messages", "an array", raw);
  else if (raw.length === 0) {
    reader.report({
      kind: "range",
      field: "messages",
      expected: "an array with minimum length 1",
      got: "an empty array",
    });
  } else {
    raw.forEach((message: unknown, index) => {
      if (!isRecord(message)) return reader.mistyped(`messages[${index}]`, "an object", message);
      const fields = reader.child(message, `messages[${index}].`);
      const role = fields.requiredString("role");
      const content = contentText(fields);
      if (role !== undefined && content !== undefined) messages.push({ role, content });
    });
  }
  return messages;
}

/** The shared streaming parameters and the completion token limit. */
function readGenerationParams(
  reader: FieldReader,
  model: ResolvedModel,
): { stream: boolean; includeUsage: boolean; maxTokens: number | undefined; error?: OpenAiError } {
  const stream = reader.optionalBoolean("stream") ?? false;
  const streamOptions = reader.optionalObject("stream_options");
  const includeUsage = streamOptions?.optionalBoolean("include_usage") ?? false;
  const maxTokens =
    reader.optionalInteger("max_completion_tokens", 1) ?? reader.optionalInteger("max_tokens", 1);
  const n = reader.optionalInteger("n", 1);
  const params = { stream, includeUsage, maxTokens };
  if (reader.problem) return { ...params, error: fieldError(reader.problem) };
  if (streamOptions && !stream) {
    return {
      ...params,
      error: invalidRequest(
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "stream_options",
      ),
    };
  }
  if (n !== undefined && n !== 1) {
    return {
      ...params,
      error: invalidRequest("The engine emulator supports only n = 1.", "n", "invalid_value"),
    };
  }
  if (maxTokens !== undefined && maxTokens > model.contextTokens) {
    const message = `max_tokens is too large: ${maxTokens}. This model supports at most ${model.contextTokens} completion tokens, whereas you provided ${maxTokens}.`;
    return { ...params, error: invalidRequest(message, "max_tokens", "invalid_value") };
  }
  return params;
}

async function chatCompletions(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const start = await begin(ctx, exchange);
  if (!start) return;
  const { call, reader, model, receivedMs } = start;
  const messages = readMessages(reader);
  const params = readGenerationParams(reader, model);
  if (params.error) return reject(exchange, call, 400, params.error);
  const promptTokens = countChatTokens(messages);
  const overflow = openAiOverflow(ctx, model, promptTokens, params.maxTokens);
  if (overflow !== undefined) {
    sendJson(exchange.res, overflow.status, overflow.body);
    return call.settle("invalid");
  }
  const lastUser = messages.findLast((message) => message.role === "user") ?? messages.at(-1);
  const plan = planReply(model, {
    promptText: messages.map((message) => `${message.role}: ${message.content}`).join("\n"),
    echoText: lastUser?.content ?? "",
    maxTokens: params.maxTokens,
  });
  const format = chatFormat({
    id: `chatcmpl-emu${ctx.nextId()}`,
    created: Math.floor(ctx.options.clock.now().wallMs / 1000),
    model: model.name,
    includeUsage: params.includeUsage,
  });
  const job = {
    plan,
    promptTokens,
    stream: params.stream,
    format,
    receivedMs,
    model: model.name,
  };
  await runInference(ctx, exchange, call, writeOpenAiFailure, (cut) => generate(ctx, exchange, job, cut));
}

async function completions(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const start = await begin(ctx, exchange);
  if (!start) return;
  const { call, reader, model, receivedMs } = start;
  const raw = reader.raw("prompt");
  let prompt: string | undefined;
  if (raw === undefined) reader.missing("prompt", "a string");
  else if (typeof raw === "string") prompt = raw;
  else if (Array.isArray(raw) && raw.length === 1 && typeof raw[0] === "string") prompt = raw[0];
  else reader.mistyped("prompt", "a string (the emulator takes one prompt per request)", raw);
  const params = readGenerationParams(reader, model);
  if (params.error || prompt === undefined) {
    return reject(exchange, call, 400, params.error ?? invalidRequest("Invalid 'prompt'.", "prompt"));
  }
  const overflow = openAiOverflow(ctx, model, Math.max(1, countTextTokens(prompt)), params.maxTokens);
  if (overflow !== undefined) {
    sendJson(exchange.res, overflow.status, overflow.body);
    return call.settle("invalid");
  }
  const plan = planReply(model, { promptText: prompt, echoText: prompt, maxTokens: params.maxTokens });
  const format = completionFormat({
    id: `cmpl-emu${ctx.nextId()}`,
    created: Math.floor(ctx.options.clock.now().wallMs / 1000),
    model: model.name,
    includeUsage: params.includeUsage,
  });
  const job = {
    plan,
    promptTokens: Math.max(1, countTextTokens(prompt)),
    stream: params.stream,
    format,
    receivedMs,
    model: model.name,
  };
  await runInference(ctx, exchange, call, writeOpenAiFailure, (cut) => generate(ctx, exchange, job, cut));
}

/** `input` as texts: a string, strings, a token array, or token arrays (tokens become text). */
function readEmbeddingInput(reader: FieldReader): string[] | undefined {
  const raw = reader.raw("input");
  const isTokens = (value: unknown): value is number[] =>
    Array.isArray(value) && value.length > 0 && value.every((token) => Number.isInteger(token));
  if (raw === undefined) return reader.missing("input", "a string or an array");
  if (typeof raw === "string" && raw !== "") return [raw];
  if (isTokens(raw)) return [raw.join(" ")];
  if (Array.isArray(raw) && raw.length > 0) {
    if (raw.every((item) => typeof item === "string" && item !== "")) return raw as string[];
    if (raw.every(isTokens)) return raw.map((tokens) => tokens.join(" "));
  }
  return reader.report({
    kind: "range",
    field: "input",
    expected: "non-empty text or tokens",
    got: JSON.stringify(raw).slice(0, 40),
  });
}

async function embeddings(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const start = await begin(ctx, exchange);
  if (!start) return;
  const { call, reader, model } = start;
  const texts = readEmbeddingInput(reader);
  const encoding = reader.optionalString("encoding_format") ?? "float";
  const dimensions = reader.optionalInteger("dimensions", 1) ?? model.embeddingDimensions;
  if (reader.problem || !texts)
    return reject(
      exchange,
      call,
      400,
      fieldError(reader.problem ?? { kind: "missing", field: "input", expected: "", got: "" }),
    );
  if (encoding !== "float" && encoding !== "base64") {
    return reject(
      exchange,
      call,
      400,
      invalidRequest(
        `Invalid 'encoding_format': expected 'float' or 'base64', but got '${encoding}' instead.`,
        "encoding_format",
        "invalid_value",
      ),
    );
  }
  if (dimensions > model.embeddingDimensions) {
    return reject(
      exchange,
      call,
      400,
      invalidRequest(
        `This model has ${model.embeddingDimensions} dimensions; 'dimensions' must not exceed it.`,
        "dimensions",
        "invalid_value",
      ),
    );
  }
  await runInference(ctx, exchange, call, writeOpenAiFailure, async (cut) => {
    await pause(ctx.options.firstTokenDelayMs, exchange.signal);
    if (exchange.signal.aborted) return "cancelled";
    if (cut !== undefined) {
      cutConnection(exchange);
      return "faulted";
    }
    const vectors = texts.map((text) =>
      encodeEmbedding(
        embedText(model, text, dimensions),
        ctx.options.ignoreEncodingFormat ? "float" : encoding,
      ),
    );
    const promptTokens = texts.reduce((sum, text) => sum + Math.max(1, countTextTokens(text)), 0);
    sendJson(exchange.res, 200, embeddingsBody(model.name, vectors, promptTokens));
    return "completed";
  });
}

function listModels(ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendJson(exchange.res, 200, {
    object: "list",
    data: ctx.options.models.map((model) => modelObject(model, ctx.options.flavor)),
  });
  return Promise.resolve();
}

function retrieveModel(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const name = decodeURIComponent(exchange.path.slice("/v1/models/".length));
  const model = findModel(ctx, name, "openai");
  if (model) sendJson(exchange.res, 200, modelObject(model, ctx.options.flavor));
  else sendOpenAiError(exchange.res, 404, modelNotFound(name));
  return Promise.resolve();
}

function health(_ctx: EngineContext, exchange: Exchange): Promise<void> {
  sendJson(exchange.res, 200, { status: "ok" });
  return Promise.resolve();
}

export const openAiRoutes: readonly Route[] = [
  { method: "GET", path: "/v1/models", handler: listModels },
  { method: "GET", path: "/v1/models/", prefix: true, handler: retrieveModel },
  { method: "POST", path: "/v1/chat/completions", handler: chatCompletions },
  { method: "POST", path: "/v1/completions", handler: completions },
  { method: "POST", path: "/v1/embeddings", handler: embeddings },
  { method: "GET", path: "/health", handler: health },
];
