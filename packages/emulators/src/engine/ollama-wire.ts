/**
 * Ollama's wire shapes as the emulator sends them: chat and generate (whole, and as NDJSON
 * lines), the model list, embeddings, and the `{"error": "..."}` body. Durations are integer
 * nanoseconds. Pure builders over plain values; knows nothing of parsing, slots or faults.
 */

import type { ServerResponse } from "node:http";
import { createHash } from "node:crypto";
import { ollamaName, type FailureWriter } from "./engine-context.js";
import type { FieldProblem } from "./field-reader.js";
import type { GenerationResult, ResponseFormat } from "./generation-runner.js";
import { sendJson } from "./http-exchange.js";
import type { ResolvedModel } from "./options.js";
import { tokenIds } from "./token-generator.js";

export const OLLAMA_JSON = "application/json; charset=utf-8";
export const OLLAMA_NDJSON = "application/x-ndjson";
/** `modified_at` of every listed model: a fixed instant, so listings are byte-identical. */
export const MODEL_MODIFIED_AT = "2025-01-01T00:00:00Z";

export function sendOllamaError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message }, OLLAMA_JSON);
}

export function modelNotFoundMessage(model: string): string {
  return `model "${model}" not found, try pulling it first`;
}

/** A field problem in Ollama's words. */
export function fieldMessage(problem: FieldProblem): string {
  if (problem.kind === "missing") return `${problem.field} is required`;
  return `invalid ${problem.field}: expected ${problem.expected}, got ${problem.got}`;
}

export const writeOllamaFailure: FailureWriter = (res, failure) => {
  if (failure.kind === "overloaded") {
    return sendOllamaError(res, 503, "server busy, please try again.  maximum pending requests exceeded");
  }
  const message =
    failure.status === 500
      ? "llama runner process has terminated: exit status 2"
      : `injected fault: HTTP ${failure.status} (engine emulator)`;
  sendOllamaError(res, failure.status, message);
};

function nanoseconds(ms: number): number {
  return Math.max(0, Math.round(ms * 1_000_000));
}

/** The statistics Ollama appends to its final object. */
export function finalStats(result: GenerationResult): Record<string, number> {
  const { receivedMs, grantedMs, firstTokenMs, doneMs } = result.timings;
  return {
    total_duration: nanoseconds(doneMs - receivedMs),
    load_duration: nanoseconds(grantedMs - receivedMs),
    prompt_eval_count: result.promptTokens,
    prompt_eval_duration: nanoseconds(firstTokenMs - grantedMs),
    eval_count: result.completionTokens,
    eval_duration: nanoseconds(doneMs - firstTokenMs),
  };
}

function line(payload: unknown): string {
  return `${JSON.stringify(payload)}\n`;
}

export interface OllamaIdentity {
  /** The model name as the request gave it (Ollama echoes it). */
  readonly model: string;
  /** RFC 3339 time of now, read when each object is built. */
  readonly createdAt: () => string;
}

/** `POST /api/chat`. */
export function chatFormat(who: OllamaIdentity): ResponseFormat {
  const final = (result: GenerationResult, content: string): object => ({
    model: who.model,
    created_at: who.createdAt(),
    message: { role: "assistant", content },
    done_reason: result.finishReason,
    done: true,
    ...finalStats(result),
  });
  return {
    streamContentType: OLLAMA_NDJSON,
    wholeContentType: OLLAMA_JSON,
    streamHead: () => "",
    streamToken: (token) =>
      line({
        model: who.model,
        created_at: who.createdAt(),
        message: { role: "assistant", content: token },
        done: false,
      }),
    streamTail: (result) => line(final(result, "")),
    wholeBody: (result) => final(result, result.text),
  };
}

