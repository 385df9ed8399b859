/**
 * The plain-HTTP side of the cluster port: the responder of PIN pairing. It serves exactly one
 * route, `POST /pair/v1/handshake` (bounded body, JSON envelopes of pairing-wire.ts), and answers
 * 404 with nothing but the node's name to anything else. One connection carries one pairing: the
 * hello and the confirm must come on the same connection; when it drops half-way the responder
 * aborts, which spends one attempt of the PIN. Each connection lives at most
 * `connectionLifetimeMs`, and at most `maxConnections` are open at once (more are closed at once).
 * On success it pins the initiator's certificate — exactly the one that came with the hello.
 * Must not know: the mTLS peer server, the admin API, where the PIN is shown.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import {
  checkLimit,
  type NodeCertificate,
  type PinRequest,
  type PinResult,
  pairingError,
  refusalMessage,
  ResponderPairing,
  type PairingError,
  type PairingIdentity,
  type PinIssuer,
  type RandomBytes,
  type Runtime,
} from "@pair/cluster";
import { readBody } from "../http/request-body.js";
import { envelopeText, HANDSHAKE_PATH, MAX_ENVELOPE_BYTES, readEnvelope } from "./pairing-wire.js";

export interface PairingServerLimits {
  /** Pairing connections open at once. */
  readonly maxConnections: number;
  /** Longest life of one pairing connection, whatever it does. */
  readonly connectionLifetimeMs: number;
}

export const DEFAULT_PAIRING_SERVER_LIMITS: PairingServerLimits = Object.freeze({
  maxConnections: 8,
  connectionLifetimeMs: 40_000,
});

/** What the pairing server reports (never the PIN). */
export type PairingServerEvent =
  | { readonly type: "PairedByPin"; readonly nodeId: string; readonly name: string }
  | { readonly type: "PairingRefused"; readonly code: string; readonly message: string };

export interface PairingServerOptions {
  /** This node as pairing names it. */
  readonly self: PairingIdentity;
  /** Sent with `pair.share`. */
  readonly certPem: string;
  readonly issuer: PinIssuer;
  /** Trust the initiator (the node's pinned-peers store). */
  readonly pinPeer: (request: PinRequest) => PinResult;
  /** PINs expire in its wall time; its timers bound a connection's lifetime. */
  readonly runtime: Runtime;
  readonly randomBytes: RandomBytes;
  readonly onEvent?: (event: PairingServerEvent) => void;
  readonly limits?: Partial<PairingServerLimits>;
}

export interface PairingServer {
  /** Serve one connection handed over by the cluster port (paused, first bytes put back). */
  accept(socket: Socket): void;
  /** Close every pairing connection (a pairing half-way is aborted). */
  close(): void;
}

interface Session {
  readonly responder: ResponderPairing;
  readonly cert: NodeCertificate;
  /** Where the initiator's cluster port is: this connection's remote IP and the port its hello gave. */
  readonly address: string | undefined;
}

