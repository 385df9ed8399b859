/**
 * Ollama-dialect requests → OpenAI-dialect requests, for an Ollama client served by an engine that
 * speaks only OpenAI (vLLM, llama.cpp server, LM Studio, every rented GPU).
 *
 * Mapping decisions:
 * - `/api/chat` → `/v1/chat/completions`. Ollama streams unless `stream: false`; OpenAI streams only
 *   on `stream: true`, so `stream` is always written out, and a streamed request asks for
 *   `stream_options: {include_usage: true}` so the token counts of Ollama's final object arrive.
 * - `/api/generate` → `/v1/chat/completions` with an optional system message and one user message
 *   (prompt + images): the prompt template is the engine's chat template, which is what Ollama does
 *   with a non-raw prompt, and chat is what every OpenAI-compatible server supports.
 *   `raw: true` → `/v1/completions` (no template, the prompt as is; `system` is ignored, as Ollama
 *   ignores it in raw mode). A non-empty `suffix` → `/v1/completions` with `suffix`, the only OpenAI
 *   route that has one (best effort: vLLM refuses `suffix`). Images cannot go to `/v1/completions`:
 *   refused, never dropped. `template`, `context` and `keep_alive` have no OpenAI meaning: dropped.
 * - `/api/embed` and `/api/embeddings` → `/v1/embeddings` with `encoding_format: "float"`; `truncate`
 *   and `options` are dropped (no OpenAI equivalent).
 * - Options: `num_predict` (> 0) → `max_tokens` (what every compatible engine reads);
 *   `temperature`, `top_p`, `seed`, `stop`, `frequency_penalty`, `presence_penalty` as they are;
 *   `top_k` and `min_p` only with `samplingExtensions` (vLLM, llama.cpp, LM Studio take them; OpenAI
 *   refuses unknown fields); the rest (`num_ctx`, `repeat_penalty`, `mirostat`…) is dropped.
 * - `format: "json"` → `response_format: {type: "json_object"}`; a schema → `{type: "json_schema",
 *   json_schema: {name: "response", schema}}`. `think: "high"|"medium"|"low"` → `reasoning_effort`.
 * - Images (bare base64) → `image_url` parts with data URLs, MIME sniffed from the bytes. Images are
 *   carried on user messages only (elsewhere refused). Tool calls get ids `call_<message>_<n>` unless
 *   they have one, and each `tool` result is paired with the oldest open call of its `tool_name`
 *   (or the oldest open call, when it names none). `thinking` in the history is not sent back.
 * - `keep_alive` (everywhere) and `think: true|false` have no OpenAI meaning: dropped.
 *
 * Must not know: HTTP, routing, responses.
 */

import { dataUrlOf, openAIToolCallOf, ToolCallLedger } from "./content-mapping.js";
import { accepted, refused, type DialectResult } from "./dialect-error.js";
import type {
  OllamaChatRequest,
  OllamaEmbedRequest,
  OllamaEmbeddingsRequest,
  OllamaFormat,
  OllamaGenerateRequest,
  OllamaMessage,
  OllamaOptions,
  OllamaThink,
} from "./ollama-wire.js";
import type {
  OpenAIChatRequest,
  OpenAICompletionRequest,
  OpenAIEmbeddingRequest,
  OpenAIMessage,
  OpenAIResponseFormat,
  OpenAIToolCall,
  OpenAIUserContentPart,
} from "./openai-wire.js";

export interface OllamaToOpenAIRequestOptions {
  /** The model name to send upstream; the request's own by default. */
  readonly model?: string;
  /**
   * Forward `top_k` and `min_p`, which vLLM, llama.cpp server and LM Studio accept but OpenAI itself
   * (and some providers behind a router) refuse. Default false.
   */
  readonly samplingExtensions?: boolean;
}

/** An upstream OpenAI call; `stream` says whether the client expects a stream back. */
export type OpenAIUpstreamRequest =
  | { readonly path: "/v1/chat/completions"; readonly body: OpenAIChatRequest; readonly stream: boolean }
  | { readonly path: "/v1/completions"; readonly body: OpenAICompletionRequest; readonly stream: boolean }
  | { readonly path: "/v1/embeddings"; readonly body: OpenAIEmbeddingRequest; readonly stream: false };

type Writable<T> = { -readonly [K in keyof T]: T[K] };
type Sampling = Writable<Partial<OpenAIChatRequest & OpenAICompletionRequest>>;

function samplingOf(options: OllamaOptions | undefined, extensions: boolean): Sampling {
  const out: Sampling = {};
  if (options === undefined) return out;
  const { num_predict, temperature, top_p, seed, stop, frequency_penalty, presence_penalty, top_k, min_p } =
    options;
  if (num_predict !== undefined && num_predict > 0) out.max_tokens = num_predict;
  if (temperature !== undefined) out.temperature = temperature;
  if (top_p !== undefined) out.top_p = top_p;
  if (seed !== undefined) out.seed = seed;
  if (stop !== undefined && stop.length > 0) out.stop = [...stop];
  if (frequency_penalty !== undefined) out.frequency_penalty = frequency_penalty;
  if (presence_penalty !== undefined) out.presence_penalty = presence_penalty;
  if (extensions && top_k !== undefined) out.top_k = top_k;
  if (extensions && min_p !== undefined) out.min_p = min_p;
  return out;
}

function streamingOf(requested: boolean | undefined): Pick<Sampling, "stream" | "stream_options"> {
  const stream = requested !== false;
  // vLLM refuses `stream_options` on a non-streamed request (400), so it is sent only with a stream.
  return stream ? { stream, stream_options: { include_usage: true } } : { stream };
}