/** `POST /api/generate`; `context` carries token ids of prompt and reply (unless raw). */
export function generateFormat(who: OllamaIdentity, prompt: string, withContext: boolean): ResponseFormat {
  const final = (result: GenerationResult, response: string, replyText: string): object => ({
    model: who.model,
    created_at: who.createdAt(),
    response,
    done: true,
    done_reason: result.finishReason,
    ...(withContext ? { context: tokenIds(`${prompt} ${replyText}`) } : {}),
    ...finalStats(result),
  });
  let streamed = "";
  return {
    streamContentType: OLLAMA_NDJSON,
    wholeContentType: OLLAMA_JSON,
    streamHead: () => "",
    streamToken: (token) => {
      if (withContext) streamed += token;
      return line({ model: who.model, created_at: who.createdAt(), response: token, done: false });
    },
    streamTail: (result) => line(final(result, "", streamed)),
    wholeBody: (result) => final(result, result.text, result.text),
  };
}

/** What Ollama answers to a chat without messages or a generate without prompt: the model loaded. */
export function loadedBody(model: string, createdAt: string, kind: "chat" | "generate"): unknown {
  const base = { model, created_at: createdAt };
  return kind === "chat"
    ? { ...base, message: { role: "assistant", content: "" }, done_reason: "load", done: true }
    : { ...base, response: "", done: true, done_reason: "load" };
}

/** How long Ollama keeps a model loaded after its last request (its default `keep_alive`). */
export const KEEP_ALIVE_MS = 5 * 60_000;

const DETAILS = {
  parent_model: "",
  format: "gguf",
  family: "emulated",
  families: ["emulated"],
  parameter_size: "1B",
  quantization_level: "Q4_0",
} as const;

/** A model as `/api/tags` lists it (`/api/ps` adds to it). */
function listedModel(model: ResolvedModel): Record<string, unknown> {
  const name = ollamaName(model.name);
  return {
    name,
    model: name,
    modified_at: MODEL_MODIFIED_AT,
    size: 1_000_000 + model.embeddingDimensions,
    digest: createHash("sha256").update(name).digest("hex"),
    details: { ...DETAILS },
  };
}

export function tagsBody(models: readonly ResolvedModel[]): unknown {
  return { models: models.map(listedModel) };
}

/** `POST /api/show`: capabilities, template, details and the GGUF keys clients read. */
export function showBody(model: ResolvedModel): unknown {
  return {
    license: "",
    modelfile: `FROM ${ollamaName(model.name)}\n`,
    // Ollama pads the key to 30 columns; only a Modelfile's num_ctx is listed.
    parameters: model.modelfileNumCtx ? `${"num_ctx".padEnd(30)} ${model.numCtx}` : "",
    template: model.template,
    details: { ...DETAILS },
    model_info: {
      "general.architecture": "emulated",
      "general.parameter_count": 1_000_000_000,
      "emulated.context_length": model.contextTokens,
      "emulated.embedding_length": model.embeddingDimensions,
    },
    capabilities: model.capabilities,
    modified_at: MODEL_MODIFIED_AT,
  };
}

/** `GET /api/ps`: models used within the keep-alive, most recently used first, all in VRAM. */
export function psBody(
  models: readonly ResolvedModel[],
  loaded: ReadonlyMap<string, number>,
  nowMs: number,
  numCtx: ReadonlyMap<string, number> = new Map(),
): unknown {
  const live = models
    .map((model) => ({ model, at: loaded.get(model.name) }))
    .filter(
      (m): m is { model: ResolvedModel; at: number } => m.at !== undefined && m.at + KEEP_ALIVE_MS > nowMs,
    )
    .sort((a, b) => b.at - a.at);
  return {
    models: live.map(({ model, at }) => {
      const { modified_at: _modified, ...entry } = listedModel(model);
      return {
        ...entry,
        expires_at: new Date(at + KEEP_ALIVE_MS).toISOString(),
        size_vram: entry["size"],
        context_length: numCtx.get(model.name) ?? model.numCtx,
      };
    }),
  };
}
