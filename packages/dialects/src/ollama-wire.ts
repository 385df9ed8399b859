/**
 * Ollama's wire shapes, as ollama/ollama `docs/api.md` and `api/types.go` define them: chat,
 * generate, embed (and the legacy embeddings route) requests, their responses and NDJSON stream
 * objects, the model list, the version, and the `{"error": "..."}` body. Durations are integer
 * nanoseconds; `created_at` is an RFC 3339 time.
 *
 * Types only. Must not know: OpenAI's shapes, HTTP, validation or translation.
 *
 * Requests are typed as they are after validation (`validate.ts`): fields a client sent as `null`
 * are treated as absent (Go decodes `null` to the zero value). Responses are typed as engines send
 * them: Ollama omits zero metrics (`omitempty`), so every metric is optional.
 */

export type OllamaRole = "system" | "user" | "assistant" | "tool";

/** A tool call. Unlike OpenAI, `arguments` is a decoded JSON object, and there may be no id. */
export interface OllamaToolCall {
  readonly id?: string;
  readonly function: {
    readonly index?: number;
    readonly name: string;
    readonly arguments: Readonly<Record<string, unknown>>;
  };
}

export interface OllamaMessage {
  readonly role: OllamaRole;
  readonly content: string;
  /** For thinking models: the reasoning, kept apart from `content`. */
  readonly thinking?: string;
  /** Base64-encoded images (no `data:` prefix). */
  readonly images?: readonly string[];
  readonly tool_calls?: readonly OllamaToolCall[];
  /** On a `tool` message: the name of the tool whose result this is. */
  readonly tool_name?: string;
}

export interface OllamaTool {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters?: Readonly<Record<string, unknown>>;
  };
}

/** `"json"`, or a JSON schema the output must match. (Ollama also reads `""` as "no format".) */
export type OllamaFormat = "json" | Readonly<Record<string, unknown>>;

/**
 * Model options (the Modelfile parameters). Ollama ignores unknown keys, so this is open: the keys
 * below are the ones PAIR reads or type-checks; any other key passes through untouched.
 */
export interface OllamaOptions {
  /** Maximum tokens to generate; -1 = unbounded, -2 = fill the context. */
  readonly num_predict?: number;
  readonly temperature?: number;
  readonly top_p?: number;
  readonly top_k?: number;
  readonly min_p?: number;
  readonly stop?: readonly string[];
  readonly seed?: number;
  readonly frequency_penalty?: number;
  readonly presence_penalty?: number;
  readonly repeat_penalty?: number;
  readonly num_ctx?: number;
  readonly [key: string]: unknown;
}

/** `think`: on/off, or an effort level for models that take one. */
export type OllamaThink = boolean | "high" | "medium" | "low";

/** A duration string such as `"5m"`, or a number of seconds; `0` unloads at once. */
export type OllamaKeepAlive = string | number;

/** `POST /api/chat`. `stream` defaults to true. */
export interface OllamaChatRequest {
  readonly model: string;
  readonly messages: readonly OllamaMessage[];
  readonly tools?: readonly OllamaTool[];
  readonly format?: OllamaFormat;
  readonly options?: OllamaOptions;
  readonly stream?: boolean;
  readonly keep_alive?: OllamaKeepAlive;
  readonly think?: OllamaThink;
}

/** `POST /api/generate`. `stream` defaults to true. */
export interface OllamaGenerateRequest {
  readonly model: string;
  readonly prompt: string;
  readonly suffix?: string;
  readonly system?: string;
  readonly template?: string;
  /** Deprecated: token ids returned by an earlier `/api/generate`. */
  readonly context?: readonly number[];
  readonly images?: readonly string[];
  readonly format?: OllamaFormat;
  readonly options?: OllamaOptions;
  readonly stream?: boolean;
  /** No prompt template is applied. */
  readonly raw?: boolean;
  readonly keep_alive?: OllamaKeepAlive;
  readonly think?: OllamaThink;
}

/** `POST /api/embed`. */
export interface OllamaEmbedRequest {
  readonly model: string;
  readonly input: string | readonly string[];
  readonly truncate?: boolean;
  readonly dimensions?: number;
  readonly options?: OllamaOptions;
  readonly keep_alive?: OllamaKeepAlive;
}

/** `POST /api/embeddings` (legacy, superseded by `/api/embed`). */
export interface OllamaEmbeddingsRequest {
  readonly model: string;
  readonly prompt: string;
  readonly options?: OllamaOptions;
  readonly keep_alive?: OllamaKeepAlive;
}

// ---------- responses ----------

/** Known values: `stop`, `length`, `load`, `unload`; Ollama does not close the set. */
export type OllamaDoneReason = string;

/** Statistics of the final object; all durations in nanoseconds; zero values are omitted. */
export interface OllamaMetrics {
  readonly total_duration?: number;
  readonly load_duration?: number;
  readonly prompt_eval_count?: number;
  readonly prompt_eval_duration?: number;
  readonly eval_count?: number;
  readonly eval_duration?: number;
}

/** A whole `/api/chat` answer, and the shape of each of its NDJSON objects. */
export interface OllamaChatResponse extends OllamaMetrics {
  readonly model: string;
  readonly created_at: string;
  readonly message: OllamaMessage;
  readonly done: boolean;
  readonly done_reason?: OllamaDoneReason;
}

export type OllamaChatStreamObject = OllamaChatResponse;

/** A whole `/api/generate` answer, and the shape of each of its NDJSON objects. */
export interface OllamaGenerateResponse extends OllamaMetrics {
  readonly model: string;
  readonly created_at: string;
  readonly response: string;
  readonly thinking?: string;
  readonly done: boolean;
  readonly done_reason?: OllamaDoneReason;
  readonly context?: readonly number[];
}

export type OllamaGenerateStreamObject = OllamaGenerateResponse;

export interface OllamaEmbedResponse {
  readonly model: string;
  readonly embeddings: readonly (readonly number[])[];
  readonly total_duration?: number;
  readonly load_duration?: number;
  readonly prompt_eval_count?: number;
}

export interface OllamaEmbeddingsResponse {
  readonly embedding: readonly number[];
}

export interface OllamaModelDetails {
  readonly parent_model: string;
  readonly format: string;
  readonly family: string;
  readonly families: readonly string[] | null;
  readonly parameter_size: string;
  readonly quantization_level: string;
}

/** `GET /api/tags`. */
export interface OllamaTagsResponse {
  readonly models: readonly {
    readonly name: string;
    readonly model: string;
    readonly modified_at: string;
    readonly size: number;
    readonly digest: string;
    readonly details: OllamaModelDetails;
  }[];
}

/** `GET /api/version`. */
export interface OllamaVersionResponse {
  readonly version: string;
}

// ---------- errors ----------

/** The body of a failed request, and an NDJSON line when a stream fails after it started. */
export interface OllamaErrorBody {
  readonly error: string;
}
