/**
 * HTTP/2 to one pinned peer, for the client requests this node forwards to it. Every forwarded
 * stream shares one TLS connection, so the chunks of many streams that arrive in the same tick
 * travel in one TLS record and one write instead of one each: at 64 streams × 64 chunks at
 * 5 ms/token, the relaying node spent 20–40 % less CPU per stream and the serving node 30–45 % less
 * than over one HTTP/1.1 connection per stream (bench/results.md, "Peer transport").
 *
 * An undici `Dispatcher`, so the forwarder reads it as it reads any upstream (UpstreamExchange:
 * `onResponseData` per chunk, `pause`/`resume` for backpressure, `abort` to cancel the stream). The
 * pinning is peer-client.ts's, unchanged: the peer's pinned certificate is the only trust anchor,
 * `checkServerIdentity` accepts exactly its fingerprint, no TLS session resumption, this node's
 * certificate presented. A peer whose server does not offer `h2` (ALPN) is reached through
 * `fallback` (its HTTP/1.1 agent) from then on.
 *
 * A reply is complete only with the peer server's end trailer (`PEER_H2_END_TRAILER`, sent with
 * the last frame, a body-less reply included): Node ends a stream the same way whether its last
 * DATA frame said so or the peer reset it (RST_STREAM with NO_ERROR) or the connection went, so
 * without the trailer a cut reply would look whole.
 *
 * Errors carry the codes the forwarder tells apart, as undici's would: the connect's own
 * (`ECONNREFUSED`, `ERR_PAIR_PEER_NOT_PINNED`, …), `UND_ERR_CONNECT_TIMEOUT`,
 * `UND_ERR_HEADERS_TIMEOUT`, and `UND_ERR_SOCKET` when the peer's connection or stream ends before
 * the reply did (the cause is kept).
 * Must not know: routes, what is forwarded, membership, the scheduler.
 */

import {
  connect as connectH2,
  constants as h2,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders as H2IncomingHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { connect as connectTls, type SecureContext } from "node:tls";
import { Dispatcher } from "undici";
import { HOLDING_RUNTIME, type TimerHandle } from "../runtime/index.js";
import { pinnedServerIdentity } from "./peer-client.js";

export interface PeerH2Options {
  readonly secureContext: SecureContext;
  /** SHA-256 of the peer's pinned certificate (lowercase hex). */
  readonly fingerprint: string;
  /** Time to open the connection, TLS handshake included. */
  readonly connectTimeoutMs: number;
  /** Time to wait for a reply's headers, unless the request says (`headersTimeout`; 0: none). */
  readonly headersTimeoutMs: number;
  /** A connection with no stream and no traffic for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Where requests go when the peer does not speak HTTP/2. */
  readonly fallback: Dispatcher;
}

/** The trailer the peer server ends every HTTP/2 reply with (peer-server.ts). */
export const PEER_H2_END_TRAILER = "x-pair-end";

/**
 * The connection's receive window: room for every stream's own window (64 KiB, the default) at
 * once, so one stream whose client reads slowly holds back only itself, never the others.
 */
const CONNECTION_WINDOW_BYTES = 32 * 2 ** 20;
/** nghttp2's memory for one session (MB); past it, new streams are refused. Node's default is 10. */
const MAX_SESSION_MEMORY_MB = 64;
/** Request headers HTTP/2 forbids (connection-specific) or carries as pseudo-headers. */
const NOT_IN_H2 = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
  "te",
]);

export class PeerH2Dispatcher extends Dispatcher {
  readonly #o: PeerH2Options;
  /** One connection per origin (a link has one): the open one, and the one being opened. */
  readonly #live = new Map<string, ClientHttp2Session>();
  readonly #opening = new Map<string, Promise<ClientHttp2Session | "h1">>();
  /** Origins whose server did not choose h2. */
  readonly #h1 = new Set<string>();
  readonly #open = new Set<ClientHttp2Session>();
  #closed = false;

