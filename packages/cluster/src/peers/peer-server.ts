/**
 * The peer port (`cluster_listen`, default 14323): HTTPS over TLS 1.3 only, a client certificate
 * required and verified against the pinned, non-revoked peer certificates (each self-signed, so
 * each its own trust anchor). Defence in depth: the certificate a connection presents must also be a
 * pin by fingerprint — checked when the handshake completes, before HTTP reads anything, and again
 * at every request. `syncPins()` re-applies the pinned set to the TLS context and closes the open
 * connections of peers no longer pinned; it is level-triggered, so calling it too often is harmless.
 * Refusals and closings are published on the diagnostics channel `PEER_SERVER_CHANNEL`.
 *
 * HTTP/1.1 and HTTP/2, chosen per connection by ALPN (peer-h2.ts forwards over HTTP/2: one
 * connection for all of a peer's streams). Over HTTP/2 the handler gets Node's compatibility
 * request and response (`Http2ServerRequest`/`Http2ServerResponse`), which have the parts of
 * IncomingMessage/ServerResponse the handlers use (headers, method, url, `data`/`end`/`aborted`,
 * writeHead, write with `drain`, end, cork, `close`, destroy). The HTTP/1.1 limits below
 * (headers, request and keep-alive timeouts) are HTTP/1.1's; an HTTP/2 connection with no stream
 * open is closed after `keepAliveTimeoutMs` without traffic. Either way nothing is read before the
 * client's certificate is checked against the pins.
 * `createPeerServer` has no listener of its own: the cluster port (cluster-port.ts) hands it the
 * connections that open with a TLS record. `startPeerServer` is the same server on a port of its own.
 * Must not know: routes (the handler's), pairing, discovery, what peers ask for.
 */

import { channel } from "node:diagnostics_channel";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createH2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type ServerHttp2Session,
} from "node:http2";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import {
  createServer as createTlsServer,
  type PeerCertificate,
  type Server as TlsServer,
  type TLSSocket,
} from "node:tls";
import { checkLimit } from "./cluster-error.js";
import type { NodeIdentity } from "./identity.js";
import { fingerprintOfDer } from "./node-certificate.js";
import { PEER_H2_END_TRAILER } from "./peer-h2.js";
import type { PinnedPeerView } from "./pinned-peers.js";

export const PEER_SERVER_CHANNEL = "pair:cluster:peer-server";

/** nghttp2's memory for one HTTP/2 session (MB); past it, new streams are refused. Node's default is 10. */
const H2_MAX_SESSION_MEMORY_MB = 64;
/** An HTTP/2 connection's receive window: request bodies of many streams at once. */
const H2_CONNECTION_WINDOW_BYTES = 16 * 2 ** 20;

/** The peer a request comes from, authenticated by its pinned certificate. */
export interface AuthenticatedPeer {
  readonly nodeId: string;
  readonly name: string;
  readonly fingerprint: string;
}

export type PeerHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  peer: AuthenticatedPeer,
) => void | Promise<void>;

export interface PeerServerLimits {
  /** Time for a TLS handshake to complete. */
  readonly handshakeTimeoutMs: number;
  /** Time for a request's headers to arrive (at most `requestTimeoutMs`). */
  readonly headersTimeoutMs: number;
  /** Time for a whole request (not its response) to arrive. */
  readonly requestTimeoutMs: number;
  /** Idle time before a keep-alive connection is closed. */
  readonly keepAliveTimeoutMs: number;
  /** Connections open at once, handshakes included. */
  readonly maxConnections: number;
}

export const DEFAULT_PEER_SERVER_LIMITS: PeerServerLimits = Object.freeze({
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1_024,
});

export interface PeerServerOptions {
  readonly identity: NodeIdentity;
  readonly peers: PinnedPeerView;
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly handler: PeerHandler;
  readonly limits?: Partial<PeerServerLimits>;
}

/** What `createPeerServer` needs: everything but an address. */
export type PeerServerCoreOptions = Omit<PeerServerOptions, "host" | "port">;

