/**
 * Child process of the benchmarks: the bare relay each PAIR route is judged against. It reads each
 * request's body and relays it to an upstream (`bare-relay.ts`: plain HTTP, HTTPS with a bearer token,
 * or mutual TLS over HTTP/2 with a pinned certificate), piping the reply back with backpressure. No
 * parsing, validation, scheduling, history or metrics: what the same hops cost when nothing but the
 * relaying is done. It listens on plain HTTP (the client's side), or, with `listen.kind: "h2-mtls"`, as
 * the far end of a peer link: TLS 1.3 that admits only the pinned client certificate, HTTP/2, as PAIR's
 * peer server does. The first path segment picks the route (`/d5/v1/chat/completions` → route `d5`);
 * the rest of the path is relayed, or all of it with `keepPrefix` (a near relay in front of a far
 * one that routes by the same prefix). `x-pair-served-by` is passed back.
 * Must not know: PAIR, the load, the report.
 */

import { createServer, type IncomingMessage } from "node:http";
import { createSecureServer, type Http2ServerRequest } from "node:http2";
import type { AddressInfo } from "node:net";
import { openUpstream, type RelayResponse, type Upstream, type UpstreamSpec } from "./bare-relay.js";
import { childArg, serveParent } from "./child-protocol.js";

export interface BareRoute {
  readonly upstream: UpstreamSpec;
  /** Relay the path with its first segment (the route's name) instead of without it. */
  readonly keepPrefix?: boolean;
}

export type BareListen =
  | { readonly kind: "http" }
  | {
      readonly kind: "h2-mtls";
      readonly certPem: string;
      readonly keyPem: string;
      /** The only client certificate admitted (PEM). */
      readonly clientCertPem: string;
    };

export interface BareProxyArg {
  /** Path prefix (without slashes) → a plain-HTTP origin (`http://127.0.0.1:40000`) or a route. */
  readonly routes: Readonly<Record<string, string | BareRoute>>;
  readonly listen?: BareListen;
}

export interface BareProxyReady {
  readonly url: string;
  readonly port: number;
}

const MAX_BODY_BYTES = 1 << 20;
/** As PAIR's peer server (peer-server.ts). */
const H2_MAX_SESSION_MEMORY_MB = 64;

const arg = childArg<BareProxyArg>();
const routes = new Map<string, { upstream: Upstream; keepPrefix: boolean }>(
  Object.entries(arg.routes).map(([name, r]) => {
    const route: BareRoute = typeof r === "string" ? { upstream: { kind: "http", origin: r } } : r;
    return [name, { upstream: openUpstream(route.upstream), keepPrefix: route.keepPrefix === true }];
  }),
);

async function readBody(req: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function handle(req: IncomingMessage | Http2ServerRequest, res: RelayResponse): void {
  const url = req.url ?? "/";
  const slash = url.indexOf("/", 1);
  const route = slash > 0 ? routes.get(url.slice(1, slash)) : undefined;
  if (route === undefined) {
    res.writeHead(404, {});
    res.end();
    return;
  }
  readBody(req as AsyncIterable<Buffer>).then(
    (body) =>
      route.upstream.relay(
        {
          method: req.method === "POST" ? "POST" : "GET",
          path: route.keepPrefix ? url : url.slice(slash),
          body,
          contentType: req.headers["content-type"] ?? "application/json",
        },
        res,
      ),
    () => res.destroy(),
  );
}

const listen = arg.listen ?? { kind: "http" };
const server =
  listen.kind === "http"
    ? createServer((req, res) => handle(req, res))
    : createSecureServer(
        {
          key: listen.keyPem,
          cert: listen.certPem,
          ca: [listen.clientCertPem],
          requestCert: true,
          rejectUnauthorized: true,
          minVersion: "TLSv1.3",
          maxSessionMemory: H2_MAX_SESSION_MEMORY_MB,
        },
        (req, res) => handle(req, res),
      );
if (listen.kind === "http") (server as ReturnType<typeof createServer>).keepAliveTimeout = 5_000;
/** HTTP/2 sessions from the near relay: server.close() waits for them, so close() ends them. */
const sessions = new Set<{ destroy(): void }>();
server.on("session", (s: { destroy(): void; once(e: "close", l: () => void): void }) => {
  sessions.add(s);
  s.once("close", () => sessions.delete(s));
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const ready: BareProxyReady = {
  url: `${listen.kind === "http" ? "http" : "https"}://127.0.0.1:${port}`,
  port,
};
serveParent(ready, async () => {
  if ("closeAllConnections" in server) server.closeAllConnections();
  for (const s of sessions) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const r of routes.values()) await r.upstream.close();
});
