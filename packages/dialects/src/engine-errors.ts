/**
 * An engine's failure, in whatever shape it came, → a PAIR error in the client's dialect.
 *
 * Engines answer failures in many shapes: Ollama `{"error": "..."}`; OpenAI and current vLLM
 * `{"error": {"message", "type", "param", "code"}}`; older vLLM a flat `{"object": "error",
 * "message", "type", "code"}`; vLLM's auth middleware `{"error": "Unauthorized"}`; Hugging Face
 * `{"error": ["..."]}` or `{"errors": [{"message"}]}`; FastAPI `{"detail": [{"msg"}]}`; proxies
 * plain text or HTML. `engineMessageOf` reads them all.
 *
 * The code follows the engine's status: 400/413/422 → `invalid_request` (the request is at fault,
 * the engine's message says why); 404 → `model_not_found`; 401/403 → `credential_rejected`;
 * anything else → `upstream_error`. The status is then PAIR's (docs/errors.md), so an OpenAI client
 * and an Ollama client see the same failure with the same status and code, each in its envelope.
 * A failure in the middle of a stream keeps HTTP 200 (headers are gone): it becomes one last stream
 * item carrying the error, in the client's dialect.
 *
 * Must not know: HTTP, retries and failover (the router decides those before translating).
 */

import { isRecord } from "./json-fields.js";
import {
  pairErrorToOllama,
  pairErrorToOpenAI,
  type ErrorReply,
  type PairError,
  type PairErrorCode,
  type PairOllamaErrorBody,
  type PairOpenAIErrorBody,
} from "./pair-errors.js";

/** Engine messages are quoted to the client; beyond this many characters they are cut. */
export const MAX_ENGINE_MESSAGE_CHARS = 1_000;

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_ENGINE_MESSAGE_CHARS
    ? `${trimmed.slice(0, MAX_ENGINE_MESSAGE_CHARS)}…`
    : trimmed;
}

function messageIn(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  if (Array.isArray(value)) {
    const messages = value.map(messageIn).filter((m): m is string => m !== undefined);
    return messages.length > 0 ? messages.join("; ") : undefined;
  }
  if (!isRecord(value)) return undefined;
  return (
    messageIn(value["error"]) ??
    messageIn(value["message"]) ??
    messageIn(value["errors"]) ??
    messageIn(value["detail"]) ??
    messageIn(value["msg"]) ??
    messageIn(value["problems"])
  );
}

/** The message of a failed engine reply (a parsed JSON body, or the raw text when it was not JSON). */
export function engineMessageOf(status: number, body: unknown): string {
  if (typeof body === "string" && body.trim().startsWith("<")) return `HTTP ${status} (an HTML page)`;
  const message = messageIn(body);
  return message === undefined ? `HTTP ${status}` : clip(message);
}

export function pairCodeOfEngineStatus(status: number): PairErrorCode {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return "invalid_request";
    case 404:
      return "model_not_found";
    case 401:
    case 403:
      return "credential_rejected";
    default:
      return "upstream_error";
  }
}

/** A failed engine reply (before the first byte) as a PAIR error. */
export function pairErrorOfEngineReply(status: number, body: unknown, node?: string): PairError {
  return {
    code: pairCodeOfEngineStatus(status),
    message: `the engine answered HTTP ${status}: ${engineMessageOf(status, body)}`,
    ...(node !== undefined ? { node } : {}),
  };
}

/** An Ollama engine's failure (`{"error": "..."}` and its status) → PAIR's OpenAI envelope. */
export function ollamaErrorToOpenAI(
  status: number,
  body: unknown,
  node?: string,
): ErrorReply<{ readonly error: PairOpenAIErrorBody }> {
  return pairErrorToOpenAI(pairErrorOfEngineReply(status, body, node));
}

/** An OpenAI engine's failure (`{"error": {...}}` and its status) → PAIR's Ollama body. */
export function openAIErrorToOllama(
  status: number,
  body: unknown,
  node?: string,
): ErrorReply<PairOllamaErrorBody> {
  return pairErrorToOllama(pairErrorOfEngineReply(status, body, node));
}

/** The message of a mid-stream error item (`{"error": ...}` in an SSE event or an NDJSON line), if it is one. */
export function streamErrorMessageOf(item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  // Older vLLM: a flat `{"object": "error", "message": ...}`.
  if (item["object"] === "error") return clip(messageIn(item["message"]) ?? "the engine reported an error");
  if (item["error"] === undefined || item["error"] === null) return undefined;
  return clip(messageIn(item["error"]) ?? "the engine reported an error");
}

function midStream(message: string, node: string | undefined): PairError {
  return { code: "upstream_error", message, ...(node !== undefined ? { node } : {}) };
}

/** The last SSE `data:` item of an OpenAI stream that failed after it started. */
export function openAIStreamError(message: string, node?: string): { readonly error: PairOpenAIErrorBody } {
  return pairErrorToOpenAI(midStream(message, node)).body;
}

/** The last NDJSON line of an Ollama stream that failed after it started. */
export function ollamaStreamError(message: string, node?: string): PairOllamaErrorBody {
  return pairErrorToOllama(midStream(message, node)).body;
}
