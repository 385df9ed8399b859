/**
 * The engine emulator as a loopback HTTP (or HTTPS) server: route dispatch for the chosen
 * dialects, connection tracking so `close()` ends everything at once, and the connection-level
 * fault (refusing connections by closing the listener). Knows no wire shapes; the dialect route
 * modules do.
 */

import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { setMaxListeners } from "node:events";
import { apiKeyAccepted } from "./api-key-guard.js";
import type { EngineContext, Route } from "./engine-context.js";
import { StatsCounters, type EngineStats } from "./engine-stats.js";
import { FaultInjector, type EngineFaults } from "./faults.js";
import { openExchange, sendJson, type Exchange } from "./http-exchange.js";
import { ollamaRoutes, sendOllamaNotFound } from "./ollama-routes.js";
import { openAiRoutes, sendOpenAiNotFound } from "./openai-routes.js";
import { invalidRequest, sendOpenAiError } from "./openai-wire.js";
import { resolveOptions, type EngineApi, type EngineEmulatorOptions } from "./options.js";
import { SlotLimiter } from "./slot-limiter.js";

export interface EngineEmulator {
  /** Base URL without a trailing slash, e.g. "http://127.0.0.1:40123" (OpenAI clients add "/v1"). */
  readonly url: string;
  readonly port: number;
  readonly name: string;
  /** A snapshot of the counters (see EngineStats for what each one means). */
  stats(): EngineStats;
  /** Replaces the whole fault set (`{}` clears it) and restarts the seeded draw sequence. */
  setFaults(faults: EngineFaults): Promise<void>;
  /** Stops listening, ends every request and connection at once. Idempotent. */
  close(): Promise<void>;
}

function routesFor(api: EngineApi): readonly Route[] {
  switch (api) {
    case "openai":
      return openAiRoutes;
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

function dispatch(
  ctx: EngineContext,
  routes: readonly Route[],
  req: IncomingMessage,
  res: ServerResponse,
  shutdown: AbortSignal,
): void {
  res.setHeader("server", ctx.options.name);
  const exchange = openExchange(req, res, shutdown);
  if (!apiKeyAccepted(ctx.options.apiKeys, req, exchange.path)) {
    req.resume();
    return sendJson(res, 401, { error: "Unauthorized" });
  }
  const onPath = routes.filter((route) => matches(route, exchange.path));
  const route = onPath.find((candidate) => candidate.method === req.method);
  if (!route) return sendNoRoute(ctx.options.api, exchange, onPath.length > 0);
  route.handler(ctx, exchange).catch((error: unknown) => {
    // A bug in a handler: answer 500 if nothing went out yet, else drop the connection.
    if (res.headersSent) res.destroy();
    else
      sendJson(res, 500, {
        error: `engine emulator: ${error instanceof Error ? error.message : String(error)}`,
      });
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Starts an engine emulator on loopback; resolves once it listens (or, refusing, holds its port). */
export async function startEngineEmulator(options: EngineEmulatorOptions): Promise<EngineEmulator> {
  const resolved = resolveOptions(options);
  const faults = new FaultInjector(options.faults ?? {});
  const limiter = new SlotLimiter(resolved.maxConcurrent, resolved.whenFull, resolved.maxQueued);
  const stats = new StatsCounters();
  let lastId = 0;
  const ctx: EngineContext = { options: resolved, stats, limiter, faults, nextId: () => ++lastId };
  const routes = routesFor(resolved.api);
  const shutdown = new AbortController();
  // Every open request listens for shutdown: as many listeners as concurrent requests is expected.
  setMaxListeners(0, shutdown.signal);
  const handler = (req: IncomingMessage, res: ServerResponse): void =>
    dispatch(ctx, routes, req, res, shutdown.signal);
  const server: Server = resolved.tls
    ? createHttpsServer({ key: resolved.tls.key, cert: resolved.tls.cert }, handler)
    : createHttpServer(handler);
  const sockets = new Set<Socket>();
  let refusing = false;
  let closed = false;
  server.on("connection", (socket: Socket) => {
    if (refusing || closed) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const dropConnections = (): void => {
    for (const socket of sockets) socket.destroy();
  };

  await listen(server, resolved.port, resolved.host);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : resolved.port;

  /** Makes the listener match the fault set: refusing closes it (and drops connections). */
  const applyRefusal = async (): Promise<void> => {
    if (closed) return;
    if (faults.refuseConnections && !refusing) {
      refusing = true;
      server.close();
      dropConnections();
    } else if (!faults.refuseConnections && refusing) {
      await listen(server, port, resolved.host);
      refusing = false;
    }
  };
  await applyRefusal();

  const host = resolved.host === "::1" ? "[::1]" : resolved.host;
  return {
    url: `${resolved.tls ? "https" : "http"}://${host}:${port}`,
    port,
    name: resolved.name,
    stats: () => stats.snapshot(limiter, faults.seed),
    setFaults: async (next) => {
      faults.set(next);
      await applyRefusal();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      shutdown.abort();
      await new Promise<void>((resolve) => {
        if (server.listening) server.close(() => resolve());
        else resolve();
        dropConnections();
      });
    },
  };
}
