/**
 * How the two dialects say "why it stopped", "how many tokens" and "when": OpenAI's
 * `finish_reason` ↔ Ollama's `done_reason`, `usage` ↔ `prompt_eval_count`/`eval_count`, Unix
 * seconds ↔ RFC 3339 `created_at`, milliseconds → Ollama's nanosecond durations. Times are always
 * arguments; nothing here reads a clock.
 *
 * Must not know: messages, tools, HTTP, streams.
 */

import type { OllamaMetrics } from "./ollama-wire.js";
import type { OpenAIFinishReason, OpenAIUsage } from "./openai-wire.js";

/**
 * OpenAI → Ollama. `tool_calls` becomes `stop`, which is what Ollama itself reports when a turn ends
 * in tool calls (the calls are in `message.tool_calls`, so nothing is lost: the reverse mapping
 * gives `tool_calls` back). Unknown reasons (e.g. `content_filter`) pass through: Ollama's set is open.
 */
export function doneReasonOf(finishReason: string | null | undefined): string {
  switch (finishReason) {
    case null:
    case undefined:
    case "stop":
    case "tool_calls":
    case "function_call":
      return "stop";
    default:
      return finishReason;
  }
}

/**
 * Ollama → OpenAI. `length` stays `length`; a turn that produced tool calls is `tool_calls`;
 * everything else (`stop`, `load`, `unload`, unknown) is `stop`, the one value every client knows.
 */
export function finishReasonOf(doneReason: string | undefined, hadToolCalls: boolean): OpenAIFinishReason {
  if (hadToolCalls) return "tool_calls";
  return doneReason === "length" ? "length" : "stop";
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

/** Ollama omits zero counts (a fully cached prompt has no `prompt_eval_count`): absent means 0. */
export function usageOf(metrics: {
  readonly prompt_eval_count?: unknown;
  readonly eval_count?: unknown;
}): OpenAIUsage {
  const prompt = count(metrics.prompt_eval_count);
  const completion = count(metrics.eval_count);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** OpenAI usage → Ollama counts; absent usage gives no counts (Ollama omits what it lacks). */
export function countsOf(
  usage: OpenAIUsage | null | undefined,
): Pick<OllamaMetrics, "prompt_eval_count" | "eval_count"> {
  if (usage === null || usage === undefined) return {};
  return { prompt_eval_count: count(usage.prompt_tokens), eval_count: count(usage.completion_tokens) };
}

/** RFC 3339 with milliseconds, in UTC, as Ollama's `created_at`. */
export function createdAtOf(nowMs: number): string {
  return new Date(nowMs).toISOString();
}

/** Unix seconds, as OpenAI's `created`. */
export function unixSecondsOf(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

export function nanosecondsOf(ms: number): number {
  return Math.max(0, Math.round(ms * 1_000_000));
}

/**
 * The duration metrics of an Ollama final object, measured by the translator: from the request
 * (`startedMs`) to the first streamed token (prompt evaluation), and from there to the end. All four
 * are always given, so a client's tokens per second is a number: `load_duration` is 0 (an OpenAI
 * engine does not say), an unstreamed reply counts all its time as evaluation, and `total_duration`
 * and `eval_duration` are at least 1 ns.
 */
export function durationsOf(
  startedMs: number | undefined,
  firstTokenMs: number | undefined,
  endedMs: number,
): Pick<OllamaMetrics, "total_duration" | "load_duration" | "prompt_eval_duration" | "eval_duration"> {
  if (startedMs === undefined) return {};
  const total = Math.max(1, nanosecondsOf(endedMs - startedMs));
  const prompt =
    firstTokenMs === undefined ? 0 : Math.min(total - 1, nanosecondsOf(firstTokenMs - startedMs));
  return {
    total_duration: total,
    load_duration: 0,
    prompt_eval_duration: prompt,
    eval_duration: Math.max(1, total - prompt),
  };
}
