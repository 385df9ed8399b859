/**
 * Child process of the peer-transport benchmark: "A", the near end of the peer link. A plain
 * node:http server on 127.0.0.1 that reads each request's body and relays it to B over mutual TLS 1.3
 * (B's pinned certificate as the only CA, its fingerprint checked on every connection, A's own
 * certificate presented, one shared TLS context: as PAIR's peer client does), writing each chunk of
 * B's reply to the client as it arrives, never buffering the reply: when the client's socket refuses
 * a write, the upstream is paused until 'drain'. Three ways to reach B:
 *   h1         an undici `Agent` (HTTP/1.1, one connection per concurrent stream): PAIR until HTTP/2;
 *   h2-undici  an undici `Client` with `allowH2`, `pipelining` and `idempotent: true` per request
 *              (without both, undici 7.30 runs HTTP/2 POSTs one at a time: undici #5390 / #5362);
 *   h2-node    one `node:http2` session, one `session.request` per request: PAIR now (peer-h2.ts).
 * B's `x-peer-http-version` header is passed on. `GET /health` is answered by A itself (the load
 * generator opens its connections with it).
 * Must not know: what B serves, the load, the report.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createSecureContext } from "node:tls";
import { Agent, Client, type Dispatcher } from "undici";
import { pinnedServerIdentity } from "@pair/cluster";
import { openUpstream } from "./bare-relay.js";
import { childArg, serveParent } from "./child-protocol.js";
import { PEER_HTTP_VERSION_HEADER, type Transport } from "./peer-transport-report.js";

export interface PeerRelayChildArg {
  readonly transport: Transport;
  /** A's certificate and key (PEM), presented to B. */
  readonly certPem: string;
  readonly keyPem: string;
  /** B's certificate (PEM): the only one trusted, and its SHA-256 fingerprint (lowercase hex). */
  readonly serverCertPem: string;
  readonly serverFingerprint: string;
  readonly serverPort: number;
}

export interface PeerRelayChildReady {
  readonly port: number;
}

const MAX_BODY_BYTES = 1 << 20;
const MAX_STREAMS = 256;
const CHAT_PATH = "/v1/chat/completions";
/** The HTTP version B saw (peer-transport-server-child.ts), passed on to the client. */
const VERSION = PEER_HTTP_VERSION_HEADER;

const arg = childArg<PeerRelayChildArg>();
const origin = `https://127.0.0.1:${arg.serverPort}`;
const secureContext = createSecureContext({
  ca: [arg.serverCertPem],
  cert: arg.certPem,
  key: arg.keyPem,
  minVersion: "TLSv1.3",
});
const checkServerIdentity = pinnedServerIdentity(arg.serverFingerprint);
const connect = { secureContext, checkServerIdentity, maxCachedSessions: 0 };

const dispatcher: Dispatcher | undefined =
  arg.transport === "h1"
    ? new Agent({ connections: MAX_STREAMS, connect })
    : arg.transport === "h2-undici"
      ? new Client(origin, {
          allowH2: true,
          pipelining: MAX_STREAMS,
          maxConcurrentStreams: MAX_STREAMS,
          connect,
        })
      : undefined;

/** h2-node: the bare relay's HTTP/2 upstream (bare-relay.ts), one session as PAIR's peer link keeps. */
const http2Upstream =
  arg.transport === "h2-node"
    ? openUpstream(
        {
          kind: "h2-mtls",
          origin,
          certPem: arg.certPem,
          keyPem: arg.keyPem,
          serverCertPem: arg.serverCertPem,
          serverFingerprint: arg.serverFingerprint,
        },
        [VERSION],
      )
    : undefined;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error("request body over 1 MiB"));
      else chunks.push(c);
    });
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/** Relays B's reply through undici's dispatch handler, pausing B while the client is not draining. */
class RelayHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  constructor(private readonly res: ServerResponse) {
    res.once("close", () => {
      if (!res.writableFinished) this.#controller?.abort(new Error("client went away"));
    });
    res.on("drain", () => {
      if (this.#controller?.paused === true) this.#controller.resume();
    });
  }
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
  }
  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.res.writeHead(statusCode, {
      "content-type": String(headers["content-type"] ?? ""),
      [VERSION]: String(headers[VERSION] ?? ""),
    });
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) controller.pause();
  }
  onResponseEnd(): void {
    this.res.end();
  }
  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.res.destroy(error);
  }
}

function relayUndici(d: Dispatcher, path: string, body: Buffer, res: ServerResponse): void {
  d.dispatch(
    {
      origin,
      path,
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      // HTTP/2 in undici 7.30: without it, POSTs wait for each other (undici #5390 / #5362).
      ...(arg.transport === "h2-undici" ? { idempotent: true } : {}),
    },
    new RelayHandler(res),
  );
}

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    return;
  }
  if (req.method !== "POST" || req.url !== CHAT_PATH) {
    res.writeHead(404).end();
    return;
  }
  readBody(req).then(
    (body) => {
      try {
        if (dispatcher !== undefined) relayUndici(dispatcher, CHAT_PATH, body, res);
        else
          http2Upstream?.relay(
            { method: "POST", path: CHAT_PATH, body, contentType: "application/json" },
            res,
          );
      } catch (error) {
        // e.g. a request on an HTTP/2 session that failed meanwhile: this stream fails, not A.
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    },
    () => res.destroy(),
  );
});
server.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const ready: PeerRelayChildReady = { port: (server.address() as AddressInfo).port };
serveParent(ready, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await http2Upstream?.close();
  await dispatcher?.destroy();
});
