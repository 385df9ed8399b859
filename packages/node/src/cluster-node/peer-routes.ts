/**
 * The peer API: what a paired node may ask of this one over mTLS on the cluster port. Every request
 * here comes from a pinned peer (the peer server refuses anyone else before a request is read). For
 * now one route, `GET /pair/v1/peer/hello` → `{node_id, name}`, which proves the mTLS path works
 * after pairing; inventory and forwarding routes join it later. Anything else is 404.
 * Must not know: pairing, TLS, the client API.
 */

import type { PeerHandler } from "../cluster/index.js";

export const PEER_HELLO_PATH = "/pair/v1/peer/hello";

export interface PeerRoutesOptions {
  readonly nodeId: string;
  readonly name: string;
}

export function peerRoutes(options: PeerRoutesOptions): PeerHandler {
  const hello = JSON.stringify({ node_id: options.nodeId, name: options.name });
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const [status, text] =
      (req.method === "GET" || req.method === "HEAD") && path === PEER_HELLO_PATH
        ? [200, hello]
        : [404, JSON.stringify({ error: `no peer route ${path}` })];
    req.resume();
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
    });
    res.end(text);
  };
}