export function responseFormatOf(format: OllamaFormat | undefined): OpenAIResponseFormat | undefined {
  if (format === undefined) return undefined;
  if (format === "json") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: "response", schema: format } };
}

function effortOf(think: OllamaThink | undefined): string | undefined {
  return typeof think === "string" ? think : undefined;
}

/** The fields chat-shaped requests share (chat, and generate served by chat). */
function chatExtras(
  req: Pick<OllamaChatRequest, "format" | "options" | "think">,
  opts: OllamaToOpenAIRequestOptions,
): Sampling {
  const out: Sampling = samplingOf(req.options, opts.samplingExtensions === true);
  const responseFormat = responseFormatOf(req.format);
  if (responseFormat !== undefined) out.response_format = responseFormat;
  const effort = effortOf(req.think);
  if (effort !== undefined) out.reasoning_effort = effort;
  return out;
}

function userContentOf(content: string, images: readonly string[]): string | OpenAIUserContentPart[] {
  if (images.length === 0) return content;
  const parts: OpenAIUserContentPart[] = content === "" ? [] : [{ type: "text", text: content }];
  for (const image of images) parts.push({ type: "image_url", image_url: { url: dataUrlOf(image) } });
  return parts;
}

function messagesOf(messages: readonly OllamaMessage[]): DialectResult<OpenAIMessage[]> {
  const ledger = new ToolCallLedger();
  const out: OpenAIMessage[] = [];
  for (const [i, m] of messages.entries()) {
    const images = m.images ?? [];
    if (images.length > 0 && m.role !== "user") {
      return refused(`messages[${i}].images`, "an OpenAI-dialect engine takes images on user messages only");
    }
    switch (m.role) {
      case "system":
        out.push({ role: "system", content: m.content });
        break;
      case "user":
        out.push({ role: "user", content: userContentOf(m.content, images) });
        break;
      case "assistant": {
        const calls: OpenAIToolCall[] = (m.tool_calls ?? []).map((call, k) =>
          openAIToolCallOf(call, `call_${i}_${k}`),
        );
        ledger.called(calls.map((call) => ({ id: call.id, name: call.function.name })));
        out.push(
          calls.length > 0
            ? { role: "assistant", content: m.content, tool_calls: calls }
            : { role: "assistant", content: m.content },
        );
        break;
      }
      case "tool":
        out.push({ role: "tool", content: m.content, tool_call_id: ledger.idFor(m.tool_name, `call_${i}`) });
        break;
    }
  }
  return accepted(out);
}

export function ollamaChatToOpenAI(
  req: OllamaChatRequest,
  opts: OllamaToOpenAIRequestOptions = {},
): DialectResult<OpenAIUpstreamRequest & { readonly path: "/v1/chat/completions" }> {
  const messages = messagesOf(req.messages);
  if (!messages.ok) return messages;
  const body: OpenAIChatRequest = {
    model: opts.model ?? req.model,
    messages: messages.value,
    ...chatExtras(req, opts),
    ...(req.tools !== undefined && req.tools.length > 0 ? { tools: req.tools } : {}),
    ...streamingOf(req.stream),
  };
  return accepted({ path: "/v1/chat/completions", body, stream: req.stream !== false });
}

export function ollamaGenerateToOpenAI(
  req: OllamaGenerateRequest,
  opts: OllamaToOpenAIRequestOptions = {},
): DialectResult<OpenAIUpstreamRequest & { readonly path: "/v1/chat/completions" | "/v1/completions" }> {
  const model = opts.model ?? req.model;
  const images = req.images ?? [];
  const suffix = req.suffix ?? "";
  const stream = req.stream !== false;
  if (req.raw === true || suffix !== "") {
    if (images.length > 0) {
      const why = req.raw === true ? "raw: true" : "a suffix";
      return refused(
        "images",
        `a generate request with ${why} goes to /v1/completions, which takes no images`,
      );
    }
    const body: OpenAICompletionRequest = {
      model,
      prompt: req.prompt,
      ...(suffix !== "" ? { suffix } : {}),
      ...samplingOf(req.options, opts.samplingExtensions === true),
      ...streamingOf(req.stream),
    };
    return accepted({ path: "/v1/completions", body, stream });
  }
  const system = req.system ?? "";
  const messages: OpenAIMessage[] = [
    ...(system !== "" ? [{ role: "system" as const, content: system }] : []),
    { role: "user", content: userContentOf(req.prompt, images) },
  ];
  const body: OpenAIChatRequest = { model, messages, ...chatExtras(req, opts), ...streamingOf(req.stream) };
  return accepted({ path: "/v1/chat/completions", body, stream });
}

export function ollamaEmbedToOpenAI(
  req: OllamaEmbedRequest,
  opts: Pick<OllamaToOpenAIRequestOptions, "model"> = {},
): DialectResult<OpenAIUpstreamRequest & { readonly path: "/v1/embeddings" }> {
  const body: OpenAIEmbeddingRequest = {
    model: opts.model ?? req.model,
    input: typeof req.input === "string" ? req.input : [...req.input],
    ...(req.dimensions !== undefined ? { dimensions: req.dimensions } : {}),
    encoding_format: "float",
  };
  return accepted({ path: "/v1/embeddings", body, stream: false });
}

export function ollamaEmbeddingsToOpenAI(
  req: OllamaEmbeddingsRequest,
  opts: Pick<OllamaToOpenAIRequestOptions, "model"> = {},
): DialectResult<OpenAIUpstreamRequest & { readonly path: "/v1/embeddings" }> {
  const body: OpenAIEmbeddingRequest = {
    model: opts.model ?? req.model,
    input: req.prompt,
    encoding_format: "float",
  };
  return accepted({ path: "/v1/embeddings", body, stream: false });
}
