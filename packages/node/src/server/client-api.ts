/**
 * The client port (default 127.0.0.1:11434): OpenAI routes, Ollama routes, the admin API under
 * /pair/v1/ (bearer token, or the dashboard's session cookie with its CSRF defence), the dashboard
 * under /ui (ui/), and /metrics. Every route but the admin API first asks `authenticate`
 * who the caller is (a 401 in the route's dialect when nobody). Every routed request is validated,
 * recorded as a workload with that requester (never its text), forwarded, and answered in its own
 * dialect — errors included, with PAIR's codes.
 * Must not know: how engines are reached or chosen (forward.ts), how config was read, how callers
 * are authenticated (auth/), the admin routes themselves (admin-routes.ts).
 */

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ClusterNode, PeerMembership } from "../cluster-node/index.js";
import { unauthorizedReply, type ClientAuth, type ClientAuthRefusal } from "../auth/index.js";
import {
  isDialectRoute,
  pairErrorOfInvalidRequest,
  pairErrorReply,
  validateRequest,
  type DialectRequests,
  type DialectRoute,
  type PairError,
} from "../dialects/index.js";
import type { Workload, WorkloadHistory } from "../history/workload-history.js";
import type { Metrics } from "../observability/metrics.js";
import { startTimeline } from "../observability/request-timeline.js";
import {
  estimateCostMicroUsd,
  type RentedCreator,
  type RentedNodes,
  type RentedStateHistory,
} from "../rented/index.js";
import { isUiPath, serveUi, type LiveEvents, type UiDeps } from "../ui/index.js";
import { serveAdmin } from "./admin-routes.js";
import {
  ClientGone,
  forward,
  PEER_REQUESTER_HEADER,
  type ForwardDeps,
  type ForwardOutcome,
} from "./forward.js";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../http/json-depth.js";
import {
  clusterServes,
  listOpenAiModels,
  ollamaPs,
  ollamaShow,
  ollamaTags,
  retrieveOpenAiModel,
  sendJson,
} from "./model-routes.js";
import { readBody } from "../http/request-body.js";

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
  /** The dashboard's live updates (`GET /pair/v1/events`, SSE); absent: 404. */
  readonly events?: LiveEvents;
  /** The dashboard: its files, sign-in codes and sessions (also accepted by the admin API). */
  readonly ui: UiDeps;
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
  if (method === "POST" && path === "/api/show") return ollamaShow(deps, req, res);
  if (method === "GET" || method === "HEAD") {
    if (path.startsWith("/v1/models/"))
      return retrieveOpenAiModel(deps, res, path.slice("/v1/models/".length));
    switch (path) {
      case "/":
        return sendText(res, 200, "PAIR is running\n");
      case "/v1/models":
        return listOpenAiModels(deps, res);
      case "/api/tags":
        return ollamaTags(deps, res);
      case "/api/ps":
        return ollamaPs(deps, res);
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

/** Who a routed request is for: the caller's requester id and the node it first reached. */
interface RoutedOrigin {
  readonly requester: string;
  readonly originNode: string;
  /** Came from a peer: serve locally, never forward again. */
  readonly fromPeer?: boolean;
}

/**
 * A paired peer's request, forwarded to this node over mTLS (`POST /pair/v1/peer/route/<client
 * route>`): served by this node's own engines only, recorded with the peer as origin node, answered
 * in the client's dialect for the peer to relay unchanged.
 */
export function peerRouteHandler(
  deps: ClientApiDeps,
): (req: IncomingMessage, res: ServerResponse, peer: { readonly name: string }, route: string) => void {
  return (req, res, peer, route) => {
    const header = req.headers[PEER_REQUESTER_HEADER];
    const requester = typeof header === "string" && /^[\w.:@/-]{1,160}$/.test(header) ? header : "peer";
    const run = isDialectRoute(route)
      ? routed(deps, route, req, res, { requester, originNode: peer.name, fromPeer: true })
      : Promise.resolve(
          sendJson(
            res,
            404,
            pairErrorReply("openai", { code: "invalid_request", message: `no route ${route}` }).body,
          ),
        );
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

/** A workload's estimated cost on a rented node: exact on its sponsor, an upper bound on a peer. */
function offLanCost(deps: ClientApiDeps, w: Workload, durationMs: number): number {
  const use = {
    durationMs,
    ...(w.tokensIn === undefined ? {} : { tokensIn: w.tokensIn }),
    ...(w.tokensOut === undefined ? {} : { tokensOut: w.tokensOut }),
  };
  const name = w.servingNode ?? "";
  if (w.sponsor === deps.nodeName) return deps.rented?.costMicroUsd(name, w.model, use) ?? 0;
  const view = (deps.membership?.members() ?? [])
    .find((m) => m.name === w.sponsor)
    ?.rented.find((r) => r.name === name);
  if (view === undefined) return 0;
  return estimateCostMicroUsd(
    {
      ...(view.usd_per_mtok === null
        ? {}
        : { perMillion: { input: view.usd_per_mtok, output: view.usd_per_mtok } }),
      ...(view.usd_per_hour === null ? {} : { usdPerHour: view.usd_per_hour }),
    },
    use,
  );
}

async function routed(
  deps: ClientApiDeps,
  route: DialectRoute,
  req: IncomingMessage,
  res: ServerResponse,
  origin: RoutedOrigin,
): Promise<void> {
  const startedMono = deps.monoMs();
  const timeline = startTimeline(req.headers["x-pair-trace"]);
  const body = await readBody(req, deps.maxBodyBytes, deps.bodyIdleTimeoutMs);
  timeline?.mark("bodyRead");
  if (!body.ok) {
    // The rest of a stalled body may still come: the connection goes, not just this request.
    if (body.status === 408) res.setHeader("connection", "close");
    return refuseRouted(deps, res, route, { code: body.code, message: body.message }, body.status);
  }
  // Before JSON.parse: everything that walks the parsed body recurses, and must not overflow.
  if (jsonNestsDeeperThan(body.bytes))
    return refuseRouted(deps, res, route, {
      code: "invalid_request",
      message: `the request body nests deeper than ${MAX_JSON_DEPTH} levels`,
    });
  let json: unknown;
  try {
    json = JSON.parse(body.bytes.toString("utf8"));
  } catch (cause) {
    return refuseRouted(deps, res, route, {
      code: "invalid_request",
      message: `the request body is not JSON: ${(cause as Error).message}`,
    });
  }
  const valid = validateRequest(route, json);
  if (!valid.ok) return refuseRouted(deps, res, route, pairErrorOfInvalidRequest(valid.error));
  timeline?.mark("validated");

  const id = randomUUID();
  const workload = deps.history.begin({
    id,
    model: valid.value.model,
    route,
    originNode: origin.originNode,
    requester: origin.requester,
    startedAtMs: deps.nowMs(),
  });
  timeline?.mark("historyBegun");
  try {
    await serveWorkload(deps, route, res, {
      origin,
      body: body.bytes,
      request: valid.value,
      workload,
      id,
      startedMono,
      timeline,
    });
  } finally {
    // Whatever threw on the way, the workload ends: `pair jobs` never shows it running for ever.
    if (workload.status === "running") deps.history.finish(workload, "failed", "upstream_error");
  }
}

/** What `routed` hands on once a request is valid and its workload has begun. */
interface BegunWorkload {
  readonly origin: RoutedOrigin;
  readonly body: Buffer;
  readonly request: DialectRequests[DialectRoute];
  readonly workload: Workload;
  readonly id: string;
  readonly startedMono: number;
  readonly timeline: ReturnType<typeof startTimeline>;
}

/** Forwards a begun workload, answers its outcome, finishes it in history and counts it. */
async function serveWorkload(
  deps: ClientApiDeps,
  route: DialectRoute,
  res: ServerResponse,
  begun: BegunWorkload,
): Promise<void> {
  const { origin, workload, startedMono, timeline } = begun;
  const dialect = route.startsWith("/v1/") ? "openai" : "ollama";
  const gone = new ClientGone();
  gone.watch(res);
  let outcome: ForwardOutcome;
  try {
    outcome = await forward(deps, {
      route,
      request: begun.request,
      raw: begun.body,
      workload,
      id: begun.id,
      res,
      signal: gone,
      localOnly: origin.fromPeer === true,
      timeline,
    });
  } finally {
    gone.unwatch();
  }
  // Served off the LAN: its estimated cost (the sponsor's exact prices, or what the sponsor published).
  if (workload.offLan && workload.servingNode !== undefined)
    workload.estCostMicroUsd = offLanCost(deps, workload, deps.monoMs() - startedMono);
  timeline?.finish(outcome.kind);
  switch (outcome.kind) {
    case "completed":
      deps.history.finish(workload, "completed");
      break;
    case "cancelled":
      deps.history.finish(workload, "cancelled");
      if (!res.headersSent) res.destroy();
      break;
    case "cut":
      deps.history.finish(workload, "failed", "upstream_error");
      break;
    case "error": {
      deps.history.finish(workload, "failed", outcome.error.code);
      if (!res.headersSent) {
        if (outcome.status !== undefined) sendJson(res, outcome.status, outcome.body);
        else {
          const reply = pairErrorReply(dialect, outcome.error);
          sendJson(res, reply.status, reply.body);
        }
      }
      break;
    }
  }
  // Only models some engine serves become label values: a client cannot grow the series without bound.
  const model = clusterServes(deps, workload.model) ? workload.model : "unserved";
  // A peer's work is labelled by its node (a bounded set: paired peers and the rented nodes they sponsor).
  const servedBy =
    workload.servingNode !== undefined && workload.servingNode !== deps.nodeName
      ? `node:${workload.servingNode}`
      : "none";
  const engine = workload.engine ?? servedBy;
  const series = { route, model, engine };
  const outcomeLabel = outcome.kind === "error" ? outcome.error.code : outcome.kind;
  // Not `{ ...series, outcome }`: a spread followed by a property is V8's slow path (µs per request).
  deps.metrics.inc("pair_requests_total", "Routed requests by route, model, engine and outcome.", {
    route,
    model,
    engine,
    outcome: outcomeLabel,
  });
  deps.metrics.observe(
    "pair_request_duration_seconds",
    "Time from request to last byte.",
    series,
    (deps.monoMs() - startedMono) / 1000,
  );
  if (workload.firstByteMs !== undefined)
    deps.metrics.observe(
      "pair_first_byte_seconds",
      "Time from request to the engine's first byte.",
      series,
      workload.firstByteMs / 1000,
    );
  countTokens(deps, model, workload);
}

const TOKENS_HELP = "Tokens by model, serving node and direction (in: the prompt, out: generated).";

/** Tokens the engine reported, by the node that served them (this node, a peer or a rented node). */
function countTokens(deps: ClientApiDeps, model: string, workload: Workload): void {
  const node = workload.servingNode ?? deps.nodeName;
  if (workload.tokensIn !== undefined && workload.tokensIn > 0)
    deps.metrics.inc("pair_tokens_total", TOKENS_HELP, { model, node, direction: "in" }, workload.tokensIn);
  if (workload.tokensOut !== undefined && workload.tokensOut > 0)
    deps.metrics.inc("pair_tokens_total", TOKENS_HELP, { model, node, direction: "out" }, workload.tokensOut);
}

/** A routed request refused before it was forwarded (bad body, invalid): answered and counted. */
function refuseRouted(
  deps: ClientApiDeps,
  res: ServerResponse,
  route: DialectRoute,
  error: PairError,
  status?: number,
): void {
  const reply = pairErrorReply(route.startsWith("/v1/") ? "openai" : "ollama", error);
  sendJson(res, status ?? reply.status, reply.body);
  deps.metrics.inc("pair_requests_total", "Routed requests by route, model, engine and outcome.", {
    route,
    model: "unserved",
    engine: "none",
    outcome: error.code,
  });
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
