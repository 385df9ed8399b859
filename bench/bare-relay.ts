/**
 * The hops of the bare relays that PAIR's routes are judged against (`bare-proxy-child.ts`): each
 * relays one request to its upstream and pipes the reply back with backpressure, and does nothing
 * else. Three upstreams, one per transport PAIR uses: plain HTTP (a local engine), HTTPS with a bearer
 * token and a trusted CA (a rented node), and mutual TLS 1.3 over one HTTP/2 session with the far end's
 * certificate pinned by fingerprint (a peer, as `packages/cluster/src/peers/peer-h2.ts` reaches one).
 * Must not know: PAIR's routing, the load, the report.
 */

import { once } from "node:events";
import {
  connect as http2Connect,
  constants as h2,
  type ClientHttp2Session,
  type IncomingHttpHeaders as H2Headers,
} from "node:http2";
import type { OutgoingHttpHeaders } from "node:http";
import { createSecureContext } from "node:tls";
import { Agent } from "undici";
import { pinnedServerIdentity } from "@pair/cluster";

/** Both node:http's and node:http2's compatibility response objects. */
export interface RelayResponse {
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  write(chunk: Buffer): boolean;
  end(): unknown;
  destroy(error?: Error): unknown;
  once(event: "close" | "drain", listener: () => void): unknown;
  on(event: "drain", listener: () => void): unknown;
  /** end() was called: a 'close' before it means the client went away. */
  readonly writableEnded: boolean;
}

export interface RelayRequest {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body: Buffer;
  readonly contentType: string;
}

export type UpstreamSpec =
  | { readonly kind: "http"; readonly origin: string }
  | { readonly kind: "https"; readonly origin: string; readonly caPem: string; readonly token: string }
  | {
      readonly kind: "h2-mtls";
      readonly origin: string;
      /** This relay's certificate and key (PEM), presented to the far end. */
      readonly certPem: string;
      readonly keyPem: string;
      /** The far end's certificate (PEM), the only one trusted, and its SHA-256 fingerprint. */
      readonly serverCertPem: string;
      readonly serverFingerprint: string;
    };

export interface Upstream {
  relay(req: RelayRequest, res: RelayResponse): void;
  close(): Promise<void>;
}

/** In front of a PAIR node, who served it, so the benchmark can check every reply. */
const SERVED_BY = "x-pair-served-by";
/** As PAIR's peer link (peer-h2.ts): one session may buffer this much before it refuses streams. */
const H2_MAX_SESSION_MEMORY_MB = 64;

/** `passHeaders`: reply headers relayed to the client besides content-type (lowercase). */
export function openUpstream(spec: UpstreamSpec, passHeaders: readonly string[] = [SERVED_BY]): Upstream {
  const passed = (headers: Record<string, string | string[] | undefined>): Record<string, string> =>
    Object.fromEntries(
      passHeaders.flatMap((h) => {
        const v = headers[h];
        return typeof v === "string" ? [[h, v]] : [];
      }),
    );
  if (spec.kind === "h2-mtls") return h2Upstream(spec, passed);
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connections: 256,
    ...(spec.kind === "https" ? { connect: { ca: [spec.caPem] } } : {}),
  });
  const auth = spec.kind === "https" ? { authorization: `Bearer ${spec.token}` } : {};
  return {
    relay(req, res) {
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableEnded) gone.abort();
      });
      void (async () => {
        const up = await agent.request({
          origin: spec.origin,
          path: req.path,
          method: req.method,
          headers: { "content-type": req.contentType, ...auth },
          body: req.method === "POST" ? req.body : null,
          signal: gone.signal,
        });
        res.writeHead(up.statusCode, {
          "content-type": String(up.headers["content-type"] ?? ""),
          ...passed(up.headers),
        });
        for await (const chunk of up.body as AsyncIterable<Buffer>)
          if (!res.write(chunk))
            await Promise.race([once(res as never, "drain"), once(res as never, "close")]);
        res.end();
      })().catch(() => res.destroy());
    },
    close: () => agent.close(),
  };
}

function h2Upstream(
  spec: Extract<UpstreamSpec, { kind: "h2-mtls" }>,
  passed: (headers: H2Headers) => Record<string, string>,
): Upstream {
  const secureContext = createSecureContext({
    ca: [spec.serverCertPem],
    cert: spec.certPem,
    key: spec.keyPem,
    minVersion: "TLSv1.3",
  });
  const checkServerIdentity = pinnedServerIdentity(spec.serverFingerprint);
  let session: ClientHttp2Session | undefined;
  const open = (): ClientHttp2Session => {
    if (session === undefined || session.closed || session.destroyed) {
      const s = http2Connect(spec.origin, {
        secureContext,
        checkServerIdentity,
        maxSessionMemory: H2_MAX_SESSION_MEMORY_MB,
        settings: { enablePush: false },
      });
      s.on("error", (error: Error) => console.error(`bare relay: HTTP/2 session: ${error.message}`));
      s.unref();
      session = s;
    }
    return session;
  };
  return {
    relay(req, res) {
      const stream = open().request({
        [h2.HTTP2_HEADER_METHOD]: req.method,
        [h2.HTTP2_HEADER_PATH]: req.path,
        [h2.HTTP2_HEADER_CONTENT_TYPE]: req.contentType,
      });
      res.once("close", () => {
        if (!res.writableEnded && !stream.closed) stream.close(h2.NGHTTP2_CANCEL);
      });
      res.on("drain", () => stream.resume());
      // The body is read only once the headers are written: node:http2 emits 'response' on the next
      // tick, and a DATA frame that came in the same read as the HEADERS could otherwise come first.
      stream.once("response", (headers: H2Headers) => {
        res.writeHead(Number(headers[h2.HTTP2_HEADER_STATUS]), {
          "content-type": String(headers[h2.HTTP2_HEADER_CONTENT_TYPE] ?? ""),
          ...passed(headers),
        });
        stream.on("data", (chunk: Buffer) => {
          if (!res.write(chunk)) stream.pause();
        });
        stream.once("end", () => res.end());
      });
      stream.once("error", (error: Error) => res.destroy(error));
      stream.end(req.method === "POST" ? req.body : undefined);
    },
    close: () => {
      session?.destroy();
      return Promise.resolve();
    },
  };
}
