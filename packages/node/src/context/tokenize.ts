/**
 * Counting a prompt with the engine's own tokenizer, for a prompt near that engine's window:
 * vLLM `POST /tokenize` (the chat's messages through its template, `count`), llama.cpp
 * `POST /tokenize` (`content`, the `tokens` list), TGI `POST /tokenize` (`inputs`, a list of
 * tokens). llama.cpp and TGI count text only, so the chat's per-message overhead and the template
 * margin are added. Any failure (no such route, a timeout) leaves the estimate in force.
 * Must not know: routing decisions.
 */

import type { Dispatcher } from "undici";
import { boundedText } from "../http/bounded-text.js";
import type { TokenizerKind } from "./model-window.js";
import { MESSAGE_OVERHEAD_TOKENS, TEMPLATE_MARGIN_TOKENS, type TokenizerInput } from "./prompt-size.js";

/** Longest wait for a tokenizer's answer: beyond it the estimate decides. */
export const TOKENIZE_TIMEOUT_MS = 2_000;

/** The engine's host root (an OpenAI engine's base URL without `/v1`). */
export function engineRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

function bodyFor(kind: TokenizerKind, model: string, input: TokenizerInput): unknown {
  const text = input.prompt ?? (input.messages ?? []).map((m) => `${m.role}: ${m.content}`).join("\n");
  switch (kind) {
    case "vllm":
      return input.messages === undefined
        ? { model, prompt: input.prompt ?? "" }
        : { model, messages: input.messages, add_generation_prompt: true };
    case "llamacpp":
      return { content: text, add_special: true };
    case "tgi":
      return { inputs: text };
  }
}

function countOf(kind: TokenizerKind, body: unknown): number | undefined {
  if (kind === "vllm") {
    const count = (body as { count?: unknown } | null)?.count;
    return typeof count === "number" ? count : undefined;
  }
  const list = kind === "llamacpp" ? (body as { tokens?: unknown } | null)?.tokens : body;
  return Array.isArray(list) ? list.length : undefined;
}

/** The prompt's tokens as the engine counts them, or undefined when it could not say. */
export async function countWithTokenizer(
  dispatcher: Dispatcher,
  o: {
    readonly kind: TokenizerKind;
    readonly baseUrl: string;
    readonly model: string;
    readonly input: TokenizerInput;
  },
): Promise<number | undefined> {
  const url = new URL(`${engineRoot(o.baseUrl)}/tokenize`);
  try {
    const res = await dispatcher.request({
      origin: url.origin,
      path: url.pathname,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(bodyFor(o.kind, o.model, o.input)),
      headersTimeout: TOKENIZE_TIMEOUT_MS,
      bodyTimeout: TOKENIZE_TIMEOUT_MS,
      signal: AbortSignal.timeout(TOKENIZE_TIMEOUT_MS),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const count = countOf(o.kind, JSON.parse(await boundedText(res.body)) as unknown);
    if (count === undefined) return undefined;
    // vLLM ran the chat template; the others saw the bare text.
    if (o.kind === "vllm" && o.input.messages !== undefined) return count;
    return count + MESSAGE_OVERHEAD_TOKENS * (o.input.messages?.length ?? 0) + TEMPLATE_MARGIN_TOKENS;
  } catch {
    return undefined;
  }
}
