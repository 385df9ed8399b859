/**
 * OpenAI-dialect requests → Ollama-dialect requests, for an OpenAI client served by an Ollama engine.
 *
 * Mapping decisions:
 * - `/v1/chat/completions` → `/api/chat`. OpenAI streams only on `stream: true` while Ollama streams
 *   by default, so `stream` is always written out. `developer` is Ollama's `system`. Text parts are
 *   joined with "\n"; `image_url` parts must be base64 data URLs (PAIR fetches nothing) and become
 *   `images`; `input_audio` and `file` parts are refused, never dropped. Assistant tool calls get
 *   their arguments decoded (a string that is not a JSON object is refused); a `tool` message gets
 *   the `tool_name` of the call it answers. `reasoning_content` on history → `thinking`.
 * - `/v1/completions` → `/api/generate` with `raw: true` (OpenAI applies no template to a completion
 *   prompt, nor does vLLM or llama.cpp), unless a `suffix` is given: fill-in-the-middle needs the
 *   model's template, so `raw` stays off. One prompt only (string or a one-string array); token-id
 *   prompts, `echo`, `n > 1` and `best_of > 1` are refused: Ollama cannot honour them.
 * - `/v1/embeddings` → `/api/embed`; token-id inputs are refused. `encoding_format` is honoured by
 *   the response translator, not sent.
 * - `max_completion_tokens` (else `max_tokens`) → `options.num_predict`; `temperature`, `top_p`,
 *   `seed`, `stop` (a string becomes a one-element list), penalties, and the `top_k`/`min_p`
 *   extensions → `options`. `response_format` json_object → `format: "json"`, json_schema → its
 *   schema (`"json"` when it has none). `reasoning_effort` low/medium/high → `think`.
 *   `tool_choice: "none"` sends no tools; other choices send the tools (Ollama cannot force one).
 *   `logprobs`, `parallel_tool_calls`, `user`, `name` have no Ollama meaning: dropped.
 *
 * Must not know: HTTP, routing, responses.
 */

import { base64OfDataUrl, joinText, parseToolArguments, ToolCallLedger } from "./content-mapping.js";
import { accepted, refused, type DialectResult } from "./dialect-error.js";
import type {
  OllamaChatRequest,
  OllamaEmbedRequest,
  OllamaFormat,
  OllamaGenerateRequest,
  OllamaMessage,
  OllamaOptions,
  OllamaThink,
  OllamaToolCall,
} from "./ollama-wire.js";
import type {
  OpenAIChatRequest,
  OpenAICompletionRequest,
  OpenAIEmbeddingRequest,
  OpenAIMessage,
  OpenAIResponseFormat,
  OpenAISampling,
  OpenAIUserContentPart,
} from "./openai-wire.js";

export interface OpenAIToOllamaRequestOptions {
  /** The model name to send upstream; the request's own by default. */
  readonly model?: string;
}

/** An upstream Ollama call; `stream` says whether the client expects a stream back. */
export type OllamaUpstreamRequest =
  | { readonly path: "/api/chat"; readonly body: OllamaChatRequest; readonly stream: boolean }
  | { readonly path: "/api/generate"; readonly body: OllamaGenerateRequest; readonly stream: boolean }
  | { readonly path: "/api/embed"; readonly body: OllamaEmbedRequest; readonly stream: false };

