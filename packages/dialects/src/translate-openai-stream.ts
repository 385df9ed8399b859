/**
 * Streamed OpenAI-engine answers → the NDJSON objects an Ollama client expects, as small stateful
 * translators: `push` each decoded SSE `data:` item (not `[DONE]`), then call `finish` once when the
 * engine's stream ends (at `[DONE]` or at end of body).
 *
 * - `OpenAIToOllamaChatStream`: chat chunks → `/api/chat` objects.
 * - `OpenAIToOllamaGenerateStream`: chat chunks (a generate served by chat) or text-completion
 *   chunks (raw generate) → `/api/generate` objects.
 *
 * Each content/thinking delta becomes one `done: false` object. Tool-call fragments are gathered by
 * index and emitted whole (Ollama's way) when the choice finishes. The `done: true` object waits for
 * `finish`, because the usage chunk (asked for with `stream_options.include_usage`) comes after the
 * `finish_reason` chunk; it carries `done_reason`, `prompt_eval_count`/`eval_count` and durations
 * measured from the `nowMs` values given to the constructor, `push` and `finish`. A mid-stream
 * `{"error": ...}` item becomes PAIR's Ollama error line and ends the translation; so does a stream
 * that ends without a `finish_reason` (the engine was cut off). Only choice 0 is read.
 *
 * Must not know: HTTP, SSE framing, requests, clocks.
 */

import { parseToolArguments } from "./content-mapping.js";
import { ollamaStreamError, streamErrorMessageOf } from "./engine-errors.js";
import { isRecord } from "./json-fields.js";
import type {
  OllamaChatStreamObject,
  OllamaGenerateStreamObject,
  OllamaMetrics,
  OllamaToolCall,
} from "./ollama-wire.js";
import type {
  OpenAIChatChunk,
  OpenAICompletionChunk,
  OpenAIErrorEnvelope,
  OpenAIUsage,
} from "./openai-wire.js";
import type { PairOllamaErrorBody } from "./pair-errors.js";
import { countsOf, createdAtOf, doneReasonOf, durationsOf } from "./reasons-and-usage.js";

export interface OllamaStreamContext {
  /** The model name to echo to the client (the tag it asked for). */
  readonly model: string;
  /** When the request went upstream (ms since the epoch). */
  readonly nowMs: number;
  /** The serving node, named in a mid-stream error. */
  readonly node?: string;
}

type Step =
  | { readonly kind: "nothing" }
  | { readonly kind: "error"; readonly message: string }
  | {
      readonly kind: "delta";
      readonly content: string;
      readonly thinking: string;
      readonly toolCalls: readonly OllamaToolCall[];
    };

type Close =
  | { readonly kind: "ended" }
  | { readonly kind: "cut"; readonly message: string }
  | { readonly kind: "done"; readonly doneReason: string; readonly metrics: OllamaMetrics };

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** What every OpenAI stream has in common: deltas, tool-call fragments, finish reason, usage, timing. */
class OpenAIChunkReader {
  private lastMs: number;
  private firstTokenMs: number | undefined;
  private finishReason: string | undefined;
  private usage: OpenAIUsage | undefined;
  private readonly calls = new Map<number, { id: string | undefined; name: string; args: string }>();
  private ended = false;

  constructor(private readonly startedMs: number) {
    this.lastMs = startedMs;
  }

  get nowMs(): number {
    return this.lastMs;
  }

  read(item: unknown, nowMs: number | undefined): Step {
    if (this.ended) return { kind: "nothing" };
    if (nowMs !== undefined) this.lastMs = nowMs;
    const error = streamErrorMessageOf(item);
    if (error !== undefined) {
      this.ended = true;
      return { kind: "error", message: error };
    }
    if (!isRecord(item)) return { kind: "nothing" };
    if (isRecord(item["usage"])) this.usage = item["usage"] as unknown as OpenAIUsage;
    const choices: unknown = item["choices"];
    const choice: unknown = Array.isArray(choices)
      ? (choices.find((c) => isRecord(c) && c["index"] === 0) ?? choices[0])
      : undefined;
    if (!isRecord(choice)) return { kind: "nothing" };
    const delta = isRecord(choice["delta"]) ? choice["delta"] : {};
    const content = text(delta["content"]) || text(choice["text"]);
    const thinking = text(delta["reasoning_content"]) || text(delta["reasoning"]);
    if (Array.isArray(delta["tool_calls"])) for (const fragment of delta["tool_calls"]) this.gather(fragment);
    if ((content !== "" || thinking !== "") && this.firstTokenMs === undefined)
      this.firstTokenMs = this.lastMs;
    let toolCalls: OllamaToolCall[] = [];
    const finish = choice["finish_reason"];
    if (typeof finish === "string") {
      this.finishReason = finish;
      toolCalls = this.takeCalls();
    }
    return { kind: "delta", content, thinking, toolCalls };
  }

