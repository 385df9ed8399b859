/**
 * The admin routes that drive pairing, on the client port behind the admin bearer token (the
 * client API checks it before calling here):
 *   POST /pair/v1/pin              → {pin, expires_at}             show a new PIN
 *   POST /pair/v1/join {address, pin} → the paired peer            run the initiator side
 *   GET  /pair/v1/peers            → [peer]                        the peers trusted now
 *   POST /pair/v1/unpair {node}    → the revoked peer              stop trusting a node
 *   GET  /pair/v1/discovered       → [{node_id, name, address, seen_via, last_seen}]  seen, not paired
 *     (node_id null: a static address known only by the name its port gives)
 * A peer is `{node_id, name, fingerprint, paired_at, address?}`: never a key. Errors use the admin API's
 * envelope `{"error": {message, type, code}}` with a code of docs/errors.md.
 * Must not know: how pairing works (cluster-node.ts), the bearer token, the other admin routes.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { parseHostPort } from "../config/index.js";
import {
  adminFail,
  BodyRefusal,
  readJsonObject,
  refuseBody,
  sendAdminJson as sendJson,
} from "../http/admin-json.js";
import type { ClusterNode } from "./cluster-node.js";
import type { JoinErrorCode } from "./pairing-join.js";

export const PAIRING_ADMIN_PATHS = [
  "/pair/v1/pin",
  "/pair/v1/join",
  "/pair/v1/peers",
  "/pair/v1/unpair",
  "/pair/v1/discovered",
] as const;

/** HTTP status of each way `join` can fail. */
const JOIN_STATUS: Readonly<Record<JoinErrorCode, number>> = {
  invalid_pin: 400,
  pairing_failed: 403,
  pin_attempts_exhausted: 403,
  pin_expired: 403,
  pairing_busy: 503,
  malformed_message: 502,
  unsupported_version: 502,
  peer_unreachable: 502,
  not_a_pair_node: 502,
};

export function isPairingAdminPath(path: string): boolean {
  return (PAIRING_ADMIN_PATHS as readonly string[]).includes(path);
}

/** Serve one of `PAIRING_ADMIN_PATHS` (the caller checked the path and the token). Never rejects. */
export function servePairingAdmin(
  cluster: ClusterNode,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  pairingAdminRoute(cluster, req, res, path).catch((cause: unknown) => {
    if (res.headersSent) res.destroy();
    else fail(res, 500, "upstream_error", `internal error: ${String(cause)}`);
  });
}

async function pairingAdminRoute(
  cluster: ClusterNode,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const method = req.method ?? "GET";
  const wanted = path === "/pair/v1/peers" || path === "/pair/v1/discovered" ? "GET" : "POST";
  if (method !== wanted) {
    req.resume();
    res.setHeader("allow", wanted);
    return fail(res, 405, "invalid_request", `${path} takes ${wanted}`);
  }
  switch (path) {
    case "/pair/v1/pin":
      req.resume();
      return sendJson(res, 200, cluster.issuePin());
    case "/pair/v1/peers":
      return sendJson(res, 200, cluster.pairedPeers());
    case "/pair/v1/discovered":
      req.resume();
      return sendJson(res, 200, cluster.discovered());
    case "/pair/v1/join": {
      const body = await readJsonObject(req);
      if (body instanceof BodyRefusal) return refuseBody(res, body, "pairing_error");
      const { address, pin } = body;
      const parsed = typeof address === "string" ? parseHostPort(address) : undefined;
      if (parsed === undefined || !parsed.ok)
        return fail(
          res,
          400,
          "invalid_request",
          "address: expected the other node's cluster_listen as host:port (default port 14323)",
        );
      if (typeof pin !== "string") return fail(res, 400, "invalid_pin", "pin: expected the 6 digits shown");
      const joined = await cluster.join(parsed.value, pin);
      if (!joined.ok)
        return fail(res, JOIN_STATUS[joined.error.code], joined.error.code, joined.error.message, {
          remote: joined.error.remote,
        });
      return sendJson(res, 200, joined.value);
    }
    case "/pair/v1/unpair": {
      const body = await readJsonObject(req);
      if (body instanceof BodyRefusal) return refuseBody(res, body, "pairing_error");
      const { node } = body;
      if (typeof node !== "string" || node === "")
        return fail(res, 400, "invalid_request", "node: expected a paired node's name or node id");
      const revoked = cluster.unpair(node);
      if (!revoked.ok) return fail(res, 404, revoked.code, revoked.message);
      return sendJson(res, 200, { ...revoked.peer, already_revoked: revoked.alreadyRevoked });
    }
    default:
      req.resume();
      return fail(res, 404, "invalid_request", `no admin route ${path}`);
  }
}

function fail(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  adminFail(res, status, code, message, extra, "pairing_error");
}