/** The peer server without a listener: it serves the TCP connections it is handed. */
export interface PeerServerCore {
  /**
   * Serve one TCP connection. Its first bytes may already have been read and put back with
   * `socket.unshift` (the TLS layer reads them first); the socket may be paused.
   */
  accept(socket: Socket): void;
  /** Apply the current pinned set: new TLS context, and close connections of peers no longer pinned. */
  syncPins(): void;
  /** Close every connection at once (in-flight requests are cut). */
  close(): Promise<void>;
}

export interface PeerServer {
  readonly host: string;
  readonly port: number;
  /** Apply the current pinned set: new TLS context, and close connections of peers no longer pinned. */
  syncPins(): void;
  /** Stop listening and close every connection at once (in-flight requests are cut). */
  close(): Promise<void>;
}

/** What the peer server publishes on `PEER_SERVER_CHANNEL`. Never key material. */
export type PeerServerEvent =
  | {
      readonly type: "PeerConnectionRefused";
      readonly reason: "not_pinned" | "handshake_failed";
      readonly remoteAddress: string | undefined;
      /** The presented certificate's fingerprint, when one was presented. */
      readonly fingerprint?: string;
      /** The TLS error code, for `handshake_failed`. */
      readonly errorCode?: string;
    }
  | { readonly type: "PeerConnectionsClosed"; readonly fingerprint: string; readonly count: number }
  | { readonly type: "PeerHandlerFailed"; readonly nodeId: string; readonly error: unknown };

const events = channel(PEER_SERVER_CHANNEL);

function publish(event: PeerServerEvent): void {
  if (events.hasSubscribers) events.publish(event);
}

export function peerServerLimits(overrides: Partial<PeerServerLimits> = {}): PeerServerLimits {
  const limits = { ...DEFAULT_PEER_SERVER_LIMITS, ...overrides };
  const hourMs = 3_600_000;
  checkLimit("handshakeTimeoutMs", limits.handshakeTimeoutMs, 100, hourMs);
  checkLimit("requestTimeoutMs", limits.requestTimeoutMs, 100, 24 * hourMs);
  checkLimit("headersTimeoutMs", limits.headersTimeoutMs, 100, limits.requestTimeoutMs);
  checkLimit("keepAliveTimeoutMs", limits.keepAliveTimeoutMs, 100, hourMs);
  checkLimit("maxConnections", limits.maxConnections, 1, 65_536);
  return Object.freeze(limits);
}

/** The fingerprint of the certificate the other side presented, if any. */
function presentedFingerprint(socket: TLSSocket): string | undefined {
  const raw = (socket.getPeerCertificate() as Partial<PeerCertificate>).raw;
  return raw instanceof Uint8Array && raw.length > 0 ? fingerprintOfDer(raw) : undefined;
}

/** The peer server on a port of its own. */
export async function startPeerServer(options: PeerServerOptions): Promise<PeerServer> {
  const limits = peerServerLimits(options.limits);
  const core = createPeerServer(options);
  const listener = createNetServer((socket) => core.accept(socket));
  listener.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port, options.host, () => {
      listener.off("error", reject);
      resolve();
    });
  });
  const address = listener.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    syncPins: () => core.syncPins(),
    async close() {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      await core.close();
      await closed;
    },
  };
}

