/**
 * PAIR's own error codes (docs/errors.md, "HTTP API") and the two envelopes they travel in:
 * OpenAI routes `{"error": {"message", "type", "param", "code", "node"}}`, Ollama routes
 * `{"error": "<message>", "code", "node"}`. `PAIR_ERROR_CODES` is the one source of truth for
 * each code's HTTP status, its OpenAI `type`, whether a retry can help (and after how long), and
 * whether another node may serve where one refused; a test checks it against docs/errors.md's table.
 *
 * Must not know: HTTP (the caller writes status and body), routing, why an error happened.
 */

import type { InvalidRequest } from "./dialect-error.js";
import type { OllamaErrorBody } from "./ollama-wire.js";
import type { OpenAIErrorBody } from "./openai-wire.js";

export interface PairErrorSpec {
  readonly status: number;
  /** OpenAI's `error.type` for this code. */
  readonly openaiType: string;
  /** Whether the same request may succeed later without anyone acting. */
  readonly retryable: boolean;
  /**
   * For a retryable code, how long to wait before retrying (`Retry-After`, seconds); a code no
   * prompt retry fixes has none, and is never a 503 (some clients retry any 503 at once, for ever).
   */
  readonly retryAfterS?: number;
  /**
   * Whether another node may serve the request where the one that answered this could not (its
   * state, its model list, its credential): forwarding then fails over instead of answering it.
   */
  readonly otherNodeMayServe: boolean;
}

export const PAIR_ERROR_CODES = {
  model_not_found: {
    status: 404,
    openaiType: "invalid_request_error",
    retryable: false,
    otherNodeMayServe: true,
  },
  rented_node_not_shared: {
    status: 403,
    openaiType: "permission_error",
    retryable: false,
    otherNodeMayServe: false,
  },
  rented_node_paused: { status: 409, openaiType: "server_error", retryable: false, otherNodeMayServe: true },
  rented_node_ineligible: {
    status: 409,
    openaiType: "server_error",
    retryable: false,
    otherNodeMayServe: true,
  },
  budget_exceeded: {
    status: 429,
    openaiType: "insufficient_quota",
    retryable: false,
    otherNodeMayServe: true,
  },
  cold_start_timeout: {
    status: 504,
    openaiType: "server_error",
    retryable: true,
    retryAfterS: 10,
    otherNodeMayServe: true,
  },
  insecure_url: {
    status: 400,
    openaiType: "invalid_request_error",
    retryable: false,
    otherNodeMayServe: false,
  },
  public_endpoint_refused: {
    status: 403,
    openaiType: "permission_error",
    retryable: false,
    otherNodeMayServe: false,
  },
  credential_rejected: {
    status: 502,
    openaiType: "authentication_error",
    retryable: false,
    otherNodeMayServe: true,
  },
  credential_unavailable: {
    status: 500,
    openaiType: "server_error",
    retryable: false,
    otherNodeMayServe: true,
  },
  upstream_error: {
    status: 502,
    openaiType: "server_error",
    retryable: true,
    retryAfterS: 2,
    otherNodeMayServe: true,
  },
  invalid_request: {
    status: 400,
    openaiType: "invalid_request_error",
    retryable: false,
    otherNodeMayServe: false,
  },
  host_refused: { status: 403, openaiType: "permission_error", retryable: false, otherNodeMayServe: false },
  origin_refused: { status: 403, openaiType: "permission_error", retryable: false, otherNodeMayServe: false },
  request_timeout: {
    status: 408,
    openaiType: "invalid_request_error",
    retryable: true,
    retryAfterS: 1,
    otherNodeMayServe: false,
  },
  context_too_long: {
    status: 400,
    openaiType: "invalid_request_error",
    retryable: false,
    otherNodeMayServe: true,
  },
} as const satisfies Readonly<Record<string, PairErrorSpec>>;

export type PairErrorCode = keyof typeof PAIR_ERROR_CODES;

export function isPairErrorCode(code: string): code is PairErrorCode {
  return Object.hasOwn(PAIR_ERROR_CODES, code);
}

/** Statuses that HTTP clients (the OpenAI SDKs among them) retry unless told otherwise. */
function retriedByClients(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The headers that say whether retrying `code` helps: `Retry-After` when it does; when it does not
 * and the status is one clients retry by default, `x-should-retry: false` (read by the OpenAI SDKs).
 */
export function pairErrorHeaders(code: PairErrorCode): Readonly<Record<string, string>> {
  return HEADERS_BY_CODE[code];
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const HEADERS_BY_CODE = Object.fromEntries(
  Object.entries(PAIR_ERROR_CODES).map(([code, spec]: [string, PairErrorSpec]) => [
    code,
    Object.freeze(
      spec.retryAfterS !== undefined
        ? { "retry-after": String(spec.retryAfterS) }
        : retriedByClients(spec.status)
          ? { "x-should-retry": "false" }
          : NO_HEADERS,
    ),
  ]),
) as Record<PairErrorCode, Readonly<Record<string, string>>>;

/** An error PAIR answers with: a stable code, a message for a person, and the context it has. */
export interface PairError {
  readonly code: PairErrorCode;
  readonly message: string;
  /** The node involved (a rented node's name, the serving node), where there is one. */
  readonly node?: string;
  /** The request field at fault (OpenAI's `param`). */
  readonly param?: string;
}

/** `error` of PAIR's OpenAI envelope: OpenAI's fields, plus `node` when one is involved. */
export interface PairOpenAIErrorBody extends OpenAIErrorBody {
  readonly code: PairErrorCode;
  readonly node?: string;
}

/** PAIR's Ollama error body: Ollama's `{error}`, plus `code` and `node`. */
export interface PairOllamaErrorBody extends OllamaErrorBody {
  readonly code: PairErrorCode;
  readonly node?: string;
}

export interface ErrorReply<B> {
  readonly status: number;
  readonly body: B;
}

export function pairErrorToOpenAI(error: PairError): ErrorReply<{ readonly error: PairOpenAIErrorBody }> {
  const spec = PAIR_ERROR_CODES[error.code];
  return {
    status: spec.status,
    body: {
      error: {
        message: error.message,
        type: spec.openaiType,
        param: error.param ?? null,
        code: error.code,
        ...(error.node !== undefined ? { node: error.node } : {}),
      },
    },
  };
}

export function pairErrorToOllama(error: PairError): ErrorReply<PairOllamaErrorBody> {
  return {
    status: PAIR_ERROR_CODES[error.code].status,
    body: {
      error: error.message,
      code: error.code,
      ...(error.node !== undefined ? { node: error.node } : {}),
    },
  };
}

/** The reply for the dialect of the route the client called. */
export function pairErrorReply(
  dialect: "openai" | "ollama",
  error: PairError,
): ErrorReply<{ readonly error: PairOpenAIErrorBody } | PairOllamaErrorBody> {
  return dialect === "openai" ? pairErrorToOpenAI(error) : pairErrorToOllama(error);
}

/** A validation or translation refusal as a PAIR error (`invalid_request`, the path as `param`). */
export function pairErrorOfInvalidRequest(invalid: InvalidRequest, node?: string): PairError {
  return {
    code: "invalid_request",
    message: invalid.message,
    ...(invalid.path !== "" ? { param: invalid.path } : {}),
    ...(node !== undefined ? { node } : {}),
  };
}
