/**
 * The peer API: what a paired node may ask of this one over mTLS on the cluster port. Every request
 * here comes from a pinned peer (the peer server refuses anyone else before a request is read).
 * `GET /pair/v1/peer/hello` → `{node_id, name}` proves the mTLS path works after pairing;
 * `GET /pair/v1/peer/inventory` → this node's own view (its local engines' models, load, capacity),
 * never another peer's models: inventory is not transitive. Anything else is 404.
 * Must not know: pairing, TLS, the client API.
 */

import type { PeerHandler } from "../cluster/index.js";

export const PEER_HELLO_PATH = "/pair/v1/peer/hello";
export const PEER_INVENTORY_PATH = "/pair/v1/peer/inventory";

/** One node's own inventory, as its peers fetch it. */
export interface PeerInventory {
  readonly node_id: string;
  readonly name: string;
  /** Models served by this node's local engines, with how many healthy engines serve each. */
  readonly models: readonly { readonly model: string; readonly engines: number }[];
  readonly in_flight: number;
  /** Sum of max_concurrent over the healthy local engines. */
  readonly capacity: number;
  readonly generated_at: string;
}

/** What the inventory route reports (the rest comes from the node's identity). */
export type LocalInventory = Pick<PeerInventory, "models" | "in_flight" | "capacity">;

export interface PeerRoutesOptions {
  readonly nodeId: string;
  readonly name: string;
  /** This node's local view; absent: an empty one. */
  readonly inventory?: () => LocalInventory;
  readonly nowMs?: () => number;
}

export function peerRoutes(options: PeerRoutesOptions): PeerHandler {
  const hello = JSON.stringify({ node_id: options.nodeId, name: options.name });
  const nowMs = options.nowMs ?? (() => Date.now());
  const inventory = (): string => {
    const local = options.inventory?.() ?? { models: [], in_flight: 0, capacity: 0 };
    const body: PeerInventory = {
      node_id: options.nodeId,
      name: options.name,
      models: local.models,
      in_flight: local.in_flight,
      capacity: local.capacity,
      generated_at: new Date(nowMs()).toISOString(),
    };
    return JSON.stringify(body);
  };
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const readable = req.method === "GET" || req.method === "HEAD";
    const [status, text] =
      readable && path === PEER_HELLO_PATH
        ? [200, hello]
        : readable && path === PEER_INVENTORY_PATH
          ? [200, inventory()]
          : [404, JSON.stringify({ error: `no peer route ${path}` })];
    req.resume();
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
      "cache-control": "no-store",
    });
    res.end(text);
  };
}
