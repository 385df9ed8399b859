/**
 * Context windows: what each upstream holds, how long a prompt is, whether one fits the other, and
 * what to do when it does not (skip, raise Ollama's num_ctx, fail over on a context refusal, or
 * refuse with `context_too_long`). docs/context.md is the user's side of it.
 */

export * from "./context-errors.js";
export * from "./model-window.js";
export * from "./ollama-num-ctx.js";
export * from "./prompt-size.js";
export * from "./request-fit.js";
export * from "./route-hooks.js";
export * from "./tokenize.js";
export * from "./window-probe.js";
