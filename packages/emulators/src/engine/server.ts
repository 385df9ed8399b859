/**
 * The engine emulator as a loopback HTTP (or HTTPS) server around the engine handler: connection
 * tracking so `close()` ends everything at once, and the connection-level fault (refusing
 * connections by closing the listener). Knows no wire shapes and no routes; handler.ts does.
 */

import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { EngineStats } from "./engine-stats.js";
import type { EngineFaults } from "./faults.js";
import { createEngineHandler } from "./handler.js";
import type { EngineEmulatorOptions } from "./options.js";

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
  const engine = createEngineHandler(options);
  const resolved = engine.options;
  const faults = engine.faults;
  const handler = engine.handle;
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
    stats: () => engine.stats(),
    setFaults: async (next) => {
      engine.setFaults(next);
      await applyRefusal();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      engine.close();
      await new Promise<void>((resolve) => {
        if (server.listening) server.close(() => resolve());
        else resolve();
        dropConnections();
      });
    },
  };
}
