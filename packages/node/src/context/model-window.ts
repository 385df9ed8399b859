/**
 * A model's context window as routing reads it, and how each engine kind states it on the wire:
 * Ollama `/api/show` (`<arch>.context_length`, a Modelfile `num_ctx`) and `/api/ps`
 * (`context_length`, the window a loaded model runs with), vLLM `max_model_len` in `/v1/models`,
 * llama.cpp `/props` (`default_generation_settings.n_ctx`, per slot), TGI `/info`
 * (`max_input_tokens`, `max_total_tokens`; `max_input_length` before v2.1), LM Studio's
 * `max_context_length`. A configured `context_tokens` overrides what the engine says.
 * Pure: no I/O (window-probe.ts asks), no routing (request-fit.ts decides).
 */

import type { ContextTokensConfig } from "../config/index.js";
import { isRecord } from "@pair/dialects";

export type { ContextTokensConfig };

/** Which engine endpoint counts a prompt's tokens exactly for this window's engine. */
export type TokenizerKind = "vllm" | "llamacpp" | "tgi";

/** Where a window was read. */
export type WindowSource = "config" | "ollama" | "max_model_len" | "n_ctx" | "tgi_info" | "lmstudio" | "peer";

export interface ModelWindow {
  /** Tokens the model holds for prompt plus output, as far as PAIR may use them. */
  readonly tokens: number;
  /** Largest prompt alone, where the engine caps it apart from the total (TGI's max_input_tokens). */
  readonly maxInputTokens?: number;
  /**
   * Ollama: the window the model runs with now (its `num_ctx`). PAIR raises `num_ctx` per request
   * up to `tokens` when a prompt needs more (ollama-num-ctx.ts).
   */
  readonly runningTokens?: number;
  readonly source: WindowSource;
  /** The engine's tokenizer endpoint, when it has one. */
  readonly tokenizer?: TokenizerKind;
}

/** Ollama's `num_ctx` when neither the request, the Modelfile nor `/api/ps` says (its default since v0.6.7). */
export const OLLAMA_DEFAULT_NUM_CTX = 4096;

/** A plausible window: a positive safe integer. */
export function isWindow(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/** `/api/show`: the trained window (`<general.architecture>.context_length`) and a Modelfile `num_ctx`. */
export function ollamaShowWindow(body: unknown): { trained?: number; modelfileNumCtx?: number } {
  if (!isRecord(body)) return {};
  const info = body["model_info"];
  let trained: number | undefined;
  if (isRecord(info)) {
    const arch = info["general.architecture"];
    const byArch = typeof arch === "string" ? info[`${arch}.context_length`] : undefined;
    if (isWindow(byArch)) trained = byArch;
    else
      for (const [key, value] of Object.entries(info))
        if (key.endsWith(".context_length") && isWindow(value)) trained = value;
  }
  const params = body["parameters"];
  const match = typeof params === "string" ? /^num_ctx\s+(\d+)\s*$/m.exec(params) : null;
  const numCtx = match === null ? undefined : Number(match[1]);
  return {
    ...(trained === undefined ? {} : { trained }),
    ...(isWindow(numCtx) ? { modelfileNumCtx: numCtx } : {}),
  };
}

/** `/api/ps`: each loaded model's window now (`context_length`, Ollama v0.10+). */
export function ollamaPsWindows(body: unknown): Map<string, number> {
  const out = new Map<string, number>();
  const models = isRecord(body) ? body["models"] : undefined;
  if (!Array.isArray(models)) return out;
  for (const m of models as unknown[]) {
    if (!isRecord(m)) continue;
    const name = m["name"] ?? m["model"];
    if (typeof name === "string" && isWindow(m["context_length"])) out.set(name, m["context_length"]);
  }
  return out;
}

/**
 * An Ollama model's window: the trained one, capped by `context_tokens`. With `raise` (PAIR may set
 * `num_ctx`) that is what it holds; without, only what it runs with.
 */
export function ollamaWindow(o: {
  readonly trained?: number;
  readonly modelfileNumCtx?: number;
  readonly loadedNumCtx?: number;
  readonly override?: number;
  readonly raise: boolean;
}): ModelWindow | undefined {
  const cap = o.override ?? o.trained;
  // A request without num_ctx runs with the Modelfile's or the default, whatever /api/ps shows now
  // (a loaded value may be another request's num_ctx, and the next request reloads without it);
  // /api/ps only lowers it (an older default, or a window shrunk on load).
  const configured = o.modelfileNumCtx ?? OLLAMA_DEFAULT_NUM_CTX;
  const running = o.loadedNumCtx === undefined ? configured : Math.min(o.loadedNumCtx, configured);
  if (cap === undefined) return undefined;
  const runningTokens = Math.min(running, cap);
  return {
    tokens: o.raise ? cap : runningTokens,
    runningTokens,
    source: o.override === undefined ? "ollama" : "config",
  };
}

/** `/props` of llama.cpp's server: the per-slot window (`default_generation_settings.n_ctx`, or a top-level `n_ctx`). */
export function llamaCppPropsWindow(body: unknown): number | undefined {
  if (!isRecord(body)) return undefined;
  const settings = body["default_generation_settings"];
  const nCtx = isRecord(settings) ? settings["n_ctx"] : undefined;
  if (isWindow(nCtx)) return nCtx;
  return isWindow(body["n_ctx"]) ? body["n_ctx"] : undefined;
}

/** `/info` of TGI: total and input caps (v2.1+), or `max_input_length` (older). */
export function tgiInfoWindow(body: unknown): { total: number; input?: number } | undefined {
  if (!isRecord(body) || typeof body["model_id"] !== "string") return undefined;
  const total = body["max_total_tokens"];
  const input = body["max_input_tokens"] ?? body["max_input_length"];
  if (!isWindow(total)) return undefined;
  return isWindow(input) ? { total, input } : { total };
}

/** LM Studio's `/api/v0/models` item: the loaded window, else the model's maximum. */
export function lmStudioWindow(entry: unknown): number | undefined {
  if (!isRecord(entry)) return undefined;
  const loaded = entry["loaded_context_length"];
  if (isWindow(loaded)) return loaded;
  return isWindow(entry["max_context_length"]) ? entry["max_context_length"] : undefined;
}

/** A window stated by one number (config, a peer, a rented node's listing). */
export function plainWindow(tokens: number, source: WindowSource, tokenizer?: TokenizerKind): ModelWindow {
  return tokenizer === undefined ? { tokens, source } : { tokens, source, tokenizer };
}

/** Lives beside `ContextTokensConfig` in the sponsor, whose rented view reads it too. */
export { configuredWindow } from "@pair/sponsor";

/** The largest of some windows (undefined when none is known). */
export function largest(windows: Iterable<number | undefined>): number | undefined {
  let best: number | undefined;
  for (const w of windows) if (w !== undefined && (best === undefined || w > best)) best = w;
  return best;
}
