/**
 * The peer API: what a paired node may ask of this one over mTLS on the cluster port. Every request
 * here comes from a pinned peer (the peer server refuses anyone else before a request is read).
 * `GET /pair/v1/peer/hello` → `{node_id, name}` proves the mTLS path works after pairing;
 * `GET /pair/v1/peer/inventory` → this node's own view (its local engines' models, load, capacity),
 * never another peer's models: inventory is not transitive.
 * `POST /pair/v1/peer/route/<client route>` → a client request the peer forwards here, answered as
 * the client API would (served by this node's engines only).
 * `POST /pair/v1/peer/changed` `{"state":"changed"|"leaving"}` → the peer's inventory changed (ask it
 * now) or it is shutting down (mark it down now): push on change, pull for the data.
 * Anything else is 404.
 * Must not know: pairing, TLS, how routed requests are served.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  PEER_CHANGED_PATH,
  PEER_HELLO_PATH,
  PEER_INVENTORY_PATH,
  PEER_ROUTE_PREFIX,
  type AuthenticatedPeer,
  type PeerHandler,
} from "@pair/cluster";
import type { Clock } from "@pair/provision";
import type { RentedPeerView } from "@pair/sponsor";

/** What a peer tells this node about itself. */
export type PeerChange = "changed" | "leaving";

/** Largest `changed` notice read. */
const MAX_NOTICE_BYTES = 1024;

/** One node's own inventory, as its peers fetch it. */
export interface PeerInventory {
  readonly node_id: string;
  readonly name: string;
  /**
   * Models served by this node's local engines, with how many healthy engines serve each and the
   * largest context window among them, where known (docs/context.md).
   */
  readonly models: readonly {
    readonly model: string;
    readonly engines: number;
    readonly context_window?: number;
  }[];
  readonly in_flight: number;
  /** Sum of max_concurrent over the healthy local engines. */
  readonly capacity: number;
  /** Rented nodes this node sponsors, as peers may see them (never a URL or a credential). */
  readonly rented: readonly RentedPeerView[];
  readonly generated_at: string;
}

/** What the inventory route reports (the rest comes from the node's identity). */
export type LocalInventory = Pick<PeerInventory, "models" | "in_flight" | "capacity"> & {
  readonly rented?: readonly RentedPeerView[];
};

export interface PeerRoutesOptions {
  readonly nodeId: string;
  readonly name: string;
  /** This node's local view; absent: an empty one. */
  readonly inventory?: () => LocalInventory;
  /** Serve a forwarded client request (`route` is the client route, e.g. `/v1/chat/completions`). */
  readonly route?: (
    req: IncomingMessage,
    res: ServerResponse,
    peer: AuthenticatedPeer,
    route: string,
  ) => void;
  /** A peer's notice about itself. */
  readonly changed?: (peer: AuthenticatedPeer, change: PeerChange) => void;
  /** `generated_at` reads its wall time (peers estimate the clock offset from it). */
  readonly clock: Clock;
}

export function peerRoutes(options: PeerRoutesOptions): PeerHandler {
  const hello = JSON.stringify({ node_id: options.nodeId, name: options.name });
  const inventory = (): string => {
    const local = options.inventory?.() ?? { models: [], in_flight: 0, capacity: 0 };
    const body: PeerInventory = {
      node_id: options.nodeId,
      name: options.name,
      models: local.models,
      in_flight: local.in_flight,
      capacity: local.capacity,
      rented: local.rented ?? [],
      generated_at: new Date(options.clock.now().wallMs).toISOString(),
    };
    return JSON.stringify(body);
  };
  return (req, res, peer) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method === "POST" && path.startsWith(`${PEER_ROUTE_PREFIX}/`) && options.route !== undefined)
      return options.route(req, res, peer, path.slice(PEER_ROUTE_PREFIX.length));
    if (req.method === "POST" && path === PEER_CHANGED_PATH) return notice(req, res, peer, options.changed);
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

function notice(
  req: IncomingMessage,
  res: ServerResponse,
  peer: AuthenticatedPeer,
  changed: PeerRoutesOptions["changed"],
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_NOTICE_BYTES) chunks.push(chunk);
  });
  req.on("end", () => {
    let change: PeerChange | undefined;
    try {
      const state = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { state?: unknown }).state;
      if (state === "changed" || state === "leaving") change = state;
    } catch {
      change = undefined;
    }
    if (size > MAX_NOTICE_BYTES || change === undefined) {
      res.writeHead(400, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: 'expected {"state": "changed" | "leaving"}' }));
      return;
    }
    changed?.(peer, change);
    res.writeHead(204);
    res.end();
  });
}
