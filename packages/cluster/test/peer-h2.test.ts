// The HTTP/2 link a node forwards client requests over (peers/peer-h2.ts), against the real peer
// server (HTTP/1.1 and HTTP/2 by ALPN) with real pinned certificates: many streams share one
// connection, chunks arrive one by one, the pin is enforced, a server without HTTP/2 gets HTTP/1.1,
// and the failures carry the codes the forwarder tells apart.
import { createServer as createHttpsServer } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Http2ServerRequest } from "node:http2";
import type { Dispatcher } from "undici";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodeIdentity } from "../src/peers/identity.js";
import { createPeerAgent, peerSecureContext } from "../src/peers/peer-client.js";
import { PeerH2Dispatcher } from "../src/peers/peer-h2.js";
import { startPeerServer, type PeerHandler } from "../src/peers/peer-server.js";
import { openPinnedPeers } from "../src/peers/pinned-peers.js";
import { clock, makeIdentity, TempDirs } from "./cluster-fixtures.js";

const dirs = new TempDirs();
const idDirs = new TempDirs();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  dirs.removeAll();
});

/** a: the serving peer; b: the forwarding node; d: a node nobody pinned. */
let a: NodeIdentity;
let b: NodeIdentity;
let d: NodeIdentity;
beforeAll(async () => {
  [a, b, d] = await Promise.all([
    makeIdentity(idDirs, "pc-3090"),
    makeIdentity(idDirs, "laptop"),
    makeIdentity(idDirs, "stranger"),
  ]);
  return () => idDirs.removeAll();
});

/** Peer server `a` with `b` pinned, serving `handler`. */
async function serveA(handler: PeerHandler) {
  const peers = openPinnedPeers(dirs.make(), { clock });
  peers.pin({ name: b.name, certPem: b.certPem });
  const server = await startPeerServer({ identity: a, peers, host: "127.0.0.1", port: 0, handler });
  cleanups.push(() => server.close());
  return { origin: `https://127.0.0.1:${server.port}`, peers };
}

/** b's link to a (or to whoever listens at the address, expecting a's pin). */
function linkToA(limits: { headersTimeoutMs?: number; idleTimeoutMs?: number } = {}): PeerH2Dispatcher {
  const peer = { node_id: a.nodeId, cert_pem: a.certPem, fingerprint: a.fingerprint };
  const link = new PeerH2Dispatcher({
    secureContext: peerSecureContext(b, peer),
    fingerprint: a.fingerprint,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: limits.headersTimeoutMs ?? 10_000,
    idleTimeoutMs: limits.idleTimeoutMs ?? 30_000,
    fallback: createPeerAgent({ identity: b, peer }),
  });
  cleanups.push(() => link.destroy());
  return link;
}

interface Reply {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly chunks: string[];
}

/** One request through `link` with a handler of undici's handler API, as the forwarder's. */
function exchange(
  link: Dispatcher,
  origin: string,
  options: {
    path?: string;
    body?: string;
    onChunk?: (c: Dispatcher.DispatchController, n: number) => void;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: string[] = [];
    link.dispatch(
      {
        origin,
        path: options.path ?? "/pair/v1/peer/route/v1/chat/completions",
        method: "POST",
        headers: { "content-type": "application/json", connection: "keep-alive" },
        body: options.body ?? '{"model":"m"}',
      },
      {
        onRequestStart() {},
        onResponseStart(_c, statusCode, h) {
          status = statusCode;
          headers = h;
        },
        onResponseData(c, chunk) {
          chunks.push(chunk.toString("utf8"));
          options.onChunk?.(c, chunks.length);
        },
        onResponseEnd: () => resolve({ status, headers, chunks }),
        onResponseError: (_c, error) => reject(error),
      },
    );
  });
}