  constructor(options: PeerH2Options) {
    super();
    this.#o = options;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    // The forwarder's handlers use undici's handler API (onRequestStart …); a legacy handler (what
    // undici's request() passes) would be called with nothing and hang.
    if (typeof handler.onResponseStart !== "function" || typeof handler.onRequestStart !== "function")
      throw new TypeError("PeerH2Dispatcher takes handlers with onRequestStart and onResponseStart");
    const origin = String(options.origin ?? "");
    if (this.#h1.has(origin)) return this.#o.fallback.dispatch(options, handler);
    const call = new H2Call(options, handler, options.headersTimeout ?? this.#o.headersTimeoutMs);
    if (this.#closed) {
      call.fail(socketError("the peer link is closed", undefined));
      return true;
    }
    const live = this.#live.get(origin);
    if (live !== undefined && !live.closed && !live.destroyed) {
      call.send(live);
      return true;
    }
    this.#session(origin).then(
      (session) => (session === "h1" ? this.#o.fallback.dispatch(options, handler) : call.send(session)),
      (error: unknown) => call.fail(error instanceof Error ? error : new Error(String(error))),
    );
    return true;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true;
    const done = Promise.all([
      ...[...this.#open].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      this.#o.fallback.close(),
    ]).then(() => undefined);
    if (callback === undefined) return done;
    void done.then(callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    this.#closed = true;
    for (const s of this.#open) s.destroy();
    this.#open.clear();
    const done = this.#o.fallback.destroy();
    const callback = typeof a === "function" ? a : b;
    if (callback === undefined) return done;
    void done.then(callback);
  }

  /** The connection being opened to `origin`, or a new one (a closing one is never reused). */
  #session(origin: string): Promise<ClientHttp2Session | "h1"> {
    const known = this.#opening.get(origin);
    if (known !== undefined) return known;
    const opening = this.#connect(origin);
    this.#opening.set(origin, opening);
    const opened = (): void => void this.#opening.delete(origin);
    opening.then((session) => {
      opened();
      if (session === "h1") this.#h1.add(origin);
    }, opened);
    return opening;
  }

  #connect(origin: string): Promise<ClientHttp2Session | "h1"> {
    const url = new URL(origin);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return new Promise((resolve, reject) => {
      const socket = connectTls({
        host,
        port: Number(url.port || 443),
        secureContext: this.#o.secureContext,
        checkServerIdentity: pinnedServerIdentity(this.#o.fingerprint),
        ALPNProtocols: ["h2", "http/1.1"],
        ...(isIP(host) === 0 ? { servername: host } : {}),
      });
      const timer = HOLDING_RUNTIME.timers.after(() => {
        socket.destroy();
        reject(
          Object.assign(new Error(`connect timeout after ${this.#o.connectTimeoutMs} ms`), {
            code: "UND_ERR_CONNECT_TIMEOUT",
          }),
        );
      }, this.#o.connectTimeoutMs);
      const failed = (error: Error) => {
        timer.cancel();
        reject(error);
      };
      socket.once("error", failed);
      socket.once("secureConnect", () => {
        timer.cancel();
        socket.off("error", failed);
        if (socket.alpnProtocol !== "h2") {
          socket.destroy();
          resolve("h1");
          return;
        }
        const session = connectH2(origin, {
          createConnection: () => socket,
          maxSessionMemory: MAX_SESSION_MEMORY_MB,
          settings: { enablePush: false },
        });
        this.#open.add(session);
        this.#live.set(origin, session);
        const forget = () => {
          this.#open.delete(session);
          if (this.#live.get(origin) === session) this.#live.delete(origin);
        };
        // Errors reach the streams (each fails on its own); the session just goes.
        session.on("error", forget);
        session.once("close", forget);
        session.once("goaway", forget);
        session.once("connect", () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
        session.setTimeout(this.#o.idleTimeoutMs, () => {
          if (openStreams(session) === 0) session.close();
        });
        // Like undici's idle sockets: an open link does not keep the process alive by itself.
        session.unref();
        resolve(session);
      });
    });
  }
}

/** Forwarded streams open on each session. */
const streamCounts = new WeakMap<ClientHttp2Session, number>();

function openStreams(session: ClientHttp2Session): number {
  return streamCounts.get(session) ?? 0;
}

/** One forwarded request over a session, and the controller its handler pauses, resumes or aborts. */
class H2Call implements Dispatcher.DispatchController {
  readonly #options: Dispatcher.DispatchOptions;
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #headersTimeoutMs: number;
  #stream: ClientHttp2Stream | undefined = undefined;
  #session: ClientHttp2Session | undefined = undefined;
  #paused = false;
  #reason: Error | null = null;
  #settled = false;
  #responded = false;
  #trailed = false;
  #timer: TimerHandle | undefined = undefined;

  constructor(
    options: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
    headersTimeoutMs: number,
  ) {
    this.#options = options;
    this.#handler = handler;
    this.#headersTimeoutMs = headersTimeoutMs;
  }

  get aborted(): boolean {
    return this.#reason !== null;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get reason(): Error | null {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#reason = reason;
    this.fail(reason);
  }
  pause(): void {
    this.#paused = true;
    this.#stream?.pause();
  }
  resume(): void {
    this.#paused = false;
    this.#stream?.resume();
  }

  send(session: ClientHttp2Session): void {
    if (this.#settled) return;
    const o = this.#options;
    // :scheme and :authority are the session's own (Node fills them in).
    const headers: OutgoingHttpHeaders = {
      [h2.HTTP2_HEADER_METHOD]: o.method,
      [h2.HTTP2_HEADER_PATH]: o.path,
    };
    for (const [name, value] of Object.entries((o.headers ?? {}) as Record<string, string | string[]>)) {
      const lower = name.toLowerCase();
      if (!NOT_IN_H2.has(lower)) headers[lower] = value;
    }
    const body = o.body;
    if (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      this.fail(new TypeError("a request over the HTTP/2 peer link takes a string or Buffer body"));
      return;
    }
    const empty = body === undefined || body === null || body.length === 0;
    this.#handler.onRequestStart?.(this, {});
    if (this.#settled) return; // aborted by the handler as it started: nothing is sent
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(headers, { endStream: empty });
    } catch (cause) {
      this.fail(socketError("the peer's connection refused a new stream", cause));
      return;
    }
    this.#stream = stream;
    this.#session = session;
    streamCounts.set(session, (streamCounts.get(session) ?? 0) + 1);
    // First, so that no stream error is ever unheard.
    stream.once("error", (cause: Error) => this.fail(socketError("the peer's stream failed", cause)));
    if (this.#paused) stream.pause();
    if (this.#headersTimeoutMs > 0)
      this.#timer = HOLDING_RUNTIME.timers.after(() => {
        this.fail(
          Object.assign(new Error(`no reply headers within ${this.#headersTimeoutMs} ms`), {
            code: "UND_ERR_HEADERS_TIMEOUT",
          }),
        );
      }, this.#headersTimeoutMs);
    stream.on("response", (h: H2IncomingHeaders) => {
      this.#timer?.cancel();
      if (this.#settled) return;
      this.#responded = true;
      this.#handler.onResponseStart?.(this, Number(h[h2.HTTP2_HEADER_STATUS]), withoutPseudo(h), "");
    });
    stream.once("trailers", (t: H2IncomingHeaders) => (this.#trailed = t[PEER_H2_END_TRAILER] === "1"));
    stream.on("data", (chunk: Buffer) => {
      if (!this.#settled) this.#handler.onResponseData?.(this, chunk);
    });
    stream.once("end", () => {
      if (this.#settled) return;
      if (!this.#responded || !this.#trailed) {
        this.fail(
          socketError("other side closed: the peer's reply ended without its end trailer", undefined),
        );
        return;
      }
      this.#finish();
      this.#handler.onResponseEnd?.(this, {});
    });
    stream.once("close", () => {
      if (!this.#settled)
        this.fail(socketError(`other side closed the stream (code ${stream.rstCode ?? "none"})`, undefined));
    });
    if (!empty) stream.end(body);
  }

  /** Settles with `error` (once): the stream is cancelled and the handler told. */
  fail(error: Error): void {
    if (this.#settled) return;
    const stream = this.#stream;
    this.#finish();
    if (stream !== undefined && !stream.closed) stream.close(h2.NGHTTP2_CANCEL);
    this.#handler.onResponseError?.(this, error);
  }

  #finish(): void {
    this.#settled = true;
    this.#timer?.cancel();
    const session = this.#session;
    if (session !== undefined) streamCounts.set(session, Math.max(0, (streamCounts.get(session) ?? 1) - 1));
  }
}

function withoutPseudo(h: H2IncomingHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(h)) if (!name.startsWith(":")) out[name] = value;
  return out;
}

function socketError(message: string, cause: unknown): Error {
  const detail = cause instanceof Error ? `: ${cause.message}` : "";
  return Object.assign(
    new Error(`${message}${detail}`),
    { code: "UND_ERR_SOCKET" },
    cause === undefined ? {} : { cause },
  );
}
