/**
 * Is an engine's refusal a context-length refusal? Each engine words it its own way, and the words
 * drift between versions, so a refusal is matched by status (400, 413, 422) and by pattern:
 * - vLLM: "maximum context length is L tokens", "context length is only L tokens",
 *   "max_tokens=M cannot be greater than max_model_len=L"; OpenAI: code `context_length_exceeded`;
 * - llama.cpp: type `exceed_context_size_error` with `n_ctx`, "exceeds the available context size (L tokens)";
 * - TGI / Hugging Face: "`inputs` tokens + `max_new_tokens` must be <= L", "`inputs` must have less than L tokens";
 * - Ollama (`truncate: false`): "the input length exceeds the context length", "the prompt is longer
 *   than the context length"; LM Studio: "loaded with context length of only L tokens";
 * - a PAIR peer: code `context_too_long` (none of its nodes could hold it).
 * Such a refusal fails over to a node with a larger window; any other 4xx is the request's fault.
 * Must not know: routing, HTTP.
 */

import { engineMessageOf, isRecord } from "@pair/dialects";

export interface ContextRefusal {
  /** The window the engine named, when it did. */
  readonly windowTokens?: number;
  /** The engine's message. */
  readonly message: string;
}

const WINDOW_PATTERNS: readonly RegExp[] = [
  /maximum context length is (\d+)/i,
  /context length is only (\d+)/i,
  /max_model_len=(\d+)/i,
  /available context size \((\d+) tokens\)/i,
  /max context size \((\d+) tokens\)/i,
  /`inputs` tokens \+ `max_new_tokens` must be <= (\d+)/,
  /`inputs` must have less than (\d+) tokens/,
  /loaded with context length of only (\d+)/i,
  /context window of (\d+)/i,
];

const UNNAMED_PATTERNS: readonly RegExp[] = [
  /input length exceeds the context length/i,
  /prompt is longer than the context length/i,
  /context size has been exceeded/i,
  /exceeds the context window/i,
  /context_length_exceeded/,
];

function codeOf(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const error = body["error"];
  const code = isRecord(error) ? (error["code"] ?? error["type"]) : body["code"];
  return typeof code === "string" ? code : undefined;
}

/** The refusal as a context refusal, or undefined when it is about something else. */
export function contextRefusalOf(status: number, body: unknown): ContextRefusal | undefined {
  if (status !== 400 && status !== 413 && status !== 422) return undefined;
  const message = engineMessageOf(status, body);
  const code = codeOf(body);
  const nCtx = isRecord(body) && isRecord(body["error"]) ? body["error"]["n_ctx"] : undefined;
  if (code === "exceed_context_size_error" && typeof nCtx === "number")
    return { windowTokens: nCtx, message };
  for (const pattern of WINDOW_PATTERNS) {
    const m = pattern.exec(message);
    if (m !== null) return { windowTokens: Number(m[1]), message };
  }
  if (
    code === "context_too_long" ||
    code === "context_length_exceeded" ||
    code === "exceed_context_size_error"
  )
    return { message };
  return UNNAMED_PATTERNS.some((p) => p.test(message)) ? { message } : undefined;
}
