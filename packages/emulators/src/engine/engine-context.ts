/**
 * What every route handler can reach (options, counters, slots, faults, ids), the shape of a
 * route, and the pipeline's own refusals that each dialect renders in its error shape.
 * Types only, plus model lookup by name; knows no wire format.
 */

import type { ServerResponse } from "node:http";
import type { StatsCounters } from "./engine-stats.js";
import type { FaultInjector } from "./faults.js";
import type { Exchange } from "./http-exchange.js";
import type { ResolvedModel, ResolvedOptions } from "./options.js";
import type { SlotLimiter } from "./slot-limiter.js";

export interface EngineContext {
  readonly options: ResolvedOptions;
  readonly stats: StatsCounters;
  readonly limiter: SlotLimiter;
  readonly faults: FaultInjector;
  /** Sequential ids (1, 2, …) for response and request ids: deterministic per emulator. */
  nextId(): number;
  /** Ollama's loaded models: name → wall time (ms) of its last request, for /api/ps. */
  readonly loaded: Map<string, number>;
  /** Ollama: the `num_ctx` each model was last loaded with (a request's `options.num_ctx`). */
  readonly numCtx: Map<string, number>;
}

export type RouteHandler = (ctx: EngineContext, exchange: Exchange) => Promise<void>;

export interface Route {
  readonly method: "GET" | "POST" | "HEAD";
  /** Exact path, or a prefix ending in "/" when `prefix` is set. */
  readonly path: string;
  readonly prefix?: boolean;
  readonly handler: RouteHandler;
}

/** A refusal the pipeline itself produces; each dialect renders it in its own error shape. */
export type EngineFailure =
  { readonly kind: "overloaded" } | { readonly kind: "injected"; readonly status: number };
export type FailureWriter = (res: ServerResponse, failure: EngineFailure) => void;

/** Ollama's name for a model: a name without a tag means the tag "latest". */
export function ollamaName(name: string): string {
  return name.includes(":") ? name : `${name}:latest`;
}

/**
 * Finds a model by the name a request gave. Ollama routes accept `x` for `x:latest` (as Ollama
 * does); OpenAI routes need the exact configured name, except when the emulator plays Ollama
 * ("both"), whose /v1 routes accept the same aliases.
 */
export function findModel(
  ctx: EngineContext,
  requested: string,
  dialect: "openai" | "ollama",
): ResolvedModel | undefined {
  const exact = ctx.options.models.find((model) => model.name === requested);
  if (exact || (dialect === "openai" && ctx.options.api !== "both")) return exact;
  const wanted = ollamaName(requested);
  return ctx.options.models.find((model) => ollamaName(model.name) === wanted);
}
