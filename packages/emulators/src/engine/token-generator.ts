/**
 * The emulator's "model": a deterministic, clock-free reply and embedding generator.
 * Same model name and prompt, same tokens; no timers, no sockets, no wire format.
 *
 * Reply length rule: a request that sets a token limit gets exactly that many tokens and finish
 * reason "length"; a request without one gets the model's default `maxTokens` and finish reason
 * "stop". Token i is one word ("word", then " word"): the reply echoes the prompt's words, then
 * continues with lorem words drawn from a PRNG seeded by the model name and the whole prompt.
 * Token counts are whitespace-separated words (plus a fixed overhead per chat message), a
 * stand-in for a real tokenizer.
 */

import { fnv1a32, mulberry32 } from "./prng.js";

export type FinishReason = "stop" | "length";

/** What the generator needs to know about a model. */
export interface ReplyModel {
  readonly name: string;
  /** Tokens produced when the request sets no limit. */
  readonly maxTokens: number;
}

export interface ReplyInput {
  /** The whole prompt as text (all messages); seeds the continuation. */
  readonly promptText: string;
  /** The text the reply starts by echoing (the last user message, or the prompt). */
  readonly echoText: string;
  /** The request's token limit, if it set one. */
  readonly maxTokens?: number | undefined;
}

export interface ReplyPlan {
  readonly completionTokens: number;
  readonly finishReason: FinishReason;
  /** The tokens, lazily: a plan for a million tokens costs nothing until iterated. */
  tokens(): Generator<string, void, undefined>;
}

/** A chat message as the token counter sees it. */
export interface CountedMessage {
  readonly role: string;
  readonly content: string;
}

// prettier-ignore
const LOREM = [
  "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
  "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim",
  "ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi", "aliquip",
];

/** Tokens charged per chat message and for priming the reply (as OpenAI's chat format does). */
export const MESSAGE_OVERHEAD_TOKENS = 3;
export const REPLY_PRIMING_TOKENS = 3;

function words(text: string): string[] {
  return text.match(/\S+/g) ?? [];
}

/** Tokens in a plain text: its whitespace-separated words. */
export function countTextTokens(text: string): number {
  return words(text).length;
}

/** Prompt tokens of a chat: each message's words plus a fixed overhead, plus the reply priming. */
export function countChatTokens(messages: readonly CountedMessage[]): number {
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) total += MESSAGE_OVERHEAD_TOKENS + countTextTokens(message.content);
  return total;
}

/** Plans the reply to one request. */
export function planReply(model: ReplyModel, input: ReplyInput): ReplyPlan {
  const limited = input.maxTokens !== undefined;
  const count = input.maxTokens ?? model.maxTokens;
  const seed = fnv1a32(`${model.name}\u0000${input.promptText}`);
  const echo = words(input.echoText);
  return {
    completionTokens: count,
    finishReason: limited ? "length" : "stop",
    *tokens() {
      const random = mulberry32(seed);
      for (let i = 0; i < count; i++) {
        const word = echo[i] ?? LOREM[Math.floor(random() * LOREM.length)] ?? "lorem";
        yield i === 0 ? word : ` ${word}`;
      }
    },
  };
}

/** The whole reply text of a plan (for non-streaming answers and tests). */
export function replyText(plan: ReplyPlan): string {
  let text = "";
  for (const token of plan.tokens()) text += token;
  return text;
}

/** What the embedder needs to know about a model. */
export interface EmbeddingModel {
  readonly name: string;
  readonly embeddingDimensions: number;
}

/**
 * A deterministic unit-length embedding of `text`. With `dimensions` below the model's, the
 * model's vector is shortened and renormalised (as OpenAI's `dimensions` parameter does).
 * Components are rounded to float32, so the float and base64 encodings carry the same numbers.
 */
export function embedText(
  model: EmbeddingModel,
  text: string,
  dimensions = model.embeddingDimensions,
): number[] {
  const random = mulberry32(fnv1a32(`${model.name}\u0000embed\u0000${text}`));
  const full = Array.from({ length: model.embeddingDimensions }, () => random() * 2 - 1);
  const kept = full.slice(0, dimensions);
  const norm = Math.sqrt(kept.reduce((sum, value) => sum + value * value, 0));
  const scale = norm > 0 ? 1 / norm : 0;
  return kept.map((value) => Math.fround(value * scale));
}

/** Deterministic token ids for a text (Ollama's `context` array). */
export function tokenIds(text: string): number[] {
  return words(text).map((word) => fnv1a32(word) % 32000);
}
