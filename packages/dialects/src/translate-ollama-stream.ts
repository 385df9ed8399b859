/**
 * Streamed Ollama-engine answers → the SSE chunks an OpenAI client expects, as small stateful
 * translators: `push` each decoded NDJSON object, then call `finish` once when the engine's body
 * ends. The caller frames each returned item as `data: <json>` and, after `finish`, writes
 * `data: [DONE]` (also after an error item, as vLLM does).
 *
 * - `OllamaToOpenAIChatStream`: `/api/chat` objects → `chat.completion.chunk`s: a role chunk first
 *   (`{role: "assistant", content: ""}`), then content / `reasoning_content` / whole tool-call
 *   deltas, then a chunk with `finish_reason`, then, when the client asked for
 *   `stream_options.include_usage`, a usage chunk with `choices: []` (and `usage: null` on every
 *   earlier chunk, as OpenAI does).
 * - `OllamaToOpenAICompletionStream`: `/api/generate` objects → `text_completion` chunks, the same
 *   way without the role chunk (`thinking` has no place there and is dropped).
 *
 * An `{"error": ...}` line becomes PAIR's OpenAI error item and ends the translation; so does a body
 * that ends before the `done: true` object (the engine was cut off).
 *
 * Must not know: HTTP, NDJSON framing, requests, clocks.
 */

import { openAIToolCallOf } from "./content-mapping.js";
import { openAIStreamError, streamErrorMessageOf } from "./engine-errors.js";
import { isRecord } from "./json-fields.js";
import type {
  OllamaChatStreamObject,
  OllamaErrorBody,
  OllamaGenerateStreamObject,
  OllamaToolCall,
} from "./ollama-wire.js";
import type {
  OpenAIChatChunk,
  OpenAIChatDelta,
  OpenAICompletionChunk,
  OpenAIFinishReason,
} from "./openai-wire.js";
import type { PairOpenAIErrorBody } from "./pair-errors.js";
import { finishReasonOf, usageOf } from "./reasons-and-usage.js";
import { toolCallIdOf } from "./translate-ollama-response.js";

export interface OpenAIStreamContext {
  /** The completion id every chunk carries, chosen by the caller. */
  readonly id: string;
  /** The model name to echo to the client. */
  readonly model: string;
  /** Unix seconds, the same on every chunk. */
  readonly created: number;
  /** The client sent `stream_options: {include_usage: true}`. */
  readonly includeUsage: boolean;
  /** The serving node, named in a mid-stream error. */
  readonly node?: string;
}

export type OpenAIStreamErrorItem = { readonly error: PairOpenAIErrorBody };
export type OpenAIChatStreamItem = OpenAIChatChunk | OpenAIStreamErrorItem;
export type OpenAICompletionStreamItem = OpenAICompletionChunk | OpenAIStreamErrorItem;

function countsIn(object: Record<string, unknown>): { prompt_eval_count: unknown; eval_count: unknown } {
  return { prompt_eval_count: object["prompt_eval_count"], eval_count: object["eval_count"] };
}

const CUT = "the engine's stream ended before the answer was finished";

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export class OllamaToOpenAIChatStream {
  private started = false;
  private ended = false;
  private toolCalls = 0;

  constructor(private readonly ctx: OpenAIStreamContext) {}

  push(object: OllamaChatStreamObject | OllamaErrorBody): OpenAIChatStreamItem[] {
    if (this.ended) return [];
    const error = streamErrorMessageOf(object);
    if (error !== undefined || !isRecord(object)) {
      this.ended = true;
      return [openAIStreamError(error ?? "the engine sent an unreadable stream object", this.ctx.node)];
    }
    const out: OpenAIChatStreamItem[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk({ role: "assistant", content: "" }, null));
    }
    const message: Record<string, unknown> = isRecord(object["message"]) ? object["message"] : {};
    const thinking = text(message["thinking"]);
    const content = text(message["content"]);
    if (thinking !== "") out.push(this.chunk({ reasoning_content: thinking }, null));
    if (content !== "") out.push(this.chunk({ content }, null));
    const calls = Array.isArray(message["tool_calls"]) ? (message["tool_calls"] as OllamaToolCall[]) : [];
    if (calls.length > 0) {
      const deltas = calls.map((call) => {
        const n = this.toolCalls++;
        return { index: n, ...openAIToolCallOf(call, toolCallIdOf(this.ctx.id, n)) };
      });
      out.push(this.chunk({ tool_calls: deltas }, null));
    }
    if (object["done"] === true) {
      this.ended = true;
      const doneReason = typeof object["done_reason"] === "string" ? object["done_reason"] : undefined;
      out.push(this.chunk({}, finishReasonOf(doneReason, this.toolCalls > 0)));
      if (this.ctx.includeUsage)
        out.push({ ...this.chunk({}, null), choices: [], usage: usageOf(countsIn(object)) });
    }
    return out;
  }

  finish(): OpenAIChatStreamItem[] {
    if (this.ended) return [];
    this.ended = true;
    return [openAIStreamError(CUT, this.ctx.node)];
  }

  private chunk(delta: OpenAIChatDelta, finishReason: OpenAIFinishReason | null): OpenAIChatChunk {
    return {
      id: this.ctx.id,
      object: "chat.completion.chunk",
      created: this.ctx.created,
      model: this.ctx.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.ctx.includeUsage ? { usage: null } : {}),
    };
  }
}

export class OllamaToOpenAICompletionStream {
  private ended = false;

  constructor(private readonly ctx: OpenAIStreamContext) {}

  push(object: OllamaGenerateStreamObject | OllamaErrorBody): OpenAICompletionStreamItem[] {
    if (this.ended) return [];
    const error = streamErrorMessageOf(object);
    if (error !== undefined || !isRecord(object)) {
      this.ended = true;
      return [openAIStreamError(error ?? "the engine sent an unreadable stream object", this.ctx.node)];
    }
    const out: OpenAICompletionStreamItem[] = [];
    const response = text(object["response"]);
    if (response !== "") out.push(this.chunk(response, null));
    if (object["done"] === true) {
      this.ended = true;
      const doneReason = typeof object["done_reason"] === "string" ? object["done_reason"] : undefined;
      out.push(this.chunk("", finishReasonOf(doneReason, false)));
      if (this.ctx.includeUsage)
        out.push({ ...this.chunk("", null), choices: [], usage: usageOf(countsIn(object)) });
    }
    return out;
  }

  finish(): OpenAICompletionStreamItem[] {
    if (this.ended) return [];
    this.ended = true;
    return [openAIStreamError(CUT, this.ctx.node)];
  }

  private chunk(textDelta: string, finishReason: OpenAIFinishReason | null): OpenAICompletionChunk {
    return {
      id: this.ctx.id,
      object: "text_completion",
      created: this.ctx.created,
      model: this.ctx.model,
      choices: [{ index: 0, text: textDelta, logprobs: null, finish_reason: finishReason }],
      ...(this.ctx.includeUsage ? { usage: null } : {}),
    };
  }
}
