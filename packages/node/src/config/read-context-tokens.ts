/**
 * `context_tokens` on an engine or a rented node: the context window PAIR assumes instead of the one
 * the engine states — one number for every model it serves, or a mapping by model name with `"*"`
 * for the rest (`context_tokens: { "llama3.1:8b": 32768, "*": 8192 }`).
 * Must not know: YAML, what a window is used for.
 */

import type { ContextTokensConfig } from "./config-types.js";
import type { Section } from "./field-reader.js";

/** Smallest and largest window accepted (a window under 256 tokens is a typo). */
const MIN_CONTEXT_TOKENS = 256;
const MAX_CONTEXT_TOKENS = 1 << 30;
const MAX_MODELS = 1_024;

function isTokens(value: unknown): value is number {
  return (
    typeof value === "number" &&
    Number.isInteger(value) &&
    value >= MIN_CONTEXT_TOKENS &&
    value <= MAX_CONTEXT_TOKENS
  );
}

export function readContextTokens(entry: Section): ContextTokensConfig | undefined {
  const value = entry.raw("context_tokens");
  if (value === undefined) return undefined;
  const problem = `a whole number of tokens from ${MIN_CONTEXT_TOKENS} to ${MAX_CONTEXT_TOKENS}, or a mapping of model names (and "*") to one`;
  if (typeof value === "number") {
    if (isTokens(value)) return value;
    entry.report("context_tokens", "invalid_value", `expected ${problem}`);
    return undefined;
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    entry.report("context_tokens", "invalid_type", `expected ${problem}`);
    return undefined;
  }
  const byModel: Record<string, number> = {};
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || entries.length > MAX_MODELS) {
    entry.report("context_tokens", "invalid_value", `expected 1 to ${MAX_MODELS} models`);
    return undefined;
  }
  for (const [model, tokens] of entries) {
    if (!isTokens(tokens)) {
      entry.report("context_tokens", "invalid_value", `${model}: expected ${problem}`);
      return undefined;
    }
    byModel[model] = tokens;
  }
  return byModel;
}
