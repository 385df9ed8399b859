/**
 * The cluster port (`cluster_listen`, default 14323): one TCP listener in front of two servers. It
 * waits for a connection's first byte, puts it back (`socket.unshift`) and hands the paused socket
 * over: `0x16` (a TLS handshake record) to the strict mTLS peer server, anything else to the plain
 * handler (the pairing handshake, which is a PAKE and needs no TLS). A connection that sends nothing
 * within `firstByteTimeoutMs` is closed; at most `maxConnections` are open at once.
 * Must not know: what either server does, pairing, routes.
 */

import { channel } from "node:diagnostics_channel";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { HOLDING_RUNTIME } from "../runtime/index.js";
import { checkLimit } from "./cluster-error.js";

export const CLUSTER_PORT_CHANNEL = "pair:cluster:port";
/** The first byte of every TLS connection: the record type of a handshake message. */
export const TLS_HANDSHAKE_RECORD = 0x16;

export interface ClusterPortLimits {
  /** Time for a new connection to send its first byte. */
  readonly firstByteTimeoutMs: number;
  /** TCP connections open at once, of both kinds. */
  readonly maxConnections: number;
}

export const DEFAULT_CLUSTER_PORT_LIMITS: ClusterPortLimits = Object.freeze({
  firstByteTimeoutMs: 10_000,
  maxConnections: 1_024,
});

/** Takes a paused socket whose first bytes were read and put back. */
export type SocketConsumer = (socket: Socket) => void;

export interface ClusterPortOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** Connections that open with a TLS handshake record. */
  readonly tls: SocketConsumer;
  /** Every other connection. */
  readonly plain: SocketConsumer;
  readonly limits?: Partial<ClusterPortLimits>;
}

export interface ClusterPort {
  readonly host: string;
  readonly port: number;
  /** Stop listening and close every connection this port accepted. */
  close(): Promise<void>;
}

/** What the port publishes on `CLUSTER_PORT_CHANNEL`. */
export type ClusterPortEvent = {
  readonly type: "ClusterConnectionDropped";
  readonly reason: "no_first_byte";
  readonly remoteAddress: string | undefined;
};

const events = channel(CLUSTER_PORT_CHANNEL);

export function clusterPortLimits(overrides: Partial<ClusterPortLimits> = {}): ClusterPortLimits {
  const limits = { ...DEFAULT_CLUSTER_PORT_LIMITS, ...overrides };
  checkLimit("firstByteTimeoutMs", limits.firstByteTimeoutMs, 100, 600_000);
  checkLimit("maxConnections", limits.maxConnections, 1, 65_536);
  return Object.freeze(limits);
}

/** Listen on `host:port`. Rejects with the listen error (`EADDRINUSE`, …) as Node reports it. */
export async function startClusterPort(options: ClusterPortOptions): Promise<ClusterPort> {
  const limits = clusterPortLimits(options.limits);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    // Until a server owns the socket, a reset must not become an uncaught error.
    const onEarlyError = (): void => void socket.destroy();
    socket.on("error", onEarlyError);
    const timer = HOLDING_RUNTIME.timers.after(() => {
      if (events.hasSubscribers)
        events.publish({
          type: "ClusterConnectionDropped",
          reason: "no_first_byte",
          remoteAddress: socket.remoteAddress,
        } satisfies ClusterPortEvent);
      socket.destroy();
    }, limits.firstByteTimeoutMs);
    socket.once("close", () => timer.cancel());
    socket.once("data", (chunk: Buffer) => {
      timer.cancel();
      socket.pause();
      socket.unshift(chunk);
      socket.off("error", onEarlyError);
      const consumer = chunk[0] === TLS_HANDSHAKE_RECORD ? options.tls : options.plain;
      consumer(socket);
    });
  });
  server.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      })),
  };
}
