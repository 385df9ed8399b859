/**
 * Child process of the proxy-overhead and peer-hop benchmarks (only with `--bare-proxy`): the
 * reference the issue compares against, a bare node:http server that relays each request to an
 * upstream (an engine, or a PAIR node) with undici over plain HTTP and pipes the reply back with
 * backpressure. No parsing, validation, scheduling, history or metrics: what any proxy on this
 * machine costs, so the report can tell it apart from what PAIR adds. The first path segment picks the
 * upstream (`/paced/v1/chat/completions` → the paced emulator); `x-pair-served-by` is passed back.
 * undici is the node package's dependency, resolved from the workspace root.
 * Must not know: PAIR, the load, the report.
 */

import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { childArg, serveParent } from "./child-protocol.js";

export interface BareProxyArg {
  /** Path prefix (without slashes) → engine origin, e.g. `{ paced: "http://127.0.0.1:40000" }`. */
  readonly routes: Readonly<Record<string, string>>;
}

export interface BareProxyReady {
  readonly url: string;
}

const MAX_BODY_BYTES = 1 << 20;
const SERVED_BY = "x-pair-served-by";

const arg = childArg<BareProxyArg>();
const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const server = createServer((req, res) => {
  void (async () => {
    const url = req.url ?? "/";
    const slash = url.indexOf("/", 1);
    const origin = slash > 0 ? arg.routes[url.slice(1, slash)] : undefined;
    if (origin === undefined) {
      res.writeHead(404).end();
      return;
    }
    const gone = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    const body = await readBody(req);
    const up = await dispatcher.request({
      origin,
      path: url.slice(slash),
      method: req.method === "POST" ? "POST" : "GET",
      headers: { "content-type": req.headers["content-type"] ?? "application/json" },
      body: req.method === "POST" ? body : null,
      signal: gone.signal,
    });
    const servedBy = up.headers[SERVED_BY];
    res.writeHead(up.statusCode, {
      "content-type": String(up.headers["content-type"] ?? ""),
      // In front of a PAIR node (peer-hop), who served it, so the benchmark can check every reply.
      ...(typeof servedBy === "string" ? { [SERVED_BY]: servedBy } : {}),
    });
    for await (const chunk of up.body as AsyncIterable<Buffer>)
      if (!res.write(chunk)) await Promise.race([once(res, "drain"), once(res, "close")]);
    res.end();
  })().catch(() => res.destroy());
});
server.keepAliveTimeout = 5_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const ready: BareProxyReady = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
serveParent(ready, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dispatcher.close();
});
