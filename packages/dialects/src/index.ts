/**
 * Dialect translation: everything the router needs so that an Ollama-dialect request can be served
 * by an OpenAI-only engine and the reverse, streamed or not, with token counts and errors. Pure
 * functions and small stateful stream translators; the router does the HTTP.
 *
 * Typical use, Ollama client → OpenAI engine:
 *   validateRequest("/api/chat", body) → ollamaChatToOpenAI(req) → POST upstream.path with upstream.body
 *   → SseDecoder → readOpenAIStreamEvent → OpenAIToOllamaChatStream.push / .finish → encodeNdjson
 *   (or, not streamed: openAIChatToOllamaChat; on an engine failure: openAIErrorToOllama).
 * `planExchange` (exchange-plan.ts) puts these together for one routed request and one engine.
 *
 * Must not know: sockets, HTTP servers or clients, clocks, randomness, routing, inventory.
 */

export type * from "./openai-wire.js";
export type * from "./ollama-wire.js";

export { invalidRequest, type DialectResult, type InvalidRequest } from "./dialect-error.js";
export { isRecord } from "./json-fields.js";
export { withBase64Embeddings } from "./embedding-encoding.js";
export { DEFAULT_VALIDATION_LIMITS, validationLimits, type ValidationLimits } from "./validation-limits.js";
export {
  DIALECT_ROUTES,
  dialectOf,
  isDialectRoute,
  validateOllamaChatRequest,
  validateOllamaEmbeddingsRequest,
  validateOllamaEmbedRequest,
  validateOllamaGenerateRequest,
  validateOpenAIChatRequest,
  validateOpenAICompletionRequest,
  validateOpenAIEmbeddingRequest,
  validateRequest,
  type Dialect,
  type DialectRequests,
  type DialectRoute,
} from "./validate.js";

export {
  ollamaChatToOpenAI,
  ollamaEmbeddingsToOpenAI,
  ollamaEmbedToOpenAI,
  ollamaGenerateToOpenAI,
  type OllamaToOpenAIRequestOptions,
  type OpenAIUpstreamRequest,
} from "./translate-ollama-request.js";
export {
  openAIChatToOllama,
  openAICompletionToOllama,
  openAIEmbeddingToOllama,
  type OllamaUpstreamRequest,
  type OpenAIToOllamaRequestOptions,
} from "./translate-openai-request.js";

export {
  openAIChatToOllamaChat,
  openAIChatToOllamaGenerate,
  openAICompletionToOllamaGenerate,
  openAIEmbeddingToOllamaEmbed,
  openAIEmbeddingToOllamaEmbeddings,
  type OllamaReplyContext,
} from "./translate-openai-response.js";
export {
  ollamaChatToOpenAIChat,
  ollamaEmbedToOpenAIEmbedding,
  ollamaGenerateToOpenAICompletion,
  type OpenAIEmbeddingReplyContext,
  type OpenAIReplyContext,
} from "./translate-ollama-response.js";

export {
  OpenAIToOllamaChatStream,
  OpenAIToOllamaGenerateStream,
  type OllamaChatStreamItem,
  type OllamaGenerateStreamItem,
  type OllamaStreamContext,
} from "./translate-openai-stream.js";
export {
  OllamaToOpenAIChatStream,
  OllamaToOpenAICompletionStream,
  type OpenAIChatStreamItem,
  type OpenAICompletionStreamItem,
  type OpenAIStreamContext,
  type OpenAIStreamErrorItem,
} from "./translate-ollama-stream.js";

export {
  PAIR_ERROR_CODES,
  isPairErrorCode,
  pairErrorHeaders,
  pairErrorOfInvalidRequest,
  pairErrorReply,
  pairErrorToOllama,
  pairErrorToOpenAI,
  type ErrorReply,
  type PairError,
  type PairErrorCode,
  type PairErrorSpec,
  type PairOllamaErrorBody,
  type PairOpenAIErrorBody,
} from "./pair-errors.js";
export {
  MAX_ENGINE_MESSAGE_CHARS,
  engineMessageOf,
  ollamaErrorToOpenAI,
  ollamaStreamError,
  openAIErrorToOllama,
  openAIStreamError,
  pairCodeOfEngineStatus,
  pairErrorOfEngineReply,
  streamErrorMessageOf,
} from "./engine-errors.js";

export type { DecodeResult, StreamDecodeError } from "./byte-lines.js";
export {
  DEFAULT_SSE_MAX_EVENT_CHARS,
  DEFAULT_SSE_MAX_LINE_BYTES,
  SSE_CONTENT_TYPE,
  SSE_DONE,
  SseDecoder,
  encodeSseComment,
  encodeSseData,
  encodeSseEvent,
  readOpenAIStreamEvent,
  type OpenAIStreamEvent,
  type SseDecoderOptions,
  type SseEvent,
} from "./sse.js";
export {
  DEFAULT_NDJSON_MAX_LINE_BYTES,
  NDJSON_CONTENT_TYPE,
  NdjsonDecoder,
  encodeNdjson,
  type NdjsonDecoderOptions,
} from "./ndjson.js";

export {
  clientStreams,
  countTokens,
  planExchange,
  type ExchangePlan,
  type PlanContext,
  type StreamRelay,
  type TokenCounts,
} from "./exchange-plan.js";
