/**
 * The client port (default 127.0.0.1:11434): OpenAI routes, Ollama routes, the admin API under
 * /pair/v1/ (bearer token, or the dashboard's session cookie with its CSRF defence), the dashboard
 * under /ui (ui/), and /metrics. Every route but the admin API first asks `authenticate`
 * who the caller is (a 401 in the route's dialect when nobody). Every routed request is validated,
 * recorded as a workload with that requester (never its text), forwarded, and answered in its own
 * dialect — errors included, with PAIR's codes (routed.ts).
 * Must not know: how engines are reached or chosen (forward.ts), how config was read, how callers
 * are authenticated (auth/), the admin routes themselves (admin-routes.ts).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { ClusterNode, PeerMembership } from "../cluster-node/index.js";
import { unauthorizedReply, type ClientAuth, type ClientAuthRefusal } from "../auth/index.js";
import { isDialectRoute, pairErrorReply, type PairError } from "@pair/dialects";
import type { WorkloadHistory } from "../history/workload-history.js";
import type { Metrics } from "../observability/metrics.js";
import type { RentedCreator, RentedNodes, RentedStateHistory, SharedLedger } from "@pair/sponsor";
import { isUiPath, serveUi, type LiveEvents, type UiDeps } from "../ui/index.js";
import { serveAdmin } from "./admin-routes.js";
import { isBatchPath, serveBatchRoute, type BatchRouteDeps } from "./batch-routes.js";
import { PEER_PRIORITY_HEADER, PEER_REQUESTER_HEADER, type ForwardDeps } from "./forward.js";
import { listOpenAiModels, retrieveOpenAiModel, sendJson } from "./model-routes.js";
import { ollamaPs, ollamaShow, ollamaTags } from "./ollama-model-routes.js";
import { routed } from "./routed.js";

/** The Ollama version PAIR reports on /api/version, for clients that check for features. */
export const OLLAMA_COMPAT_VERSION = "0.12.0";

export interface ClientApiDeps extends ForwardDeps {
  readonly history: WorkloadHistory;
  readonly metrics: Metrics;
  readonly adminToken: string;
  readonly maxBodyBytes: number;
  /** Longest silence while a request body arrives (default BODY_IDLE_TIMEOUT_MS). */
  readonly bodyIdleTimeoutMs?: number;
  readonly version: string;
  /** Extra fields for /pair/v1/status (listen addresses, config file, …). */
  readonly statusExtras: () => Record<string, unknown>;
  /** Who sent this request (an API key's id, `local`), or why nobody may. Not asked for /pair/v1/…. */
  readonly authenticate: (req: IncomingMessage) => ClientAuth;
  /** Pairing (/pair/v1/pin, join, peers, unpair); absent: those routes do not exist. */
  readonly cluster?: ClusterNode;
  /** Paired peers' state and inventories, for /pair/v1/models and /pair/v1/nodes; absent: self only. */
  readonly membership?: PeerMembership;
  /** Rented nodes this node sponsors (admin routes, views); absent: none. */
  readonly rentedNodes?: RentedNodes;
  /** `pair rented create | catalog | hardware` and the account check; absent: those routes do not exist. */
  readonly rentedCreator?: RentedCreator;
  /** Something peers see changed (a rented node's share switch): tell them now. */
  readonly onPeerVisibleChange?: () => void;
  /** The rented nodes' state history (`GET /pair/v1/rented/history?name=`); absent: 404. */
  readonly rentedStateHistory?: RentedStateHistory;
  /** The sponsor's spend ledger (spend over time for the dashboard). */
  readonly rentedLedger?: SharedLedger;
  /** The dashboard's live updates (`GET /pair/v1/events`, SSE); absent: 404. */
  readonly events?: LiveEvents;
  /** The dashboard: its files, sign-in codes and sessions (also accepted by the admin API). */
  readonly ui: UiDeps;
  /** OpenAI's Files and Batch APIs (`/v1/files`, `/v1/batches`); absent: 404. */
  readonly batches?: BatchRouteDeps;
}

export function clientHandler(deps: ClientApiDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void handle(deps, req, res).catch((cause: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {
          error: {
            message: `internal error: ${String(cause)}`,
            type: "server_error",
            code: "upstream_error",
          },
        });
      else res.destroy();
    });
  };
}

