/**
 * Whole (non-streamed) Ollama-engine answers → the OpenAI answers an OpenAI client expects:
 * `/api/chat` → chat completion, `/api/generate` → text completion, `/api/embed` → embeddings
 * (floats, or base64 float32 when the client asked for it, as the openai npm client does by default).
 *
 * `id` and `created` come from the caller; `usage` from `prompt_eval_count`/`eval_count` (absent
 * counts are 0); `finish_reason` from `done_reason`, and `tool_calls` whenever the answer carries
 * tool calls. Tool calls without an id get `call_<id>_<n>`. `thinking` → `reasoning_content`, the
 * extension vLLM and llama.cpp use. No `system_fingerprint`: PAIR does not know the engine's.
 *
 * Must not know: HTTP, streams, requests.
 */

import { openAIToolCallOf } from "./content-mapping.js";
import { encodeFloat32Base64 } from "./embedding-encoding.js";
import { isRecord, listOf } from "./json-fields.js";
import type { OllamaChatResponse, OllamaEmbedResponse, OllamaGenerateResponse } from "./ollama-wire.js";
import type {
  OpenAIChatCompletion,
  OpenAICompletion,
  OpenAIEmbeddingResponse,
  OpenAIToolCall,
} from "./openai-wire.js";
import { finishReasonOf, usageOf } from "./reasons-and-usage.js";

export interface OpenAIReplyContext {
  /** The completion id (`chatcmpl-…`, `cmpl-…`), chosen by the caller. */
  readonly id: string;
  /** The model name to echo to the client. */
  readonly model: string;
  /** Unix seconds. */
  readonly created: number;
}

function isMessageObject(value: unknown): value is OllamaChatResponse["message"] {
  return isRecord(value);
}

/** The id of the `n`th tool call of completion `id`, when the engine gave none. */
export function toolCallIdOf(id: string, n: number): string {
  return `call_${id}_${n}`;
}

export function ollamaChatToOpenAIChat(
  resp: OllamaChatResponse,
  ctx: OpenAIReplyContext,
): OpenAIChatCompletion {
  // Engines are read defensively: a missing message is an empty answer, not a crash.
  const message: Partial<OllamaChatResponse["message"]> = isMessageObject(resp.message) ? resp.message : {};
  const calls: OpenAIToolCall[] = listOf(message.tool_calls).map((call, n) =>
    openAIToolCallOf(call, toolCallIdOf(ctx.id, n)),
  );
  const content = typeof message.content === "string" ? message.content : "";
  const thinking = typeof message.thinking === "string" ? message.thinking : "";
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          // OpenAI sends `null` content for a turn that is only tool calls.
          content: content === "" && calls.length > 0 ? null : content,
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          ...(thinking !== "" ? { reasoning_content: thinking } : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(resp.done_reason, calls.length > 0),
      },
    ],
    usage: usageOf(resp),
  };
}

export function ollamaGenerateToOpenAICompletion(
  resp: OllamaGenerateResponse,
  ctx: OpenAIReplyContext,
): OpenAICompletion {
  return {
    id: ctx.id,
    object: "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        text: typeof resp.response === "string" ? resp.response : "",
        logprobs: null,
        finish_reason: finishReasonOf(resp.done_reason, false),
      },
    ],
    usage: usageOf(resp),
  };
}

export interface OpenAIEmbeddingReplyContext {
  readonly model: string;
  /** What the client asked for; `float` when it did not say. */
  readonly encodingFormat?: "float" | "base64";
}

export function ollamaEmbedToOpenAIEmbedding(
  resp: OllamaEmbedResponse,
  ctx: OpenAIEmbeddingReplyContext,
): OpenAIEmbeddingResponse {
  const base64 = ctx.encodingFormat === "base64";
  const vectors = listOf(resp.embeddings);
  const prompt = usageOf(resp).prompt_tokens;
  return {
    object: "list",
    data: vectors.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: base64 ? encodeFloat32Base64(vector) : [...listOf(vector)],
    })),
    model: ctx.model,
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}
