/**
 * Child process of the peer-transport benchmark: "B", the far end of the peer link. A TLS 1.3 server
 * on 127.0.0.1 that admits only the client presenting the pinned certificate (requestCert,
 * rejectUnauthorized, `ca` = that certificate, as PAIR's peer server does) and answers every request,
 * once its body is read, with an OpenAI-style SSE stream: `chunks` chat.completion.chunk events
 * `chunkDelayMs` apart, then `data: [DONE]`, waiting for 'drain' when a write is refused. `h1` is
 * `https.createServer`; `h2` is `http2.createSecureServer` with `allowHTTP1` (same handler, through the
 * compatibility API). Each reply says in `x-peer-http-version` which HTTP version its request came
 * with, so the benchmark can check that a transport really spoke the protocol it is named after.
 * Must not know: who relays to it, the load, the report.
 */

import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import { createServer, type ServerOptions } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { childArg, serveParent } from "./child-protocol.js";
import { PEER_HTTP_VERSION_HEADER } from "./peer-transport-report.js";

export interface PeerServerChildArg {
  readonly protocol: "h1" | "h2";
  /** B's certificate and key (PEM). */
  readonly certPem: string;
  readonly keyPem: string;
  /** The only client certificate admitted (A's, PEM). */
  readonly clientCertPem: string;
  readonly chunks: number;
  readonly chunkDelayMs: number;
}

export interface PeerServerChildReady {
  readonly port: number;
}

const MAX_BODY_BYTES = 1 << 20;

const arg = childArg<PeerServerChildArg>();
if (!(Number.isInteger(arg.chunks) && arg.chunks >= 1 && arg.chunks <= 10_000))
  throw new RangeError(`peer-transport server: chunks must be in [1, 10000], got ${arg.chunks}`);
if (!(arg.chunkDelayMs >= 0 && arg.chunkDelayMs <= 1_000))
  throw new RangeError(`peer-transport server: chunkDelayMs must be in [0, 1000], got ${arg.chunkDelayMs}`);

const chunk = (i: number): string =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench",` +
  `"choices":[{"index":0,"delta":{"content":"tok${i} "},"finish_reason":null}]}\n\n`;

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

function handle(req: Req, res: Res): void {
  let size = 0;
  req.on("data", (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) req.destroy(new Error("body too large"));
  });
  req.on("end", () => {
    // Both response types have this writeHead; their overload sets are too different to call on the union.
    (res as ServerResponse).writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      [PEER_HTTP_VERSION_HEADER]: req.httpVersion,
    });
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    let gone = false;
    res.once("close", () => {
      gone = true;
      if (timer !== undefined) clearTimeout(timer);
    });
    const next = (): void => {
      timer = undefined;
      if (gone) return;
      if (i === arg.chunks) {
        res.end("data: [DONE]\n\n");
        return;
      }
      const ok = (res as ServerResponse).write(chunk(i++));
      if (ok) timer = setTimeout(next, arg.chunkDelayMs);
      else res.once("drain", () => (timer = setTimeout(next, arg.chunkDelayMs)));
    };
    next();
  });
  req.on("error", () => res.destroy());
}

const tls: ServerOptions = {
  key: arg.keyPem,
  cert: arg.certPem,
  ca: [arg.clientCertPem],
  requestCert: true,
  rejectUnauthorized: true,
  minVersion: "TLSv1.3",
};
const server = arg.protocol === "h2" ? createSecureServer({ ...tls, allowHTTP1: true }, handle) : h1Server();

function h1Server(): ReturnType<typeof createServer> {
  const s = createServer(tls, handle);
  // Above undici's keep-alive (4 s): A's pooled connections are never closed under it between loads.
  s.keepAliveTimeout = 30_000;
  return s;
}
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const ready: PeerServerChildReady = { port: (server.address() as AddressInfo).port };
serveParent(ready, async () => {
  if ("closeAllConnections" in server) server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    // An HTTP/2 session stays open until the client goes: do not wait for it.
    setTimeout(resolve, 500).unref();
  });
});
