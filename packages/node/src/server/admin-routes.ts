/**
 * The admin API's route dispatch under /pair/v1/ on the client port: who the caller is (bearer token,
 * or the dashboard's session cookie with its CSRF defence), then the pairing, rented, dashboard,
 * events and history routes, and the node's own views (/pair/v1/status, models, nodes, jobs, history).
 * Must not know: the client routes (client-api.ts), how engines are reached or chosen (forward.ts),
 * how config was read.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { isPairingAdminPath, servePairingAdmin } from "../cluster-node/index.js";
import { workloadJson } from "../history/workload-history.js";
import {
  isHfAccountPath,
  isRentedAdminPath,
  serveHfAccount,
  serveRentedAdmin,
  serveSpend,
  serveStateHistory,
  SPEND_PATH,
  STATE_HISTORY_PATH,
} from "../sponsor-routes/index.js";
import type { RentedPeerView } from "@pair/sponsor";
import { adminCaller, CSRF_HEADER, isUiAdminPath, serveUiAdmin } from "../ui/index.js";
import { adminFail } from "../http/admin-json.js";
import { isAdminBatchPath, serveAdminBatches } from "./batch-routes.js";
import type { ClientApiDeps } from "./client-api.js";

/** Serves one /pair/v1/… request on the client port. */
/** On every authenticated admin answer: the node's time now, ISO 8601 with milliseconds. */
export const NODE_TIME_HEADER = "x-pair-time";

export function serveAdmin(
  deps: ClientApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
): void | Promise<void> {
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const caller = adminCaller(
    { adminToken: deps.adminToken, sessions: deps.ui.sessions, cookieName: deps.ui.cookieName },
    {
      method: req.method ?? "GET",
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
      host: req.headers.host,
      origin: header("origin"),
      secFetchSite: header("sec-fetch-site"),
      csrf: header(CSRF_HEADER),
    },
  );
  if (!caller.ok) {
    if (caller.status === 401) res.setHeader("www-authenticate", 'Bearer realm="pair-admin"');
    // Refused before any body is read; the connection closes so an unauthenticated upload stops there.
    res.setHeader("connection", "close");
    return sendJson(res, caller.status, {
      error: { message: caller.message, type: "authentication_error", code: caller.code },
    });
  }
  // The node's clock (virtual in the demo): the dashboard reads every time against it, not its own.
  res.setHeader(NODE_TIME_HEADER, new Date(deps.clock.now().wallMs).toISOString());
  if (isUiAdminPath(path)) return serveUiAdmin(deps.ui, caller, req, res, path);
  if (deps.cluster !== undefined && isPairingAdminPath(path))
    return servePairingAdmin(deps.cluster, req, res, path);
  if (deps.rentedCreator !== undefined && isHfAccountPath(path))
    return serveHfAccount(deps.rentedCreator, req, res, url, () => deps.onPeerVisibleChange?.());
  if (deps.rentedNodes !== undefined && isRentedAdminPath(path))
    return serveRentedAdmin(deps.rentedNodes, req, res, path, () => {
      deps.onPeerVisibleChange?.();
      deps.events?.check();
    });
  if (path === "/pair/v1/events" && deps.events !== undefined) {
    if (req.method !== "GET") return adminFail(res, 405, "invalid_request", `use GET for ${path}`);
    return deps.events.serve(req, res);
  }
  if (path === STATE_HISTORY_PATH && deps.rentedStateHistory !== undefined)
    return serveStateHistory(deps.rentedStateHistory, req, res, url);
  if (path === SPEND_PATH && deps.rentedLedger !== undefined)
    return serveSpend(deps.rentedLedger, req, res, url);
  if (deps.batches !== undefined && isAdminBatchPath(path))
    return serveAdminBatches(deps.batches, req, res, path, url);
  switch (path) {
    case "/pair/v1/status":
      return sendJson(res, 200, {
        node: deps.nodeName,
        version: deps.version,
        engines: deps.inventory.engines.map((e) => ({
          name: e.spec.name,
          api: e.spec.api,
          base_url: e.spec.baseUrl,
          healthy: e.healthy,
          models: e.models,
          in_flight: deps.scheduler.inFlight(e.spec.name),
          max_concurrent: e.spec.maxConcurrent,
          last_error: e.lastError ?? null,
        })),
        queued: deps.scheduler.queued(),
        running_workloads: deps.history.running().length,
        peers: [],
        rented_nodes: deps.rentedNodes?.list() ?? [],
        open_stop_obligations: [],
        ...deps.statusExtras(),
      });
    case "/pair/v1/models":
      return sendJson(res, 200, mergedModels(deps));
    case "/pair/v1/nodes":
      return sendJson(res, 200, mergedNodes(deps));
    case "/pair/v1/jobs":
      return sendJson(res, 200, deps.history.running().map(workloadJson));
    case "/pair/v1/history": {
      const since = url.searchParams.get("since");
      const sinceMs = since === null ? undefined : Date.parse(since);
      if (sinceMs !== undefined && Number.isNaN(sinceMs))
        return sendJson(res, 400, {
          error: {
            message: `since: not a date/time: ${since}`,
            type: "invalid_request_error",
            code: "invalid_request",
          },
        });
      const limit = Number(url.searchParams.get("limit") ?? 1000);
      return sendJson(
        res,
        200,
        deps.history.history({ ...(sinceMs === undefined ? {} : { sinceMs }), limit }).map(workloadJson),
      );
    }
    default:
      return sendJson(res, 404, {
        error: { message: `no admin route ${path}`, type: "invalid_request_error", code: "invalid_request" },
      });
  }
}