function optionsOf(req: OpenAISampling, maxTokens: number | undefined): OllamaOptions | undefined {
  const out: Record<string, unknown> = {};
  if (maxTokens !== undefined) out["num_predict"] = maxTokens;
  const { temperature, top_p, seed, stop, frequency_penalty, presence_penalty, top_k, min_p } = req;
  if (temperature !== undefined) out["temperature"] = temperature;
  if (top_p !== undefined) out["top_p"] = top_p;
  if (seed !== undefined) out["seed"] = seed;
  if (stop !== undefined) out["stop"] = typeof stop === "string" ? [stop] : [...stop];
  if (frequency_penalty !== undefined) out["frequency_penalty"] = frequency_penalty;
  if (presence_penalty !== undefined) out["presence_penalty"] = presence_penalty;
  if (top_k !== undefined) out["top_k"] = top_k;
  if (min_p !== undefined) out["min_p"] = min_p;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function formatOf(format: OpenAIResponseFormat | undefined): OllamaFormat | undefined {
  switch (format?.type) {
    case undefined:
    case "text":
      return undefined;
    case "json_object":
      return "json";
    case "json_schema":
      return format.json_schema.schema ?? "json";
  }
}

function thinkOf(effort: string | undefined): OllamaThink | undefined {
  return effort === "low" || effort === "medium" || effort === "high" ? effort : undefined;
}

function oneChoice(n: number | undefined, path = "n"): DialectResult<true> {
  return n === undefined || n === 1
    ? accepted(true)
    : refused(path, `an Ollama engine returns one choice per request; expected 1, got ${n}`);
}

function userMessageOf(
  content: string | readonly OpenAIUserContentPart[],
  path: string,
): DialectResult<OllamaMessage> {
  if (typeof content === "string") return accepted({ role: "user", content });
  const texts: string[] = [];
  const images: string[] = [];
  for (const [j, part] of content.entries()) {
    switch (part.type) {
      case "text":
        texts.push(part.text);
        break;
      case "image_url": {
        const image = base64OfDataUrl(part.image_url.url);
        if (image === undefined) {
          return refused(
            `${path}[${j}].image_url.url`,
            "an Ollama engine takes inline images only (a base64 data: URL); PAIR does not fetch remote images",
          );
        }
        images.push(image);
        break;
      }
      case "input_audio":
      case "file":
        return refused(`${path}[${j}]`, `an Ollama engine takes no ${part.type} content parts`);
    }
  }
  const text = texts.join("\n");
  return accepted(
    images.length > 0 ? { role: "user", content: text, images } : { role: "user", content: text },
  );
}

function messagesOf(messages: readonly OpenAIMessage[]): DialectResult<OllamaMessage[]> {
  const ledger = new ToolCallLedger();
  const out: OllamaMessage[] = [];
  for (const [i, m] of messages.entries()) {
    switch (m.role) {
      case "system":
      case "developer":
        out.push({ role: "system", content: joinText(m.content) });
        break;
      case "user": {
        const user = userMessageOf(m.content, `messages[${i}].content`);
        if (!user.ok) return user;
        out.push(user.value);
        break;
      }
      case "assistant": {
        const calls: OllamaToolCall[] = [];
        for (const [k, call] of (m.tool_calls ?? []).entries()) {
          const args = parseToolArguments(call.function.arguments);
          if (args === undefined) {
            return refused(
              `messages[${i}].tool_calls[${k}].function.arguments`,
              "expected a JSON object encoded as a string",
            );
          }
          calls.push({ function: { name: call.function.name, arguments: args } });
        }
        ledger.called((m.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name })));
        const content = m.content === undefined ? "" : joinText(m.content);
        out.push({
          role: "assistant",
          content,
          ...(m.reasoning_content !== undefined && m.reasoning_content !== ""
            ? { thinking: m.reasoning_content }
            : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        });
        break;
      }
      case "tool": {
        const name = ledger.nameFor(m.tool_call_id);
        out.push({
          role: "tool",
          content: joinText(m.content),
          ...(name !== undefined ? { tool_name: name } : {}),
        });
        break;
      }
    }
  }
  return accepted(out);
}

export function openAIChatToOllama(
  req: OpenAIChatRequest,
  opts: OpenAIToOllamaRequestOptions = {},
): DialectResult<OllamaUpstreamRequest & { readonly path: "/api/chat" }> {
  const single = oneChoice(req.n);
  if (!single.ok) return single;
  const messages = messagesOf(req.messages);
  if (!messages.ok) return messages;
  const stream = req.stream === true;
  const options = optionsOf(req, req.max_completion_tokens ?? req.max_tokens);
  const format = formatOf(req.response_format);
  const think = thinkOf(req.reasoning_effort);
  const tools = req.tool_choice === "none" ? undefined : req.tools;
  const body: OllamaChatRequest = {
    model: opts.model ?? req.model,
    messages: messages.value,
    stream,
    ...(options !== undefined ? { options } : {}),
    ...(format !== undefined ? { format } : {}),
    ...(think !== undefined ? { think } : {}),
    ...(tools !== undefined && tools.length > 0
      ? { tools: tools.map((tool) => ({ type: "function" as const, function: tool.function })) }
      : {}),
  };
  return accepted({ path: "/api/chat", body, stream });
}

export function openAICompletionToOllama(
  req: OpenAICompletionRequest,
  opts: OpenAIToOllamaRequestOptions = {},
): DialectResult<OllamaUpstreamRequest & { readonly path: "/api/generate" }> {
  const single = oneChoice(req.n);
  if (!single.ok) return single;
  const best = oneChoice(req.best_of, "best_of");
  if (!best.ok) return best;
  if (req.echo === true) return refused("echo", "an Ollama engine cannot echo the prompt; expected false");
  const prompts: string | readonly unknown[] = req.prompt;
  const prompt: unknown = typeof prompts !== "string" && prompts.length === 1 ? prompts[0] : prompts;
  if (typeof prompt !== "string") {
    return refused("prompt", "an Ollama engine takes exactly one text prompt per request (no token ids)");
  }
  const stream = req.stream === true;
  const suffix = req.suffix ?? "";
  const options = optionsOf(req, req.max_tokens);
  const body: OllamaGenerateRequest = {
    model: opts.model ?? req.model,
    prompt,
    stream,
    ...(suffix !== "" ? { suffix } : { raw: true }),
    ...(options !== undefined ? { options } : {}),
  };
  return accepted({ path: "/api/generate", body, stream });
}

function isStringList(list: readonly unknown[]): list is readonly string[] {
  return list.every((item) => typeof item === "string");
}

export function openAIEmbeddingToOllama(
  req: OpenAIEmbeddingRequest,
  opts: OpenAIToOllamaRequestOptions = {},
): DialectResult<OllamaUpstreamRequest & { readonly path: "/api/embed" }> {
  const input: string | readonly unknown[] = req.input;
  if (typeof input !== "string" && !isStringList(input)) {
    return refused("input", "an Ollama engine embeds text only (no token ids)");
  }
  const body: OllamaEmbedRequest = {
    model: opts.model ?? req.model,
    input: typeof input === "string" ? input : [...input],
    ...(req.dimensions !== undefined ? { dimensions: req.dimensions } : {}),
  };
  return accepted({ path: "/api/embed", body, stream: false });
}
