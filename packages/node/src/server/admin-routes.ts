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
import { adminCaller, CSRF_HEADER, isUiAdminPath, serveUiAdmin, type AdminCaller } from "../ui/index.js";
import { adminFail } from "../http/admin-json.js";
import { isAdminBatchPath, serveAdminBatches } from "./batch-routes.js";
import type { ClientApiDeps } from "./client-api.js";

/** On every authenticated admin answer: the node's time now, ISO 8601 with milliseconds. */
export const NODE_TIME_HEADER = "x-pair-time";

/** Serves one /pair/v1/… request on the client port. */
export function serveAdmin(
  deps: ClientApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
): void | Promise<void> {
  const caller = callerOf(deps, req);
  if (!caller.ok) return refuse(res, caller);
  // The node's clock (virtual in the demo): the dashboard reads every time against it, not its own.
  res.setHeader(NODE_TIME_HEADER, new Date(deps.clock.now().wallMs).toISOString());
  const request: AdminRequest = { deps, caller, req, res, path, url };
  for (const area of ADMIN_AREAS) {
    const serve = area(request);
    if (serve !== undefined) return serve();
  }
  const view = ADMIN_VIEWS.get(path);
  if (view !== undefined) return view(request);
  return invalidRequest(res, 404, `no admin route ${path}`);
}

/** Who is asking: the bearer token, or the dashboard's session cookie with its CSRF defence. */
function callerOf(deps: ClientApiDeps, req: IncomingMessage): AdminCaller {
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return adminCaller(
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
}

function refuse(res: ServerResponse, caller: Extract<AdminCaller, { ok: false }>): void {
  if (caller.status === 401) res.setHeader("www-authenticate", 'Bearer realm="pair-admin"');
  // Refused before any body is read; the connection closes so an unauthenticated upload stops there.
  res.setHeader("connection", "close");
  sendJson(res, caller.status, {
    error: { message: caller.message, type: "authentication_error", code: caller.code },
  });
}

/** One authenticated admin request. */
interface AdminRequest {
  readonly deps: ClientApiDeps;
  readonly caller: Extract<AdminCaller, { ok: true }>;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  readonly url: URL;
}

/** A mounted area: how it serves the request when the path is its and this node has it, else undefined. */
type AdminArea = (r: AdminRequest) => (() => void | Promise<void>) | undefined;

/** The areas, in the order they are tried. */
const ADMIN_AREAS: readonly AdminArea[] = [
  ({ deps, caller, req, res, path }) =>
    isUiAdminPath(path) ? () => serveUiAdmin(deps.ui, caller, req, res, path) : undefined,
  ({ deps: { cluster }, req, res, path }) =>
    cluster !== undefined && isPairingAdminPath(path)
      ? () => servePairingAdmin(cluster, req, res, path)
      : undefined,
  ({ deps, req, res, path, url }) => {
    const creator = deps.rentedCreator;
    if (creator === undefined || !isHfAccountPath(path)) return undefined;
    return () => serveHfAccount(creator, req, res, url, () => deps.onPeerVisibleChange?.());
  },
  ({ deps, req, res, path }) => {
    const rented = deps.rentedNodes;
    if (rented === undefined || !isRentedAdminPath(path)) return undefined;
    return () =>
      serveRentedAdmin(rented, req, res, path, () => {
        deps.onPeerVisibleChange?.();
        deps.events?.check();
      });
  },
  ({ deps: { events }, req, res, path }) => {
    if (path !== "/pair/v1/events" || events === undefined) return undefined;
    return () =>
      req.method === "GET"
        ? events.serve(req, res)
        : adminFail(res, 405, "invalid_request", `use GET for ${path}`);
  },
  ({ deps: { rentedStateHistory }, req, res, path, url }) =>
    path === STATE_HISTORY_PATH && rentedStateHistory !== undefined
      ? () => serveStateHistory(rentedStateHistory, req, res, url)
      : undefined,
  ({ deps: { rentedLedger }, req, res, path, url }) =>
    path === SPEND_PATH && rentedLedger !== undefined
      ? () => serveSpend(rentedLedger, req, res, url)
      : undefined,
  ({ deps: { batches }, req, res, path, url }) =>
    batches !== undefined && isAdminBatchPath(path)
      ? () => serveAdminBatches(batches, req, res, path, url)
      : undefined,
];

/** The node's own views, by path. */
const ADMIN_VIEWS: ReadonlyMap<string, (r: AdminRequest) => void> = new Map([
  ["/pair/v1/status", ({ deps, res }: AdminRequest) => sendJson(res, 200, statusJson(deps))],
  ["/pair/v1/models", ({ deps, res }: AdminRequest) => sendJson(res, 200, mergedModels(deps))],
  ["/pair/v1/nodes", ({ deps, res }: AdminRequest) => sendJson(res, 200, mergedNodes(deps))],
  [
    "/pair/v1/jobs",
    ({ deps, res }: AdminRequest) => sendJson(res, 200, deps.history.running().map(workloadJson)),
  ],
  ["/pair/v1/history", serveHistory],
]);

function statusJson(deps: ClientApiDeps): Record<string, unknown> {
  return {
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
  };
}

/** `/pair/v1/history[?since=…&limit=…]`: the workload history, `since` an ISO date/time. */
function serveHistory({ deps, res, url }: AdminRequest): void {
  const since = url.searchParams.get("since");
  const sinceMs = since === null ? undefined : Date.parse(since);
  if (sinceMs !== undefined && Number.isNaN(sinceMs))
    return invalidRequest(res, 400, `since: not a date/time: ${since}`);
  const limit = Number(url.searchParams.get("limit") ?? 1000);
  sendJson(
    res,
    200,
    deps.history.history({ ...(sinceMs === undefined ? {} : { sinceMs }), limit }).map(workloadJson),
  );
}

function invalidRequest(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: "invalid_request_error", code: "invalid_request" } });
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