/**
 * Model → nodes serving it: this node first, then the peers that are up (admin view only), with each
 * node's context window for it where known (`context_tokens`, by node; docs/context.md).
 */
function mergedModels(
  deps: ClientApiDeps,
): { model: string; nodes: string[]; context_tokens: Record<string, number> }[] {
  const byModel = new Map<string, { nodes: string[]; windows: Record<string, number> }>();
  const add = (model: string, node: string, window: number | undefined) => {
    let row = byModel.get(model);
    if (row === undefined) byModel.set(model, (row = { nodes: [], windows: {} }));
    row.nodes.push(node);
    if (window !== undefined) row.windows[node] = Math.max(window, row.windows[node] ?? 0);
  };
  for (const model of deps.inventory.models().keys()) {
    let window: number | undefined;
    for (const e of deps.inventory.serving(model)) {
      const w = e.windows?.get(model)?.tokens;
      if (w !== undefined && (window === undefined || w > window)) window = w;
    }
    add(model, deps.nodeName, window);
  }
  for (const rented of deps.rentedNodes?.peerViews() ?? [])
    for (const model of rented.models) add(model, rented.name, rented.context_windows?.[model]);
  for (const peer of deps.membership?.members() ?? [])
    if (peer.state === "up") {
      for (const { model, context_window } of peer.models) add(model, peer.name, context_window);
      for (const rented of peer.rented)
        for (const model of rented.models) add(model, rented.name, rented.context_windows?.[model]);
    }
  return [...byModel]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([model, row]) => ({ model, nodes: row.nodes, context_tokens: row.windows }));
}

/** This node, then every paired peer with an address, with its state and what it serves. */
export function mergedNodes(deps: ClientApiDeps): unknown[] {
  const healthy = deps.inventory.engines.filter((e) => e.healthy);
  const self = {
    name: deps.nodeName,
    kind: "self",
    node_id: deps.cluster?.identity.nodeId ?? null,
    state: "up",
    models: [...deps.inventory.models().keys()].sort(),
    in_flight: deps.inventory.engines.reduce((sum, e) => sum + deps.scheduler.inFlight(e.spec.name), 0),
    capacity: healthy.reduce((sum, e) => sum + e.spec.maxConcurrent, 0),
    last_seen: new Date(deps.clock.now().wallMs).toISOString(),
  };
  const peers = (deps.membership?.members() ?? []).map((p) => ({
    name: p.name,
    kind: "peer",
    node_id: p.node_id,
    state: p.state,
    models: p.models.map((m) => m.model),
    in_flight: p.in_flight,
    capacity: p.capacity,
    last_seen: p.last_seen,
    clock_offset_ms: p.clock_offset_ms,
    address: p.address,
    ...(p.last_error === undefined ? {} : { last_error: p.last_error }),
  }));
  const rentedRow = (r: RentedPeerView, sponsor: string, sponsorState: string) => ({
    name: r.name,
    kind: "rented",
    label: r.label,
    provider: r.provider,
    gpu: r.gpu,
    state: sponsorState === "up" ? r.state : "unknown",
    usd_per_hour: r.usd_per_hour,
    usd_per_mtok: r.usd_per_mtok,
    spend_usd: r.spend_usd,
    models: [...r.models],
    shared: r.shared,
    sponsor,
    policy: r.policy,
    eligible: sponsorState === "up" && r.eligible,
    reason: sponsorState === "up" ? r.reason : `its sponsor ${sponsor} is down`,
    off_lan: true,
  });
  const warnings = new Map((deps.rentedNodes?.list() ?? []).map((r) => [r.name, r.warnings]));
  const ownRented = (deps.rentedNodes?.peerViews() ?? []).map((r) => {
    const w = warnings.get(r.name) ?? [];
    return { ...rentedRow(r, deps.nodeName, "up"), ...(w.length === 0 ? {} : { warnings: w }) };
  });
  const peersRented = (deps.membership?.members() ?? []).flatMap((p) =>
    p.rented.map((r) => rentedRow(r, p.name, p.state)),
  );
  return [self, ...peers, ...ownRented, ...peersRented];
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}
