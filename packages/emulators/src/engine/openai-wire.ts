/**
 * OpenAI's wire shapes as the emulator sends them: chat and text completions (whole and as SSE
 * chunks), embeddings, the model list, and the error envelope. Pure builders over plain values;
 * knows nothing of request parsing, slots or faults.
 */

import type { ServerResponse } from "node:http";
import type { FailureWriter } from "./engine-context.js";
import type { FieldProblem } from "./field-reader.js";
import type { GenerationResult, ResponseFormat } from "./generation-runner.js";
import { sendJson } from "./http-exchange.js";
import type { OpenAiFlavor, ResolvedModel } from "./options.js";

export const SYSTEM_FINGERPRINT = "fp_pair_emulator";
/** `created` of every listed model: a fixed instant, so listings are byte-identical. */
export const MODEL_CREATED_S = 1_700_000_000;

export interface OpenAiError {
  readonly message: string;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
}

export interface OpenAiUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

export function sendOpenAiError(res: ServerResponse, status: number, error: OpenAiError): void {
  sendJson(res, status, { error });
}

export function invalidRequest(
  message: string,
  param: string | null = null,
  code: string | null = null,
): OpenAiError {
  return { message, type: "invalid_request_error", param, code };
}

export function modelNotFound(model: string): OpenAiError {
  return invalidRequest(
    `The model \`${model}\` does not exist or you do not have access to it.`,
    null,
    "model_not_found",
  );
}

/** A field problem in OpenAI's words. */
export function fieldError(problem: FieldProblem): OpenAiError {
  switch (problem.kind) {
    case "missing":
      return invalidRequest(
        `Missing required parameter: '${problem.field}'.`,
        problem.field,
        "missing_required_parameter",
      );
    case "type":
      return invalidRequest(
        `Invalid type for '${problem.field}': expected ${problem.expected}, but got ${problem.got} instead.`,
        problem.field,
        "invalid_type",
      );
    case "range":
      return invalidRequest(
        `Invalid '${problem.field}': expected ${problem.expected}, but got ${problem.got} instead.`,
        problem.field,
        "invalid_value",
      );
  }
}

export const writeOpenAiFailure: FailureWriter = (res, failure) => {
  if (failure.kind === "overloaded") {
    return sendOpenAiError(res, 503, {
      message: "The engine is currently overloaded, please try again later.",
      type: "server_error",
      param: null,
      code: null,
    });
  }
  const message =
    failure.status === 500
      ? "The server had an error while processing your request. Sorry about that!"
      : `Injected fault: HTTP ${failure.status} (engine emulator).`;
  const type = failure.status >= 500 ? "server_error" : "invalid_request_error";
  sendOpenAiError(res, failure.status, { message, type, param: null, code: null });
};

export function usageOf(result: GenerationResult): OpenAiUsage {
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
  };
}

function sse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

export interface CompletionIdentity {
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  readonly model: string;
  /** `stream_options.include_usage`: every chunk carries `usage: null`, and a usage chunk ends the stream. */
  readonly includeUsage: boolean;
}

/** `POST /v1/chat/completions`. */
export function chatFormat(who: CompletionIdentity): ResponseFormat {
  const usageField = who.includeUsage ? { usage: null } : {};
  const chunk = (choices: unknown[], extra: object = usageField): string =>
    sse({
      id: who.id,
      object: "chat.completion.chunk",
      created: who.created,
      model: who.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      ...extra,
    });
  const choice = (delta: object, finish: string | null): object => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  return {
    streamContentType: "text/event-stream; charset=utf-8",
    wholeContentType: "application/json",
    streamHead: () => chunk([choice({ role: "assistant", content: "", refusal: null }, null)]),
    streamToken: (token) => chunk([choice({ content: token }, null)]),
    streamTail: (result) =>
      chunk([choice({}, result.finishReason)]) +
      (who.includeUsage ? chunk([], { usage: usageOf(result) }) : "") +
      SSE_DONE,
    wholeBody: (result) => ({
      id: who.id,
      object: "chat.completion",
      created: who.created,
      model: who.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: result.text, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: result.finishReason,
        },
      ],
      usage: usageOf(result),
      system_fingerprint: SYSTEM_FINGERPRINT,
    }),
  };
}

/** `POST /v1/completions` (legacy text completions). */
export function completionFormat(who: CompletionIdentity): ResponseFormat {
  const usageField = who.includeUsage ? { usage: null } : {};
  const chunk = (choices: unknown[], extra: object = usageField): string =>
    sse({
      id: who.id,
      object: "text_completion",
      created: who.created,
      model: who.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      ...extra,
    });
  const choice = (text: string, finish: string | null): object => ({
    text,
    index: 0,
    logprobs: null,
    finish_reason: finish,
  });
  return {
    streamContentType: "text/event-stream; charset=utf-8",
    wholeContentType: "application/json",
    streamHead: () => "",
    streamToken: (token) => chunk([choice(token, null)]),
    streamTail: (result) =>
      chunk([choice("", result.finishReason)]) +
      (who.includeUsage ? chunk([], { usage: usageOf(result) }) : "") +
      SSE_DONE,
    wholeBody: (result) => ({
      id: who.id,
      object: "text_completion",
      created: who.created,
      model: who.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [choice(result.text, result.finishReason)],
      usage: usageOf(result),
    }),
  };
}

/** One embedding as float array or as base64 of little-endian float32 (the openai client's default). */
export function encodeEmbedding(vector: readonly number[], format: "float" | "base64"): number[] | string {
  if (format === "float") return [...vector];
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString("base64");
}

export function embeddingsBody(
  model: string,
  embeddings: readonly (number[] | string)[],
  promptTokens: number,
): unknown {
  return {
    object: "list",
    data: embeddings.map((embedding, index) => ({ object: "embedding", index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/**
 * The model object: vLLM's (OpenAI's plus the window as `max_model_len`), llama.cpp's (`meta` with
 * the trained window, not the one it runs with), TGI's (no window: that is on `/info`).
 */
export function modelObject(model: ResolvedModel, flavor: OpenAiFlavor = "vllm"): unknown {
  const base = { id: model.name, object: "model", created: MODEL_CREATED_S, owned_by: "pair-emulator" };
  switch (flavor) {
    case "vllm":
      return { ...base, max_model_len: model.contextTokens };
    case "llamacpp":
      return {
        ...base,
        owned_by: "llamacpp",
        meta: { n_ctx_train: model.contextTokens * 4, n_vocab: 32000 },
      };
    case "tgi":
      return { ...base, created: 0, owned_by: model.name };
  }
}
