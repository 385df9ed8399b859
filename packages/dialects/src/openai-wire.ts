/**
 * OpenAI's wire shapes, as the official API (and openai-node's types) define them: the chat,
 * text-completion and embedding requests, their whole responses and stream chunks, the model list
 * and the error envelope. Plus the few extensions OpenAI-compatible engines (vLLM, llama.cpp server,
 * LM Studio) accept or emit, each marked as such.
 *
 * Types only. Must not know: Ollama's shapes, HTTP, validation or translation.
 *
 * Requests are typed as they are after validation (`validate.ts`): known optional fields sent as
 * `null` by a client are treated as absent, so they are typed `?: T` without `null`. Engine
 * responses are typed as engines send them: fields that engines omit are optional.
 */

// ---------- requests ----------

export interface OpenAITextPart {
  readonly type: "text";
  readonly text: string;
}

export interface OpenAIImagePart {
  readonly type: "image_url";
  readonly image_url: { readonly url: string; readonly detail?: "auto" | "low" | "high" };
}

export interface OpenAIAudioPart {
  readonly type: "input_audio";
  readonly input_audio: { readonly data: string; readonly format: string };
}

export interface OpenAIFilePart {
  readonly type: "file";
  readonly file: { readonly file_data?: string; readonly file_id?: string; readonly filename?: string };
}

export interface OpenAIRefusalPart {
  readonly type: "refusal";
  readonly refusal: string;
}

export type OpenAIUserContentPart = OpenAITextPart | OpenAIImagePart | OpenAIAudioPart | OpenAIFilePart;
export type OpenAIAssistantContentPart = OpenAITextPart | OpenAIRefusalPart;

/** A tool call the assistant made, as it appears in responses and in the history a client sends back. */
export interface OpenAIToolCall {
  readonly id: string;
  readonly type: "function";
  /** `arguments` is a JSON-encoded object, as a string (Ollama: a decoded object). */
  readonly function: { readonly name: string; readonly arguments: string };
}

export interface OpenAISystemMessage {
  readonly role: "system" | "developer";
  readonly content: string | readonly OpenAITextPart[];
  readonly name?: string;
}

export interface OpenAIUserMessage {
  readonly role: "user";
  readonly content: string | readonly OpenAIUserContentPart[];
  readonly name?: string;
}

export interface OpenAIAssistantMessage {
  readonly role: "assistant";
  readonly content?: string | readonly OpenAIAssistantContentPart[];
  readonly refusal?: string;
  readonly tool_calls?: readonly OpenAIToolCall[];
  readonly name?: string;
  /** Extension (vLLM, llama.cpp, DeepSeek): the model's reasoning, separate from `content`. */
  readonly reasoning_content?: string;
}

export interface OpenAIToolMessage {
  readonly role: "tool";
  readonly content: string | readonly OpenAITextPart[];
  readonly tool_call_id: string;
}

export type OpenAIMessage =
  OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage;

export interface OpenAIFunctionTool {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters?: Readonly<Record<string, unknown>>;
    readonly strict?: boolean;
  };
}

export type OpenAIToolChoice =
  "none" | "auto" | "required" | { readonly type: "function"; readonly function: { readonly name: string } };

export type OpenAIResponseFormat =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | {
      readonly type: "json_schema";
      readonly json_schema: {
        readonly name: string;
        readonly description?: string;
        readonly schema?: Readonly<Record<string, unknown>>;
        readonly strict?: boolean;
      };
    };

export interface OpenAIStreamOptions {
  readonly include_usage?: boolean;
}

/** Sampling fields shared by chat and text completions. */
export interface OpenAISampling {
  readonly temperature?: number;
  readonly top_p?: number;
  readonly n?: number;
  readonly stop?: string | readonly string[];
  readonly seed?: number;
  readonly frequency_penalty?: number;
  readonly presence_penalty?: number;
  readonly stream?: boolean;
  readonly stream_options?: OpenAIStreamOptions;
  readonly user?: string;
  /** Extension accepted by vLLM, llama.cpp server and LM Studio; not by OpenAI itself. */
  readonly top_k?: number;
  /** Extension accepted by vLLM, llama.cpp server and LM Studio; not by OpenAI itself. */
  readonly min_p?: number;
}

/** `POST /v1/chat/completions`. */
export interface OpenAIChatRequest extends OpenAISampling {
  readonly model: string;
  readonly messages: readonly OpenAIMessage[];
  /** Deprecated by OpenAI in favour of `max_completion_tokens`, but what every compatible engine reads. */
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
  readonly response_format?: OpenAIResponseFormat;
  readonly tools?: readonly OpenAIFunctionTool[];
  readonly tool_choice?: OpenAIToolChoice;
  readonly parallel_tool_calls?: boolean;
  readonly logprobs?: boolean;
  readonly top_logprobs?: number;
  readonly reasoning_effort?: string;
}