/** Streams `count` SSE events `gapMs` apart; notes each request's HTTP version, session and authority. */
function streaming(
  count: number,
  gapMs: number,
  seen: { versions: string[]; sessions: Set<unknown>; authorities?: string[] },
): PeerHandler {
  return (req, res) => {
    seen.versions.push(req.httpVersion);
    seen.authorities?.push(String(req.headers[":authority"]));
    const stream = (req as unknown as Http2ServerRequest).stream as { session?: unknown } | undefined;
    if (stream?.session !== undefined) seen.sessions.add(stream.session);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-pair-served-by": "pc-3090" });
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        if (i === count) return void res.end("data: [DONE]\n\n");
        res.write(`data: ${i++}\n\n`);
        setTimeout(next, gapMs);
      };
      next();
    });
  };
}

describe("PeerH2Dispatcher", () => {
  it("carries concurrent streams over one HTTP/2 connection, each chunk as it comes", async () => {
    const seen = { versions: [] as string[], sessions: new Set<unknown>(), authorities: [] as string[] };
    const { origin } = await serveA(streaming(5, 5, seen));
    const link = linkToA();
    const replies = await Promise.all(Array.from({ length: 8 }, () => exchange(link, origin)));
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.headers["x-pair-served-by"]).toBe("pc-3090");
      expect(Object.keys(reply.headers).some((h) => h.startsWith(":"))).toBe(false);
      // Five events 5 ms apart and the end: never coalesced into fewer chunks by the link.
      expect(reply.chunks).toEqual([
        "data: 0\n\n",
        "data: 1\n\n",
        "data: 2\n\n",
        "data: 3\n\n",
        "data: 4\n\n",
        "data: [DONE]\n\n",
      ]);
    }
    expect(seen.versions).toEqual(Array(8).fill("2.0"));
    expect(seen.authorities).toEqual(Array(8).fill(new URL(origin).host));
    expect(seen.sessions.size).toBe(1);
  });

  it("closes an idle connection and opens a new one for the next request", async () => {
    const seen = { versions: [] as string[], sessions: new Set<unknown>() };
    const { origin } = await serveA(streaming(2, 1, seen));
    const link = linkToA({ idleTimeoutMs: 100 });
    expect((await exchange(link, origin)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 400));
    expect((await exchange(link, origin)).status).toBe(200);
    expect(seen.sessions.size).toBe(2);
  });

  it("uses the peer's HTTP/1.1 agent when its server does not offer HTTP/2", async () => {
    const versions: string[] = [];
    const server = createHttpsServer(
      { cert: a.certPem, key: a.privateKeyPem.reveal(), ALPNProtocols: ["http/1.1"] },
      (req: IncomingMessage, res: ServerResponse) => {
        versions.push(req.httpVersion);
        req.resume();
        req.on("end", () => res.end("data: old\n\n"));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    server.on("listening", () => undefined);
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const link = linkToA();
    expect((await exchange(link, origin)).chunks.join("")).toBe("data: old\n\n");
    expect((await exchange(link, origin)).chunks.join("")).toBe("data: old\n\n");
    expect(versions).toEqual(["1.1", "1.1"]);
    server.closeAllConnections();
  });

  it("refuses a server that is not the pinned peer, before sending anything", async () => {
    const peers = openPinnedPeers(dirs.make(), { clock });
    peers.pin({ name: b.name, certPem: b.certPem });
    let calls = 0;
    const impostor = await startPeerServer({
      identity: d,
      peers,
      host: "127.0.0.1",
      port: 0,
      handler: (_req, res) => void (calls++, res.end()),
    });
    cleanups.push(() => impostor.close());
    const error = await exchange(linkToA(), `https://127.0.0.1:${impostor.port}`).catch((e: unknown) => e);
    // The pin is the only trust anchor: another node's self-signed certificate does not even chain.
    expect(error).toMatchObject({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    expect(calls).toBe(0);
  });

  it("gives up on reply headers after the headers timeout", async () => {
    const { origin } = await serveA(() => undefined); // never answers
    const started = performance.now();
    const error = await exchange(linkToA({ headersTimeoutMs: 200 }), origin).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("cancels the stream at the peer when the handler aborts it", async () => {
    let closedEarly: (ended: boolean) => void = () => undefined;
    const peerSawClose = new Promise<boolean>((resolve) => (closedEarly = resolve));
    const seen = { versions: [] as string[], sessions: new Set<unknown>() };
    const stream = streaming(1_000, 5, seen);
    const { origin } = await serveA((req, res, peer) => {
      res.on("close", () => closedEarly(res.writableEnded));
      return stream(req, res, peer);
    });
    const error = await exchange(linkToA(), origin, {
      onChunk: (c, n) => {
        if (n === 3) c.abort(new Error("client went away"));
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: "client went away" });
    expect(await peerSawClose).toBe(false); // closed before its end(): the peer stops generating
  });

  it("cancels a call its handler aborts as it starts, and the peer's handler never runs", async () => {
    let calls = 0;
    const { origin } = await serveA((_req, res) => void (calls++, res.end()));
    const link = linkToA();
    // A body-less reply (end() with no head written) is whole too: the server still sends the trailer.
    expect(await exchange(link, origin)).toMatchObject({ status: 200, chunks: [] });
    const error = await new Promise<Error>((resolve) =>
      link.dispatch(
        { origin, path: "/pair/v1/peer/route/v1/chat/completions", method: "POST", body: "{}" },
        {
          onRequestStart: (c) => c.abort(new Error("the client went away while connecting")),
          onResponseStart: () => undefined,
          onResponseError: (_c, e) => resolve(e),
        },
      ),
    );
    expect(error.message).toBe("the client went away while connecting");
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1); // the first call only
  });

  it("stops the peer's writes while paused, and delivers every byte on resume", async () => {
    const piece = "x".repeat(16 * 1024);
    let writes = 0;
    let refused = false;
    const { origin } = await serveA((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200);
        const pump = () => {
          while (writes < 400) {
            writes++;
            if (!res.write(piece)) {
              refused = true;
              return void res.once("drain", pump);
            }
          }
          res.end();
        };
        pump();
      });
    });
    let controller: Dispatcher.DispatchController | undefined;
    const done = exchange(linkToA(), origin, {
      onChunk: (c, n) => {
        if (n === 1) {
          controller = c;
          c.pause();
        }
      },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(refused).toBe(true);
    expect(writes).toBeLessThan(100); // 400 pieces (6.4 MiB) were ready; the paused stream held them back
    controller!.resume();
    const reply = await done;
    expect(reply.chunks.join("").length).toBe(400 * piece.length);
  });

  it("reports a peer lost mid-stream as UND_ERR_SOCKET", async () => {
    const { origin } = await serveA((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200);
        res.write("data: 0\n\n");
        setTimeout(() => res.destroy(), 20);
      });
    });
    const error = await exchange(linkToA(), origin).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "UND_ERR_SOCKET" });
  });

  it("passes a refused connection on with its own code", async () => {
    const { origin } = await serveA(() => undefined);
    const closed = origin.replace(/:\d+$/, ":1");
    expect(await exchange(linkToA(), closed).catch((e: unknown) => e)).toMatchObject({
      code: "ECONNREFUSED",
    });
  });

  it("loses its connection when the peer revokes this node, and is refused afterwards", async () => {
    const seen = { versions: [] as string[], sessions: new Set<unknown>() };
    const { origin, peers } = await serveA(streaming(1, 1, seen));
    const link = linkToA();
    expect((await exchange(link, origin)).status).toBe(200);
    // The server re-syncs when it is told; a node wires the store's onChange to it.
    expect(peers.revoke(b.nodeId)).toMatchObject({ ok: true });
    await expect(exchange(link, origin)).rejects.toMatchObject({ code: "UND_ERR_SOCKET" });
  });
});
