/**
 * What forwarding calls at its few context hook points, kept here so the forwarder only calls:
 * the request's fit (made once per request), the tokenizer pass before candidates are chosen (only
 * for a prompt near a window of a local engine that has a tokenizer), the Ollama body with the
 * `num_ctx` the prompt needs, and the route reason recorded when context decided the route.
 * Must not know: how candidates are ordered, sockets, dialect translation.
 */

import type { Dispatcher } from "undici";
import type { DialectRequests, DialectRoute } from "@pair/dialects";
import type { ModelWindow } from "./model-window.js";
import { askedNumCtx, plannedNumCtx, withNumCtx } from "./ollama-num-ctx.js";
import { tokenizerInput } from "./prompt-size.js";
import { RequestFit } from "./request-fit.js";
import { countWithTokenizer } from "./tokenize.js";

/** Why the serving node was chosen, when it was not the usual order. */
export const ROUTE_REASON_HEADER = "x-pair-route-reason";

/** A local engine as the hooks see it (the inventory's EngineState fits). */
export interface WindowedEngine {
  readonly spec: { readonly name: string; readonly baseUrl: string };
  readonly windows?: ReadonlyMap<string, ModelWindow>;
}

export interface WindowedInventory {
  serving(model: string): readonly WindowedEngine[];
}

/** Most tokenizer questions one request asks. */
const MAX_TOKENIZER_CALLS = 2;

export function requestFit(
  fr: { readonly route: DialectRoute; readonly request: DialectRequests[DialectRoute]; readonly raw: Buffer },
  defaultOutputTokens?: number,
): RequestFit {
  return new RequestFit(fr.route, fr.request, fr.raw.length, defaultOutputTokens);
}

/** An engine's window for one model (undefined: not known). */
export function engineWindow(engine: WindowedEngine, model: string): ModelWindow | undefined {
  return engine.windows?.get(model);
}

/**
 * Ask the tokenizers of local engines whose answer could change their verdict; undefined (nothing
 * to await) when none could — every short prompt.
 */
export function refineFit(
  fit: RequestFit,
  inventory: WindowedInventory,
  names: readonly string[],
  dispatcher: Dispatcher,
  fr: { readonly route: DialectRoute; readonly request: DialectRequests[DialectRoute] },
): Promise<void> | undefined {
  const asks: { engine: WindowedEngine; model: string; window: ModelWindow }[] = [];
  for (const model of names)
    for (const engine of inventory.serving(model)) {
      const window = engineWindow(engine, model);
      if (window?.tokenizer !== undefined && asks.length < MAX_TOKENIZER_CALLS && fit.worthCounting(window))
        asks.push({ engine, model, window });
    }
  if (asks.length === 0) return undefined;
  const input = tokenizerInput(fr.route, fr.request);
  if (input === undefined) return undefined;
  return Promise.all(
    asks.map(async ({ engine, model, window }) => {
      const count = await countWithTokenizer(dispatcher, {
        kind: window.tokenizer!,
        baseUrl: engine.spec.baseUrl,
        model,
        input,
      });
      if (count !== undefined) fit.setExact(engine.spec.name, count);
    }),
  ).then(() => undefined);
}

/**
 * `ollamaBody` for the upstream `id` when it is one of this node's engines (peers and rented nodes
 * have ids with a colon and set their own windows): the body itself otherwise.
 */
export function ollamaBodyFor(
  fit: RequestFit,
  inventory: { readonly engines: readonly WindowedEngine[] },
  id: string,
  model: string,
  request: unknown,
  body: string | Buffer,
): string | Buffer {
  if (id.includes(":")) return body;
  let engine: WindowedEngine | undefined;
  for (const e of inventory.engines) if (e.spec.name === id) engine = e;
  return ollamaBody(fit, engine, model, request, body);
}

/**
 * The body for a local Ollama engine: with `options.num_ctx` raised when the prompt would not fit
 * the window the model runs with; the body itself otherwise.
 */
export function ollamaBody(
  fit: RequestFit,
  engine: WindowedEngine | undefined,
  model: string,
  request: unknown,
  body: string | Buffer,
): string | Buffer {
  const window = engine === undefined ? undefined : engineWindow(engine, model);
  if (window?.runningTokens === undefined) return body;
  const asked = askedNumCtx(request);
  // The free bound first: a short prompt that fits as the model runs costs nothing more.
  if (asked === undefined && fit.bound + fit.outputTokens <= window.runningTokens) return body;
  const numCtx = plannedNumCtx(window, fit.promptTokens(engine!.spec.name) + fit.outputTokens, asked);
  return numCtx === undefined ? body : withNumCtx(body, numCtx);
}