/** The peer server, fed connections by its caller (see `PeerServerCore`). */
export function createPeerServer(options: PeerServerCoreOptions): PeerServerCore {
  const { identity, peers } = options;
  const limits = peerServerLimits(options.limits);
  // Always an array: with `ca` absent, Node would trust its bundled public CAs instead.
  const secureContext = () => ({
    key: identity.privateKeyPem.reveal(),
    cert: identity.certPem,
    ca: peers.active().map((peer) => peer.cert_pem),
    minVersion: "TLSv1.3" as const,
  });
  const tlsServer = createTlsServer({
    ...secureContext(),
    requestCert: true,
    rejectUnauthorized: true,
    handshakeTimeout: limits.handshakeTimeoutMs,
    ALPNProtocols: ["h2", "http/1.1"],
  });
  const connections: PeerConnections = {
    admitted: new WeakMap(),
    sessions: new WeakMap(),
    live: new Map(),
    sockets: new Set(),
  };
  const serve = requestServer(peers, options.handler);
  const h1 = createH1(limits, connections, serve);
  const h2 = createH2(limits, connections, serve);
  watchTls(tlsServer, peers, connections, (socket) =>
    (socket.alpnProtocol === "h2" ? h2 : h1).emit("connection", socket),
  );

  return {
    accept(socket) {
      if (connections.sockets.size >= limits.maxConnections) {
        socket.destroy();
        return;
      }
      socket.setNoDelay(true);
      tlsServer.emit("connection", socket);
    },
    syncPins() {
      tlsServer.setSecureContext(secureContext());
      closeUnpinned(peers, connections.live);
    },
    close() {
      return new Promise<void>((resolve) => {
        // Not listening, so close() only stops the timeout checks and reports ERR_SERVER_NOT_RUNNING.
        h1.close(() => resolve());
        for (const socket of connections.sockets) socket.destroy();
      });
    },
  };
}

/** What one peer server knows of its connections. */
interface PeerConnections {
  /** The fingerprint each admitted connection presented. */
  readonly admitted: WeakMap<Socket, string>;
  /** The fingerprint of each HTTP/2 session's connection (its `socket` is a proxy, not the socket). */
  readonly sessions: WeakMap<Http2Session, string>;
  /** Admitted connections by fingerprint, to close a peer's connections when it is no longer pinned. */
  readonly live: Map<string, Set<TLSSocket>>;
  /** Every TCP connection, handshakes included, for close(). */
  readonly sockets: Set<Socket>;
}

/** Serves one request from the connection that presented `fingerprint`; `refuse` cuts it. */
type ServeRequest = (
  fingerprint: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  refuse: () => void,
) => void;

/** Checks the request's peer against the pins again, then runs the handler, answering 500 when it throws. */
function requestServer(peers: PinnedPeerView, handler: PeerHandler): ServeRequest {
  return (fingerprint, req, res, refuse) => {
    const pinned = fingerprint === undefined ? undefined : peers.findActive(fingerprint);
    if (pinned === undefined) {
      refuse();
      return;
    }
    const peer: AuthenticatedPeer = Object.freeze({
      nodeId: pinned.node_id,
      name: pinned.name,
      fingerprint: pinned.fingerprint,
    });
    const failed = (error: unknown): void => {
      publish({ type: "PeerHandlerFailed", nodeId: peer.nodeId, error });
      if (res.headersSent) res.destroy();
      else res.writeHead(500, { "content-type": "application/json" }).end('{"error":"internal"}\n');
    };
    try {
      const outcome = handler(req, res, peer);
      if (outcome instanceof Promise) outcome.catch(failed);
    } catch (error) {
      failed(error);
    }
  };
}

/** The HTTP/1.1 server the admitted connections that chose it are handed to. */
function createH1(limits: PeerServerLimits, connections: PeerConnections, serve: ServeRequest) {
  const h1 = createHttpServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
  });
  h1.keepAliveTimeout = limits.keepAliveTimeoutMs;
  h1.on("request", (req: IncomingMessage, res: ServerResponse) =>
    serve(connections.admitted.get(req.socket), req, res, () => req.socket.destroy()),
  );
  // The HTTP/1.1 server never listens (its connections are handed to it), but "listening" is what
  // starts Node's periodic check of headersTimeout and requestTimeout on every connection.
  h1.emit("listening");
  return h1;
}

