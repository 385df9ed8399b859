/**
 * Request validation for the seven POST routes of the client API: an untrusted, already
 * JSON-parsed body in, a typed request or an `invalid_request` naming the field path out.
 *
 * Rules, the same for every route: required fields are enforced (`model`; `messages`, not empty,
 * for chat; `prompt` for completions and generate; `input` for embeddings); wrong types are
 * refused; unknown fields pass through untouched (forward compatibility); known optional fields
 * sent as `null` count as absent; counts are bounded by `ValidationLimits`.
 *
 * Must not know: HTTP (body size and JSON syntax are the caller's), routing, translation.
 */

import type { DialectResult } from "./dialect-error.js";
import { readBody } from "./json-fields.js";
import type {
  OllamaChatRequest,
  OllamaEmbedRequest,
  OllamaEmbeddingsRequest,
  OllamaGenerateRequest,
} from "./ollama-wire.js";
import type { OpenAIChatRequest, OpenAICompletionRequest, OpenAIEmbeddingRequest } from "./openai-wire.js";
import {
  readOllamaChatRequest,
  readOllamaEmbedRequest,
  readOllamaEmbeddingsRequest,
  readOllamaGenerateRequest,
} from "./validate-ollama.js";
import {
  readOpenAIChatRequest,
  readOpenAICompletionRequest,
  readOpenAIEmbeddingRequest,
} from "./validate-openai.js";
import { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "./validation-limits.js";

/** The POST routes whose bodies PAIR reads, and the request type each one carries. */
export interface DialectRequests {
  "/v1/chat/completions": OpenAIChatRequest;
  "/v1/completions": OpenAICompletionRequest;
  "/v1/embeddings": OpenAIEmbeddingRequest;
  "/api/chat": OllamaChatRequest;
  "/api/generate": OllamaGenerateRequest;
  "/api/embed": OllamaEmbedRequest;
  "/api/embeddings": OllamaEmbeddingsRequest;
}

export type DialectRoute = keyof DialectRequests;

export const DIALECT_ROUTES: readonly DialectRoute[] = [
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/embeddings",
  "/api/chat",
  "/api/generate",
  "/api/embed",
  "/api/embeddings",
];

export function isDialectRoute(path: string): path is DialectRoute {
  return (DIALECT_ROUTES as readonly string[]).includes(path);
}

/** The two dialects: a client speaks one (by its route), an engine serves one (its `api`). */
export type Dialect = "openai" | "ollama";

/** Which dialect a route speaks (and so which error envelope its client expects). */
export function dialectOf(route: DialectRoute): Dialect {
  return route.startsWith("/v1/") ? "openai" : "ollama";
}

const readers: {
  readonly [R in DialectRoute]: (body: unknown, limits: ValidationLimits) => DialectRequests[R];
} = {
  "/v1/chat/completions": readOpenAIChatRequest,
  "/v1/completions": readOpenAICompletionRequest,
  "/v1/embeddings": readOpenAIEmbeddingRequest,
  "/api/chat": readOllamaChatRequest,
  "/api/generate": readOllamaGenerateRequest,
  "/api/embed": readOllamaEmbedRequest,
  "/api/embeddings": readOllamaEmbeddingsRequest,
};

/** Validates the body of `route`. */
export function validateRequest<R extends DialectRoute>(
  route: R,
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<DialectRequests[R]> {
  const read = readers[route];
  return readBody(() => read(body, limits));
}

export function validateOpenAIChatRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OpenAIChatRequest> {
  return validateRequest("/v1/chat/completions", body, limits);
}

export function validateOpenAICompletionRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OpenAICompletionRequest> {
  return validateRequest("/v1/completions", body, limits);
}

export function validateOpenAIEmbeddingRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OpenAIEmbeddingRequest> {
  return validateRequest("/v1/embeddings", body, limits);
}

export function validateOllamaChatRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OllamaChatRequest> {
  return validateRequest("/api/chat", body, limits);
}

export function validateOllamaGenerateRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OllamaGenerateRequest> {
  return validateRequest("/api/generate", body, limits);
}

export function validateOllamaEmbedRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OllamaEmbedRequest> {
  return validateRequest("/api/embed", body, limits);
}

export function validateOllamaEmbeddingsRequest(
  body: unknown,
  limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS,
): DialectResult<OllamaEmbeddingsRequest> {
  return validateRequest("/api/embeddings", body, limits);
}
