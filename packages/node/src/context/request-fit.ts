/**
 * Whether a candidate's context window can hold one request: its prompt plus the output it asks for
 * (or `defaultOutputTokens` when it sets no limit). One `RequestFit` per request, asked once per
 * candidate; a short prompt is answered from the free bound (its body's bytes, prompt-size.ts) with
 * one comparison, and only a prompt near a window is estimated, once. Exact counts from an engine's
 * tokenizer, where one was asked (tokenize.ts), replace the estimate for that engine. The windows
 * of the candidates skipped are kept for the route reason and for `context_too_long`.
 * Must not know: how windows are discovered, how requests are sent.
 */

import type { DialectRequests, DialectRoute, PairError } from "@pair/dialects";
import type { ModelWindow } from "./model-window.js";
import { estimatePromptTokens, promptUpperBound, requestedOutputTokens } from "./prompt-size.js";

/** Output reserved for a request that sets no limit (`max_tokens`, `num_predict`). */
export const DEFAULT_OUTPUT_TOKENS = 1024;

/** A window as a candidate states it: the full shape (engines) or one number (peers, rented nodes). */
export type WindowLike = ModelWindow | number | undefined;

interface Skip {
  readonly label: string;
  readonly tokens: number;
  readonly rerouted: boolean;
}

export class RequestFit {
  /** Output reserved: what the request asks, or the default. */
  readonly outputTokens: number;
  readonly #route: DialectRoute;
  readonly #request: DialectRequests[DialectRoute];
  readonly #bound: number;
  #estimate: number | undefined = undefined;
  readonly #exact = new Map<string, number>();
  /**
   * Candidates skipped or refused, by id: label, window, and whether that changed the route (a LAN
   * candidate, or a refusal; a rented node skipped while the LAN serves changes nothing).
   */
  readonly #skipped = new Map<string, Skip>();

  constructor(
    route: DialectRoute,
    request: DialectRequests[DialectRoute],
    bodyBytes: number,
    defaultOutputTokens: number = DEFAULT_OUTPUT_TOKENS,
  ) {
    this.#route = route;
    this.#request = request;
    this.#bound = promptUpperBound(bodyBytes);
    this.outputTokens = requestedOutputTokens(route, request) ?? defaultOutputTokens;
  }

  /** The free bound on the prompt's tokens. */
  get bound(): number {
    return this.#bound;
  }

  /** The estimate, computed on first use. */
  estimate(): number {
    return (this.#estimate ??= Math.min(estimatePromptTokens(this.#route, this.#request), this.#bound));
  }

  /** The estimate if one was needed so far (what history records), else undefined. */
  get estimated(): number | undefined {
    if (this.#estimate === undefined) return undefined;
    let exact: number | undefined;
    for (const n of this.#exact.values()) exact = Math.max(exact ?? 0, n);
    return exact ?? this.#estimate;
  }

  /** Prompt tokens as this candidate counts them: its tokenizer's count, else the estimate. */
  promptTokens(id: string): number {
    return this.#exact.get(id) ?? this.estimate();
  }

  /** An engine's tokenizer counted the prompt (template overhead included by the caller). */
  setExact(id: string, tokens: number): void {
    this.#exact.set(id, tokens);
  }

  /**
   * Whether `window` holds the request. An unknown window holds everything: the engine's own refusal
   * is then the backstop (context-errors.ts). A candidate that does not is remembered as skipped.
   */
  holds(window: WindowLike, id: string, label: string): boolean {
    if (window === undefined) return true;
    const tokens = typeof window === "number" ? window : window.tokens;
    const maxInput = typeof window === "number" ? undefined : window.maxInputTokens;
    const out = this.outputTokens;
    if (this.#bound + out <= tokens && (maxInput === undefined || this.#bound <= maxInput)) return true;
    const prompt = this.promptTokens(id);
    if (prompt + out <= tokens && (maxInput === undefined || prompt <= maxInput)) return true;
    const held = maxInput === undefined ? tokens : Math.min(tokens, maxInput + out);
    this.#skipped.set(id, { label, tokens: held, rerouted: !id.startsWith("rented:") });
    return false;
  }

  /**
   * Whether an exact count could change this window's answer: the estimate says it does not fit, but
   * a prompt of half the estimate would (the estimate errs high by up to about 2× on prose).
   */
  worthCounting(window: ModelWindow): boolean {
    const out = this.outputTokens;
    if (this.#bound + out <= window.tokens) return false;
    const e = this.estimate();
    return e + out > window.tokens && e / 2 + out <= window.tokens;
  }

  /** An engine refused the request for its length (its window, when it said). */
  refused(id: string, label: string, windowTokens: number | undefined): void {
    const known = this.#skipped.get(id)?.tokens;
    this.#skipped.set(id, { label, tokens: windowTokens ?? known ?? 0, rerouted: true });
  }

  /** Some candidate was skipped or refused for its window. */
  get skippedAny(): boolean {
    return this.#skipped.size > 0;
  }

  /** Windows changed the route: a LAN candidate was skipped, or an engine refused the prompt. */
  get decided(): boolean {
    for (const s of this.#skipped.values()) if (s.rerouted) return true;
    return false;
  }

  /** The skipped candidate with the largest window. */
  largestSkipped(): { readonly label: string; readonly tokens: number } | undefined {
    let best: Skip | undefined;
    for (const s of this.#skipped.values()) if (best === undefined || s.tokens > best.tokens) best = s;
    return best;
  }

  /** The error when no candidate can hold the request. */
  tooLong(model: string, node: string): PairError {
    const largest = this.largestSkipped();
    const prompt = this.estimated ?? this.estimate();
    const where =
      largest === undefined || largest.tokens === 0
        ? "no node states a larger one"
        : `the largest context window in the cluster for "${model}" is ${largest.tokens} tokens (${largest.label})`;
    return {
      code: "context_too_long",
      message:
        `the prompt is about ${prompt} tokens and asks for up to ${this.outputTokens} more; ${where}. ` +
        "Shorten the prompt or max_tokens, or serve the model where a larger window fits (docs/context.md)",
      node,
    };
  }
}