/** The HTTP/2 server: each session's fingerprint and idle close, each request's end trailer. */
function createH2(limits: PeerServerLimits, connections: PeerConnections, serve: ServeRequest) {
  const h2 = createH2Server({ maxSessionMemory: H2_MAX_SESSION_MEMORY_MB });
  h2.on("session", (session: ServerHttp2Session) => {
    const fingerprint = presentedFingerprint(session.socket as TLSSocket);
    if (fingerprint !== undefined) connections.sessions.set(session, fingerprint);
    session.once("connect", () => session.setLocalWindowSize(H2_CONNECTION_WINDOW_BYTES));
    let open = 0;
    session.on("stream", (stream) => {
      open++;
      stream.once("close", () => open--);
    });
    session.setTimeout(limits.keepAliveTimeoutMs, () => {
      if (open === 0) session.close();
    });
  });
  h2.on("request", (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const session = req.stream.session;
    // Sent with the reply's last frame, never when it is cut: how peer-h2.ts knows it is whole.
    res.addTrailers({ [PEER_H2_END_TRAILER]: "1" });
    // Node's compatibility response drops the trailers of an end() before any head was sent (it ends
    // the stream with the headers): send the head first, so a body-less reply is still marked whole.
    const end = res.end.bind(res) as (...args: unknown[]) => Http2ServerResponse;
    res.end = (...args: unknown[]) => {
      if (!res.headersSent) res.writeHead(res.statusCode);
      return end(...args);
    };
    // The compatibility objects stand in for IncomingMessage/ServerResponse (see the top of the file).
    serve(
      session === undefined ? undefined : connections.sessions.get(session),
      req as unknown as IncomingMessage,
      res as unknown as ServerResponse,
      () => session?.destroy(),
    );
  });
  return h2;
}

/** Counts every connection, refuses failed handshakes and unpinned certificates, hands the rest on. */
function watchTls(
  tlsServer: TlsServer,
  peers: PinnedPeerView,
  connections: PeerConnections,
  handOn: (socket: TLSSocket) => void,
): void {
  tlsServer.on("connection", (socket: Socket) => {
    connections.sockets.add(socket);
    socket.once("close", () => connections.sockets.delete(socket));
  });
  // Nothing reads a request byte before this: a refused socket is destroyed here.
  tlsServer.on("secureConnection", (socket: TLSSocket) => {
    if (admit(socket, peers, connections)) handOn(socket);
  });
  tlsServer.on("tlsClientError", (error: NodeJS.ErrnoException, socket: TLSSocket) => {
    publish({
      type: "PeerConnectionRefused",
      reason: "handshake_failed",
      remoteAddress: socket.remoteAddress,
      ...(error.code === undefined ? {} : { errorCode: error.code }),
    });
    socket.destroy();
  });
}

/** Whether a handshaken connection presented a pinned certificate: if so it is recorded, else destroyed. */
function admit(socket: TLSSocket, peers: PinnedPeerView, connections: PeerConnections): boolean {
  const fingerprint = presentedFingerprint(socket);
  const pinned =
    socket.authorized && fingerprint !== undefined && peers.findActive(fingerprint) !== undefined;
  if (!pinned || fingerprint === undefined) {
    publish({
      type: "PeerConnectionRefused",
      reason: "not_pinned",
      remoteAddress: socket.remoteAddress,
      ...(fingerprint === undefined ? {} : { fingerprint }),
    });
    socket.destroy();
    return false;
  }
  connections.admitted.set(socket, fingerprint);
  const { live } = connections;
  const set = live.get(fingerprint) ?? new Set<TLSSocket>();
  live.set(fingerprint, set.add(socket));
  socket.once("close", () => {
    set.delete(socket);
    if (set.size === 0 && live.get(fingerprint) === set) live.delete(fingerprint);
  });
  return true;
}

/** Closes the open connections of every peer no longer pinned. */
function closeUnpinned(peers: PinnedPeerView, live: Map<string, Set<TLSSocket>>): void {
  for (const [fingerprint, set] of live) {
    if (peers.findActive(fingerprint) !== undefined) continue;
    publish({ type: "PeerConnectionsClosed", fingerprint, count: set.size });
    for (const socket of set) socket.destroy();
    live.delete(fingerprint);
  }
}