export function createPairingServer(options: PairingServerOptions): PairingServer {
  const limits = { ...DEFAULT_PAIRING_SERVER_LIMITS, ...options.limits };
  checkLimit("maxConnections", limits.maxConnections, 1, 1_024);
  checkLimit("connectionLifetimeMs", limits.connectionLifetimeMs, 100, 600_000);
  const sessions = new WeakMap<Socket, Session>();
  const sockets = new Set<Socket>();
  const notFound = JSON.stringify({ node: options.self.name });
  const handshake = handshaker(options, sessions);

  const server = createServer(
    {
      maxHeaderSize: 8 * 1024,
      headersTimeout: 5_000,
      requestTimeout: 10_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method !== "POST" || path !== HANDSHAKE_PATH) {
        req.resume();
        return send(res, 404, notFound);
      }
      void handshake(req, res).catch(() => res.destroy());
    },
  );
  // Never listening (the cluster port hands it connections), but "listening" starts Node's checks
  // of headersTimeout and requestTimeout.
  server.emit("listening");

  return {
    accept(socket) {
      if (sockets.size >= limits.maxConnections) {
        socket.destroy();
        return;
      }
      sockets.add(socket);
      const lifetime = options.runtime.timers.after(() => socket.destroy(), limits.connectionLifetimeMs);
      socket.once("close", () => {
        lifetime.cancel();
        sockets.delete(socket);
        const session = sessions.get(socket);
        sessions.delete(socket);
        session?.responder.abort(options.runtime.clock.now().wallMs);
      });
      server.emit("connection", socket);
      // Node's HTTP server does not resume a paused socket by itself.
      process.nextTick(() => socket.resume());
    },
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * One handshake request on a connection: the hello (its share back) or the confirm (the initiator
 * pinned, the reply back). Any refusal ends the connection's pairing.
 */
function handshaker(
  options: PairingServerOptions,
  sessions: WeakMap<Socket, Session>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function handshake(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const socket = req.socket;
    const body = await readBody(req, MAX_ENVELOPE_BYTES);
    if (!body.ok) return refuse(res, 400, pairingError("malformed_message", body.message));
    const envelope = readEnvelope(body.bytes.toString("utf8"));
    const session = sessions.get(socket);
    if (session === undefined) {
      if (!envelope.ok) return refuse(res, 400, envelope.error);
      const cert = envelope.value.cert;
      if (cert === undefined)
        return refuse(res, 400, pairingError("malformed_message", "pair.hello must carry cert"));
      const responder = new ResponderPairing({
        self: options.self,
        issuer: options.issuer,
        peerFingerprint: cert.fingerprint,
        randomBytes: options.randomBytes,
      });
      const share = responder.receive(envelope.value.message, options.runtime.clock.now().wallMs);
      if (!share.ok) return refuse(res, 200, share.error);
      sessions.set(socket, { responder, cert, address: peerAddress(socket, envelope.value.clusterPort) });
      return send(res, 200, envelopeText(share.value, options.certPem));
    }
    sessions.delete(socket);
    if (!envelope.ok || envelope.value.cert !== undefined) {
      session.responder.abort(options.runtime.clock.now().wallMs);
      const error = envelope.ok ? pairingError("pairing_failed", "a second hello") : envelope.error;
      return refuse(res, envelope.ok ? 200 : 400, error);
    }
    const done = session.responder.finish(envelope.value.message, options.runtime.clock.now().wallMs);
    if (!done.ok) return refuse(res, 200, done.error);
    const pinned = options.pinPeer({
      name: done.value.peer.name,
      certPem: session.cert.pem,
      ...(session.address === undefined ? {} : { address: session.address }),
    });
    if (!pinned.ok) return refuse(res, 200, pairingError("pairing_failed", `cannot pin: ${pinned.message}`));
    options.onEvent?.({ type: "PairedByPin", nodeId: pinned.peer.node_id, name: pinned.peer.name });
    res.setHeader("connection", "close");
    send(res, 200, envelopeText(done.value.reply));
  };

  /** Answers with `pair.refused` and closes the connection: its pairing, if any, is over. */
  function refuse(res: ServerResponse, status: number, error: PairingError): void {
    options.onEvent?.({ type: "PairingRefused", code: error.code, message: error.message });
    res.setHeader("connection", "close");
    send(res, status, envelopeText(refusalMessage(error)));
  }
}

/** `IP:PORT` (`[v6]:PORT`) of the initiator's cluster port, when its hello gave the port. */
function peerAddress(socket: Socket, clusterPort: number | undefined): string | undefined {
  const ip = socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  if (ip === undefined || clusterPort === undefined) return undefined;
  return ip.includes(":") ? `[${ip}]:${clusterPort}` : `${ip}:${clusterPort}`;
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
  });
  res.end(text);
}
