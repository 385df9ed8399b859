/**
 * How many tokens a request's prompt takes, measured as cheaply as the decision allows, and how
 * many it asks to generate.
 *
 * - The bound, free: the request body's length in bytes. Byte-level tokenizers (BPE, SentencePiece
 *   with byte fallback) never make more tokens than the text has UTF-8 bytes, and the JSON around
 *   the text (keys, quotes, escapes: about 30 bytes a message) outweighs a chat template's few tokens
 *   a message; `TEMPLATE_MARGIN_TOKENS` covers the template's header. A prompt whose bound fits a
 *   window is never looked at again.
 * - The estimate, for a prompt near a window: the text's UTF-8 bytes over `BYTES_PER_TOKEN`, plus
 *   `MESSAGE_OVERHEAD_TOKENS` a message and `IMAGE_TOKENS` an image or other media part, plus the
 *   margin. Current tokenizers take 4–5 bytes a token of English, 3–4 of code, about 3 of Chinese, so
 *   the estimate errs high; it can err low on dense data (base64, long digit runs). Engines that
 *   refuse an over-long prompt (vLLM, llama.cpp, TGI) then fail over on their error; where an engine
 *   has a tokenizer endpoint PAIR asks it instead (tokenize.ts).
 * Must not know: windows, engines, routing.
 */

import type { DialectRequests, DialectRoute } from "@pair/dialects";

export const TEMPLATE_MARGIN_TOKENS = 64;
export const BYTES_PER_TOKEN = 3;
export const MESSAGE_OVERHEAD_TOKENS = 8;
export const IMAGE_TOKENS = 2048;

/** The free bound on a prompt's tokens: its body's bytes plus the template margin. */
export function promptUpperBound(bodyBytes: number): number {
  return bodyBytes + TEMPLATE_MARGIN_TOKENS;
}

/** Keys whose values are never prompt text (the model's name, sampling options, formats). */
const NOT_TEXT = new Set(["model", "options", "stream", "stream_options", "keep_alive", "format"]);
const MEDIA_PARTS = new Set(["image_url", "input_audio", "file", "image"]);

interface Tally {
  bytes: number;
  tokens: number;
}

function walk(value: unknown, key: string | undefined, t: Tally): void {
  if (typeof value === "string") {
    if (value.startsWith("data:")) t.tokens += IMAGE_TOKENS;
    else t.bytes += Buffer.byteLength(value);
    return;
  }
  if (Array.isArray(value)) {
    if (key === "images") {
      t.tokens += IMAGE_TOKENS * value.length;
      return;
    }
    // A token-id array (embeddings input, a completion prompt as tokens): exactly its length.
    if (value.length > 0 && typeof value[0] === "number") {
      t.tokens += value.length;
      return;
    }
    if (key === "messages") t.tokens += MESSAGE_OVERHEAD_TOKENS * value.length;
    for (const item of value) walk(item, undefined, t);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const o = value as Record<string, unknown>;
  if (typeof o["type"] === "string" && MEDIA_PARTS.has(o["type"])) {
    t.tokens += IMAGE_TOKENS;
    return;
  }
  for (const k in o) if (!NOT_TEXT.has(k)) walk(o[k], k, t);
}

function tallied(value: unknown): number {
  const t: Tally = { bytes: 0, tokens: 0 };
  walk(value, undefined, t);
  return Math.ceil(t.bytes / BYTES_PER_TOKEN) + t.tokens + TEMPLATE_MARGIN_TOKENS;
}

const EMBEDDING_ROUTES = new Set<DialectRoute>(["/v1/embeddings", "/api/embed", "/api/embeddings"]);

/**
 * The estimate of a prompt's tokens (see the header); walks the request's text once. Embeddings
 * embed each input on its own: the largest input is what a window must hold.
 */
export function estimatePromptTokens(route: DialectRoute, request: DialectRequests[DialectRoute]): number {
  if (EMBEDDING_ROUTES.has(route)) {
    const input = (request as { input?: unknown }).input;
    if (Array.isArray(input) && input.length > 0 && typeof input[0] !== "number") {
      let most = 0;
      for (const item of input) most = Math.max(most, tallied(item));
      return most;
    }
  }
  return tallied(request);
}

/** Tokens the request asks to generate (`max_completion_tokens`, `max_tokens`, `num_predict`); 0 for embeddings; undefined: unlimited. */
export function requestedOutputTokens(
  route: DialectRoute,
  request: DialectRequests[DialectRoute],
): number | undefined {
  switch (route) {
    case "/v1/embeddings":
    case "/api/embed":
    case "/api/embeddings":
      return 0;
    case "/v1/chat/completions": {
      const r = request as DialectRequests["/v1/chat/completions"];
      return r.max_completion_tokens ?? r.max_tokens;
    }
    case "/v1/completions":
      return (request as DialectRequests["/v1/completions"]).max_tokens;
    case "/api/chat":
    case "/api/generate": {
      const n = (request as DialectRequests["/api/chat"]).options?.num_predict;
      return n === undefined || n < 0 ? undefined : n;
    }
  }
}

/** What a tokenizer endpoint is given: the chat's messages as text, or the prompt. */
export interface TokenizerInput {
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  readonly prompt?: string;
}

/** The request's text for a tokenizer endpoint; undefined when it carries media (no text tokenizer counts that). */
export function tokenizerInput(
  route: DialectRoute,
  request: DialectRequests[DialectRoute],
): TokenizerInput | undefined {
  const r = request as unknown as Record<string, unknown>;
  if (route === "/v1/chat/completions" || route === "/api/chat") {
    const messages: { role: string; content: string }[] = [];
    for (const m of (r["messages"] ?? []) as Record<string, unknown>[]) {
      const content = m["content"];
      if (Array.isArray(m["images"]) && m["images"].length > 0) return undefined;
      let text = "";
      if (typeof content === "string") text = content;
      else if (Array.isArray(content))
        for (const part of content as Record<string, unknown>[]) {
          if (part["type"] !== "text" || typeof part["text"] !== "string") return undefined;
          text += part["text"];
        }
      if (m["tool_calls"] !== undefined) text += JSON.stringify(m["tool_calls"]);
      messages.push({ role: typeof m["role"] === "string" ? m["role"] : "user", content: text });
    }
    if (r["tools"] !== undefined) messages.unshift({ role: "system", content: JSON.stringify(r["tools"]) });
    return { messages };
  }
  if (route === "/v1/completions" || route === "/api/generate") {
    const prompt = r["prompt"];
    const system = typeof r["system"] === "string" ? `${r["system"]}\n` : "";
    if (typeof prompt === "string") return { prompt: system + prompt };
    if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === "string")
      return { prompt: prompt[0] };
    return undefined;
  }
  const input = r["input"] ?? r["prompt"];
  if (typeof input === "string") return { prompt: input };
  return undefined;
}
