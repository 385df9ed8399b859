/**
 * The engine emulator as a request handler without a socket of its own: route dispatch for the
 * chosen dialects over one shared context (options, slots, counters, faults). The loopback server
 * (server.ts) listens with it; other emulators (the Hugging Face endpoint replicas and router) mount
 * it under a path of theirs by handing it requests whose `url` is relative to the engine.
 * Must not know: listeners, TLS, connection-level faults, or who mounts it.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { setMaxListeners } from "node:events";
import { apiKeyAccepted } from "./api-key-guard.js";
import type { EngineContext, Route } from "./engine-context.js";
import { StatsCounters, type EngineStats } from "./engine-stats.js";
import { FaultInjector, type EngineFaults } from "./faults.js";
import { openExchange, sendJson, type Exchange } from "./http-exchange.js";
import { contextRoutes } from "./context-window.js";
import { ollamaRoutes, sendOllamaNotFound } from "./ollama-routes.js";
import { openAiRoutes, sendOpenAiNotFound } from "./openai-routes.js";
import { invalidRequest, sendOpenAiError } from "./openai-wire.js";
import {
  resolveOptions,
  type EngineApi,
  type EngineEmulatorOptions,
  type ResolvedOptions,
} from "./options.js";
import { SlotLimiter } from "./slot-limiter.js";

export interface EngineHandler {
  readonly options: ResolvedOptions;
  readonly faults: FaultInjector;
  /** Serves one request; `req.url` is the path the engine sees (e.g. "/v1/models"). */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  stats(): EngineStats;
  /** Replaces the whole fault set (`{}` clears it) and restarts the seeded draw sequence. */
  setFaults(faults: EngineFaults): void;
  /** Ends every open request (their signals fire). Idempotent. */
  close(): void;
}

function routesFor(api: EngineApi): readonly Route[] {
  switch (api) {
    case "openai":
      return [...openAiRoutes, ...contextRoutes];
    case "ollama":
      return ollamaRoutes;
    case "both":
      return [...openAiRoutes, ...ollamaRoutes];
  }
}

function matches(route: Route, path: string): boolean {
  return route.prefix ? path.startsWith(route.path) && path.length > route.path.length : path === route.path;
}

/** Unknown path or method, answered in the dialect the path belongs to. */
function sendNoRoute(api: EngineApi, exchange: Exchange, pathKnown: boolean): void {
  const openAiPath = api === "openai" || (api === "both" && exchange.path.startsWith("/v1/"));
  if (!openAiPath) return sendOllamaNotFound(exchange);
  if (!pathKnown) return sendOpenAiNotFound(exchange);
  const method = exchange.req.method ?? "GET";
  sendOpenAiError(exchange.res, 405, invalidRequest(`Invalid method for URL (${method} ${exchange.path})`));
}

/** Builds the handler; throws EmulatorOptionError naming the first bad option. */
export function createEngineHandler(options: EngineEmulatorOptions): EngineHandler {
  const resolved = resolveOptions(options);
  const faults = new FaultInjector(options.faults ?? {});
  const limiter = new SlotLimiter(resolved.maxConcurrent, resolved.whenFull, resolved.maxQueued);
  const stats = new StatsCounters();
  let lastId = 0;
  const ctx: EngineContext = {
    options: resolved,
    stats,
    limiter,
    faults,
    nextId: () => ++lastId,
    loaded: new Map(),
    numCtx: new Map(),
  };
  const routes = routesFor(resolved.api);
  const shutdown = new AbortController();
  // Every open request listens for shutdown: as many listeners as concurrent requests is expected.
  setMaxListeners(0, shutdown.signal);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader("server", resolved.name);
    const exchange = openExchange(req, res, shutdown.signal);
    if (!apiKeyAccepted(resolved.apiKeys, req, exchange.path)) {
      req.resume();
      return sendJson(res, 401, { error: "Unauthorized" });
    }
    const onPath = routes.filter((route) => matches(route, exchange.path));
    const route = onPath.find((candidate) => candidate.method === req.method);
    if (!route) return sendNoRoute(resolved.api, exchange, onPath.length > 0);
    route.handler(ctx, exchange).catch((error: unknown) => {
      // A bug in a handler: answer 500 if nothing went out yet, else drop the connection.
      if (res.headersSent) res.destroy();
      else
        sendJson(res, 500, {
          error: `engine emulator: ${error instanceof Error ? error.message : String(error)}`,
        });
    });
  };

  return {
    options: resolved,
    faults,
    handle,
    stats: () => stats.snapshot(limiter, faults.seed),
    setFaults: (next) => faults.set(next),
    close: () => shutdown.abort(),
  };
}
