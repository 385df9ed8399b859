/**
 * Never a silent truncation on Ollama: a prompt longer than the `num_ctx` a model runs with is cut
 * by Ollama without an error (it keeps the first `num_keep` tokens and the newest tail). So when a
 * request would not fit the window the model runs with, PAIR sends `options.num_ctx` large enough:
 * the next power of two at or above prompt plus output, at most the model's window (its trained
 * window, or `context_tokens`). A changed `num_ctx` makes Ollama reload the model, so a request that
 * fits as it runs is left alone, and the power of two keeps the values few.
 * Must not know: routing, sockets.
 */

import type { ModelWindow } from "./model-window.js";

/** The `num_ctx` to send, or undefined when the request fits as the model runs (or the client's own suffices). */
export function plannedNumCtx(
  window: ModelWindow,
  need: number,
  asked: number | undefined,
): number | undefined {
  if (window.runningTokens === undefined) return undefined;
  if (asked !== undefined && asked >= need) return undefined;
  if (asked === undefined && need <= window.runningTokens) return undefined;
  let size = Math.max(window.runningTokens, 256);
  while (size < need) size *= 2;
  return Math.min(window.tokens, Math.max(size, asked ?? 0));
}

/** The client's own `options.num_ctx`, if it set one. */
export function askedNumCtx(request: unknown): number | undefined {
  const options = (request as { options?: { num_ctx?: unknown } } | null)?.options;
  const n = options?.num_ctx;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** An Ollama request body with `options.num_ctx` set (the rest unchanged). */
export function withNumCtx(body: string | Buffer, numCtx: number): string {
  const parsed = JSON.parse(typeof body === "string" ? body : body.toString("utf8")) as Record<
    string,
    unknown
  >;
  const options = parsed["options"];
  parsed["options"] = {
    ...(typeof options === "object" && options !== null ? options : {}),
    num_ctx: numCtx,
  };
  return JSON.stringify(parsed);
}