  close(nowMs: number | undefined): Close {
    if (this.ended) return { kind: "ended" };
    this.ended = true;
    if (nowMs !== undefined) this.lastMs = nowMs;
    if (this.finishReason === undefined) {
      return { kind: "cut", message: "the engine's stream ended before the answer was finished" };
    }
    return {
      kind: "done",
      doneReason: doneReasonOf(this.finishReason),
      metrics: { ...durationsOf(this.startedMs, this.firstTokenMs, this.lastMs), ...countsOf(this.usage) },
    };
  }

  private gather(fragment: unknown): void {
    if (!isRecord(fragment)) return;
    const index = typeof fragment["index"] === "number" ? fragment["index"] : this.calls.size;
    const fn = isRecord(fragment["function"]) ? fragment["function"] : {};
    const call = this.calls.get(index) ?? { id: undefined, name: "", args: "" };
    if (typeof fragment["id"] === "string") call.id = fragment["id"];
    call.name += text(fn["name"]);
    call.args += text(fn["arguments"]);
    this.calls.set(index, call);
  }

  private takeCalls(): OllamaToolCall[] {
    const calls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        ...(call.id !== undefined ? { id: call.id } : {}),
        function: { name: call.name, arguments: parseToolArguments(call.args) ?? {} },
      }));
    this.calls.clear();
    return calls;
  }
}

export type OllamaChatStreamItem = OllamaChatStreamObject | PairOllamaErrorBody;
export type OllamaGenerateStreamItem = OllamaGenerateStreamObject | PairOllamaErrorBody;

export class OpenAIToOllamaChatStream {
  private readonly reader: OpenAIChunkReader;

  constructor(private readonly ctx: OllamaStreamContext) {
    this.reader = new OpenAIChunkReader(ctx.nowMs);
  }

  push(chunk: OpenAIChatChunk | OpenAIErrorEnvelope, nowMs?: number): OllamaChatStreamItem[] {
    const step = this.reader.read(chunk, nowMs);
    switch (step.kind) {
      case "nothing":
        return [];
      case "error":
        return [ollamaStreamError(step.message, this.ctx.node)];
      case "delta":
        if (step.content === "" && step.thinking === "" && step.toolCalls.length === 0) return [];
        return [
          {
            model: this.ctx.model,
            created_at: createdAtOf(this.reader.nowMs),
            message: {
              role: "assistant",
              content: step.content,
              ...(step.thinking !== "" ? { thinking: step.thinking } : {}),
              ...(step.toolCalls.length > 0 ? { tool_calls: step.toolCalls } : {}),
            },
            done: false,
          },
        ];
    }
  }

  finish(nowMs?: number): OllamaChatStreamItem[] {
    const close = this.reader.close(nowMs);
    switch (close.kind) {
      case "ended":
        return [];
      case "cut":
        return [ollamaStreamError(close.message, this.ctx.node)];
      case "done":
        return [
          {
            model: this.ctx.model,
            created_at: createdAtOf(this.reader.nowMs),
            message: { role: "assistant", content: "" },
            done_reason: close.doneReason,
            done: true,
            ...close.metrics,
          },
        ];
    }
  }
}

export class OpenAIToOllamaGenerateStream {
  private readonly reader: OpenAIChunkReader;

  constructor(private readonly ctx: OllamaStreamContext) {
    this.reader = new OpenAIChunkReader(ctx.nowMs);
  }

  push(
    chunk: OpenAIChatChunk | OpenAICompletionChunk | OpenAIErrorEnvelope,
    nowMs?: number,
  ): OllamaGenerateStreamItem[] {
    const step = this.reader.read(chunk, nowMs);
    switch (step.kind) {
      case "nothing":
        return [];
      case "error":
        return [ollamaStreamError(step.message, this.ctx.node)];
      case "delta":
        if (step.content === "" && step.thinking === "") return [];
        return [
          {
            model: this.ctx.model,
            created_at: createdAtOf(this.reader.nowMs),
            response: step.content,
            ...(step.thinking !== "" ? { thinking: step.thinking } : {}),
            done: false,
          },
        ];
    }
  }

  finish(nowMs?: number): OllamaGenerateStreamItem[] {
    const close = this.reader.close(nowMs);
    switch (close.kind) {
      case "ended":
        return [];
      case "cut":
        return [ollamaStreamError(close.message, this.ctx.node)];
      case "done":
        return [
          {
            model: this.ctx.model,
            created_at: createdAtOf(this.reader.nowMs),
            response: "",
            done: true,
            done_reason: close.doneReason,
            ...close.metrics,
          },
        ];
    }
  }
}