/** `POST /v1/completions` (legacy text completions). */
export interface OpenAICompletionRequest extends OpenAISampling {
  readonly model: string;
  readonly prompt: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
  readonly suffix?: string;
  readonly max_tokens?: number;
  readonly echo?: boolean;
  readonly best_of?: number;
  /** Number of most likely tokens to return log probabilities for (not a boolean here). */
  readonly logprobs?: number;
}

/** `POST /v1/embeddings`. */
export interface OpenAIEmbeddingRequest {
  readonly model: string;
  readonly input: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
  readonly dimensions?: number;
  /** The openai npm client sends `base64` unless told otherwise, and decodes it itself. */
  readonly encoding_format?: "float" | "base64";
  readonly user?: string;
}

// ---------- responses ----------

export type OpenAIFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

export interface OpenAIUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details?: Readonly<Record<string, unknown>> | null;
  readonly completion_tokens_details?: Readonly<Record<string, unknown>> | null;
}

export interface OpenAIResponseMessage {
  readonly role: "assistant";
  readonly content: string | null;
  readonly refusal?: string | null;
  readonly tool_calls?: readonly OpenAIToolCall[];
  /** Extension (vLLM, llama.cpp, DeepSeek). */
  readonly reasoning_content?: string | null;
  /** Extension (some newer servers use this name instead of `reasoning_content`). */
  readonly reasoning?: string | null;
}

export interface OpenAIChatChoice {
  readonly index: number;
  readonly message: OpenAIResponseMessage;
  readonly logprobs?: unknown;
  readonly finish_reason: OpenAIFinishReason | null;
}

export interface OpenAIChatCompletion {
  readonly id: string;
  readonly object: "chat.completion";
  readonly created: number;
  readonly model: string;
  readonly choices: readonly OpenAIChatChoice[];
  readonly usage?: OpenAIUsage | null;
  readonly system_fingerprint?: string | null;
}

/** One entry of `delta.tool_calls`: the first fragment of a call carries `id` and `name`. */
export interface OpenAIToolCallDelta {
  readonly index: number;
  readonly id?: string;
  readonly type?: "function";
  readonly function?: { readonly name?: string; readonly arguments?: string };
}

export interface OpenAIChatDelta {
  readonly role?: "assistant";
  readonly content?: string | null;
  readonly refusal?: string | null;
  readonly tool_calls?: readonly OpenAIToolCallDelta[];
  readonly reasoning_content?: string | null;
  readonly reasoning?: string | null;
}

export interface OpenAIChatChunkChoice {
  readonly index: number;
  readonly delta: OpenAIChatDelta;
  readonly logprobs?: unknown;
  readonly finish_reason: OpenAIFinishReason | null;
}

/** One `data:` event of a streamed chat completion. The usage chunk has `choices: []`. */
export interface OpenAIChatChunk {
  readonly id: string;
  readonly object: "chat.completion.chunk";
  readonly created: number;
  readonly model: string;
  readonly choices: readonly OpenAIChatChunkChoice[];
  readonly usage?: OpenAIUsage | null;
  readonly system_fingerprint?: string | null;
}

export interface OpenAICompletionChoice {
  readonly index: number;
  readonly text: string;
  readonly logprobs: unknown;
  readonly finish_reason: OpenAIFinishReason | null;
}

/** A whole text completion, and also the shape of each of its stream chunks. */
export interface OpenAICompletion {
  readonly id: string;
  readonly object: "text_completion";
  readonly created: number;
  readonly model: string;
  readonly choices: readonly OpenAICompletionChoice[];
  readonly usage?: OpenAIUsage | null;
  readonly system_fingerprint?: string | null;
}

export type OpenAICompletionChunk = OpenAICompletion;

export interface OpenAIEmbedding {
  readonly object: "embedding";
  readonly index: number;
  /** Floats, or base64 of little-endian float32 when `encoding_format` was `base64`. */
  readonly embedding: readonly number[] | string;
}

export interface OpenAIEmbeddingResponse {
  readonly object: "list";
  readonly data: readonly OpenAIEmbedding[];
  readonly model: string;
  readonly usage?: { readonly prompt_tokens: number; readonly total_tokens: number };
}

export interface OpenAIModel {
  readonly id: string;
  readonly object: "model";
  readonly created: number;
  readonly owned_by: string;
}

/** `GET /v1/models`. */
export interface OpenAIModelList {
  readonly object: "list";
  readonly data: readonly OpenAIModel[];
}

// ---------- errors ----------

export interface OpenAIErrorBody {
  readonly message: string;
  readonly type: string;
  readonly param: string | null;
  /** OpenAI sends a string; vLLM sends the HTTP status as a number. */
  readonly code: string | number | null;
}

/** `{"error": {...}}`: the body of a failed request, and a mid-stream `data:` event on failure. */
export interface OpenAIErrorEnvelope {
  readonly error: OpenAIErrorBody;
}
