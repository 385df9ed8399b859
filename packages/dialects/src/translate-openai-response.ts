/**
 * Whole (non-streamed) OpenAI-engine answers → the Ollama answers an Ollama client expects:
 * chat completion → `/api/chat` answer (or `/api/generate` answer, when a generate request was
 * served by chat), text completion → `/api/generate` answer, embeddings → `/api/embed` or legacy
 * `/api/embeddings` answer.
 *
 * `created_at` and `total_duration` come from the caller's `nowMs`/`startedMs`; counts from
 * `usage`; `done_reason` from `finish_reason` (see `reasons-and-usage.ts`). Only choice 0 is read
 * (a translated request never asks for more). Tool-call arguments that are not a JSON object
 * become `{}`: Ollama's shape has no place for text that is not an object. Ollama's `context`
 * (token ids) cannot be produced and is omitted.
 *
 * Must not know: HTTP, streams, requests.
 */

import { parseToolArguments } from "./content-mapping.js";
import { floatsOf } from "./embedding-encoding.js";
import { listOf } from "./json-fields.js";
import type {
  OllamaChatResponse,
  OllamaEmbeddingsResponse,
  OllamaEmbedResponse,
  OllamaGenerateResponse,
  OllamaMetrics,
  OllamaToolCall,
} from "./ollama-wire.js";
import type {
  OpenAIChatCompletion,
  OpenAICompletion,
  OpenAIEmbeddingResponse,
  OpenAIResponseMessage,
  OpenAIToolCall,
  OpenAIUsage,
} from "./openai-wire.js";
import { countsOf, createdAtOf, doneReasonOf, durationsOf } from "./reasons-and-usage.js";

export interface OllamaReplyContext {
  /** The model name to echo to the client (the tag it asked for). */
  readonly model: string;
  /** When the answer is built (ms since the epoch). */
  readonly nowMs: number;
  /** When the request went upstream; gives `total_duration`. */
  readonly startedMs?: number;
}

function finalMetrics(usage: OpenAIUsage | null | undefined, ctx: OllamaReplyContext): OllamaMetrics {
  return { ...durationsOf(ctx.startedMs, undefined, ctx.nowMs), ...countsOf(usage) };
}

export function ollamaToolCallsOf(calls: readonly OpenAIToolCall[] | undefined): OllamaToolCall[] {
  return listOf(calls).map((call) => ({
    id: call.id,
    function: {
      name: call.function.name,
      arguments: parseToolArguments(call.function.arguments ?? "") ?? {},
    },
  }));
}

/** The text, thinking and tool calls of an OpenAI answer message. A refusal is what the model said. */
function partsOf(message: OpenAIResponseMessage | undefined): {
  content: string;
  thinking: string;
  toolCalls: OllamaToolCall[];
} {
  const content = typeof message?.content === "string" ? message.content : "";
  const refusal = typeof message?.refusal === "string" ? message.refusal : "";
  const thinking = message?.reasoning_content ?? message?.reasoning ?? "";
  return {
    content: content === "" ? refusal : content,
    thinking: typeof thinking === "string" ? thinking : "",
    toolCalls: ollamaToolCallsOf(message?.tool_calls),
  };
}

export function openAIChatToOllamaChat(
  resp: OpenAIChatCompletion,
  ctx: OllamaReplyContext,
): OllamaChatResponse {
  const choice = listOf(resp.choices)[0];
  const { content, thinking, toolCalls } = partsOf(choice?.message);
  return {
    model: ctx.model,
    created_at: createdAtOf(ctx.nowMs),
    message: {
      role: "assistant",
      content,
      ...(thinking !== "" ? { thinking } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    done_reason: doneReasonOf(choice?.finish_reason),
    done: true,
    ...finalMetrics(resp.usage, ctx),
  };
}

/** A `/api/generate` request served by `/v1/chat/completions`. */
export function openAIChatToOllamaGenerate(
  resp: OpenAIChatCompletion,
  ctx: OllamaReplyContext,
): OllamaGenerateResponse {
  const choice = listOf(resp.choices)[0];
  const { content, thinking } = partsOf(choice?.message);
  return {
    model: ctx.model,
    created_at: createdAtOf(ctx.nowMs),
    response: content,
    ...(thinking !== "" ? { thinking } : {}),
    done: true,
    done_reason: doneReasonOf(choice?.finish_reason),
    ...finalMetrics(resp.usage, ctx),
  };
}

/** A `/api/generate` request served by `/v1/completions`. */
export function openAICompletionToOllamaGenerate(
  resp: OpenAICompletion,
  ctx: OllamaReplyContext,
): OllamaGenerateResponse {
  const choice = listOf(resp.choices)[0];
  return {
    model: ctx.model,
    created_at: createdAtOf(ctx.nowMs),
    response: typeof choice?.text === "string" ? choice.text : "",
    done: true,
    done_reason: doneReasonOf(choice?.finish_reason),
    ...finalMetrics(resp.usage, ctx),
  };
}

function vectorsOf(resp: OpenAIEmbeddingResponse): number[][] {
  return [...listOf(resp.data)].sort((a, b) => a.index - b.index).map((item) => floatsOf(item.embedding));
}

export function openAIEmbeddingToOllamaEmbed(
  resp: OpenAIEmbeddingResponse,
  ctx: OllamaReplyContext,
): OllamaEmbedResponse {
  const total = durationsOf(ctx.startedMs, undefined, ctx.nowMs).total_duration;
  const prompt = resp.usage?.prompt_tokens;
  return {
    model: ctx.model,
    embeddings: vectorsOf(resp),
    ...(total !== undefined ? { total_duration: total } : {}),
    ...(prompt !== undefined && prompt > 0 ? { prompt_eval_count: prompt } : {}),
  };
}

/** The legacy `/api/embeddings` answer: the first vector only. */
export function openAIEmbeddingToOllamaEmbeddings(resp: OpenAIEmbeddingResponse): OllamaEmbeddingsResponse {
  return { embedding: vectorsOf(resp)[0] ?? [] };
}