async function handle(deps: ClientApiDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? "GET";
  // A client route as clients send it (nothing to decode or normalise) skips the URL parser.
  const raw = req.url ?? "/";
  if (method === "POST" && isDialectRoute(raw)) {
    const auth = deps.authenticate(req);
    if (!auth.ok) return refuse(deps, res, raw, auth.reason);
    return routed(deps, raw, req, res, { requester: auth.requester, originNode: deps.nodeName });
  }
  const url = new URL(raw, "http://pair.invalid");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  if (path.startsWith("/pair/v1/")) return serveAdmin(deps, req, res, path, url);
  // The dashboard signs in with its own code and session, not an API key (ui-routes.ts).
  if (isUiPath(url.pathname)) return serveUi(deps.ui, req, res, url);
  const auth = deps.authenticate(req);
  if (!auth.ok) return refuse(deps, res, path, auth.reason);
  if (method === "POST" && isDialectRoute(path))
    return routed(deps, path, req, res, { requester: auth.requester, originNode: deps.nodeName });
  if (deps.batches !== undefined && isBatchPath(path))
    return serveBatchRoute(deps.batches, req, res, path, url, auth.requester);
  if (method === "POST" && path === "/api/show") return ollamaShow(deps, req, res, "cluster");
  if (method === "GET" || method === "HEAD") {
    if (path.startsWith("/v1/models/"))
      return retrieveOpenAiModel(deps, res, path.slice("/v1/models/".length));
    switch (path) {
      case "/":
        return sendText(res, 200, "PAIR is running\n");
      case "/v1/models":
        return listOpenAiModels(deps, res, "cluster");
      case "/api/tags":
        return ollamaTags(deps, res, "cluster");
      case "/api/ps":
        return ollamaPs(deps, res, "cluster");
      case "/api/version":
        return sendJson(res, 200, { version: OLLAMA_COMPAT_VERSION, pair_version: deps.version });
      case "/metrics":
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
        res.end(deps.metrics.render());
        return;
    }
  }
  const error: PairError = { code: "invalid_request", message: `no route ${method} ${path}` };
  const reply = pairErrorReply(path.startsWith("/api/") ? "ollama" : "openai", error);
  sendJson(res, 404, reply.body);
}

/**
 * A paired peer's request, forwarded to this node over mTLS (`POST /pair/v1/peer/route/<client
 * route>`): served by this node's own engines only, recorded with the peer as origin node, answered
 * in the client's dialect for the peer to relay unchanged. `/api/tags`, `/api/show`, `/api/ps` and
 * `/v1/models` answer for this node alone, for the asking node to merge (ollama-model-routes.ts).
 */
export function peerRouteHandler(
  deps: ClientApiDeps,
): (req: IncomingMessage, res: ServerResponse, peer: { readonly name: string }, route: string) => void {
  return (req, res, peer, route) => {
    const header = req.headers[PEER_REQUESTER_HEADER];
    const requester = typeof header === "string" && /^[\w.:@/-]{1,160}$/.test(header) ? header : "peer";
    const priority = req.headers[PEER_PRIORITY_HEADER] === "batch" ? "batch" : "interactive";
    const run = isDialectRoute(route)
      ? routed(deps, route, req, res, { requester, originNode: peer.name, fromPeer: true, priority })
      : nodeModelRoute(deps, req, res, route);
    void run.catch((cause: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {
          error: {
            message: `internal error: ${String(cause)}`,
            type: "server_error",
            code: "upstream_error",
          },
        });
      else res.destroy();
    });
  };
}

/** A peer's question about this node's models, or 404. */
function nodeModelRoute(
  deps: ClientApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
): Promise<void> {
  if (route === "/api/show") return ollamaShow(deps, req, res, "node");
  req.resume();
  if (route === "/api/tags") return ollamaTags(deps, res, "node");
  if (route === "/api/ps") return ollamaPs(deps, res, "node");
  if (route === "/v1/models") return listOpenAiModels(deps, res, "node");
  const reply = pairErrorReply("openai", { code: "invalid_request", message: `no route ${route}` });
  sendJson(res, 404, reply.body);
  return Promise.resolve();
}

function refuse(deps: ClientApiDeps, res: ServerResponse, path: string, reason: ClientAuthRefusal): void {
  deps.metrics.inc(
    "pair_client_auth_refusals_total",
    "Client requests refused for want of a valid API key.",
    {
      reason,
    },
  );
  const reply = unauthorizedReply(path.startsWith("/api/") ? "ollama" : "openai", reason);
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.setHeader("connection", "close");
  sendJson(res, reply.status, reply.body);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}
