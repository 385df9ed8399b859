/**
 * A routed request (an OpenAI or Ollama route, from a client or a paired peer), in steps: read and
 * validate its body, begin its workload, forward it (forward.ts), answer its outcome in the client's
 * dialect — errors with PAIR's codes and the headers that say whether a retry helps — and count it.
 * Must not know: how engines are reached or chosen (forward.ts), how callers are authenticated.
 */

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  pairErrorHeaders,
  pairErrorOfInvalidRequest,
  pairErrorReply,
  validateRequest,
  type DialectRequests,
  type DialectRoute,
  type PairError,
} from "@pair/dialects";
import type { Workload } from "../history/workload-history.js";
import { startTimeline } from "../observability/request-timeline.js";
import type { Priority } from "../scheduler/scheduler.js";
import { estimateCostMicroUsd } from "@pair/sponsor";
import type { ClientApiDeps } from "./client-api.js";
import { ClientGone, forward, type ForwardOutcome, type ForwardRequest } from "./forward.js";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../http/json-depth.js";
import { clusterServes, sendJson } from "./model-routes.js";
import { readBody } from "../http/request-body.js";

/** Who a routed request is for: the caller's requester id and the node it first reached. */
export interface RoutedOrigin {
  readonly requester: string;
  readonly originNode: string;
  /** Came from a peer: serve locally, never forward again. */
  readonly fromPeer?: boolean;
  /** A batch line: behind users' requests for every slot (default interactive). */
  readonly priority?: Priority;
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

/**
 * A routed request, in steps: read and validate it (refused in its dialect when it is not one),
 * begin its workload, forward it, answer its outcome, count it.
 */
export async function routed(
  deps: ClientApiDeps,
  route: DialectRoute,
  req: IncomingMessage,
  res: ServerResponse,
  origin: RoutedOrigin,
): Promise<void> {
  const startedMono = deps.clock.now().monoMs;
  const timeline = startTimeline(req.headers["x-pair-trace"]);
  const read = await readRequest(deps, route, req, timeline);
  if (!read.ok) {
    // The rest of a stalled body may still come: the connection goes, not just this request.
    if (read.status === 408) res.setHeader("connection", "close");
    return refuseRouted(deps, res, route, read.error, read.status);
  }
  const id = randomUUID();
  const workload = deps.history.begin({
    id,
    model: read.request.model,
    route,
    originNode: origin.originNode,
    requester: origin.requester,
    startedAtMs: deps.clock.now().wallMs,
  });
  timeline?.mark("historyBegun");
  try {
    const outcome = await forwardWatched(deps, {
      route,
      request: read.request,
      raw: read.body,
      workload,
      id,
      res,
      signal: new ClientGone(),
      localOnly: origin.fromPeer === true,
      ...(origin.priority === undefined ? {} : { priority: origin.priority }),
      timeline,
    });
    // Served off the LAN: its estimated cost (the sponsor's exact prices, or what the sponsor published).
    if (workload.offLan && workload.servingNode !== undefined)
      workload.estCostMicroUsd = offLanCost(deps, workload, deps.clock.now().monoMs - startedMono);
    timeline?.finish(outcome.kind);
    answer(deps, route, res, workload, outcome);
    countRouted(deps, route, workload, outcome, startedMono);
  } finally {
    // Whatever threw on the way, the workload ends: `pair jobs` never shows it running for ever.
    if (workload.status === "running") deps.history.finish(workload, "failed", "upstream_error");
  }
}

type ReadRequest =
  | { readonly ok: true; readonly body: Buffer; readonly request: DialectRequests[DialectRoute] }
  | { readonly ok: false; readonly error: PairError; readonly status?: number };

/** The request's body, read within its limits, parsed and validated for its route. */
async function readRequest(
  deps: ClientApiDeps,
  route: DialectRoute,
  req: IncomingMessage,
  timeline: ReturnType<typeof startTimeline>,
): Promise<ReadRequest> {
  const body = await readBody(req, deps.maxBodyBytes, deps.bodyIdleTimeoutMs);
  timeline?.mark("bodyRead");
  if (!body.ok) return { ok: false, error: { code: body.code, message: body.message }, status: body.status };
  // Before JSON.parse: everything that walks the parsed body recurses, and must not overflow.
  if (jsonNestsDeeperThan(body.bytes))
    return {
      ok: false,
      error: {
        code: "invalid_request",
        message: `the request body nests deeper than ${MAX_JSON_DEPTH} levels`,
      },
    };
  let json: unknown;
  try {
    json = JSON.parse(body.bytes.toString("utf8"));
  } catch (cause) {
    const message = `the request body is not JSON: ${(cause as Error).message}`;
    return { ok: false, error: { code: "invalid_request", message } };
  }
  const valid = validateRequest(route, json);
  if (!valid.ok) return { ok: false, error: pairErrorOfInvalidRequest(valid.error) };
  timeline?.mark("validated");
  return { ok: true, body: body.bytes, request: valid.value };
}

/** `forward`, aborted when the client goes away (its response closes before the reply ended). */
async function forwardWatched(
  deps: ClientApiDeps,
  fr: ForwardRequest & { readonly signal: ClientGone },
): Promise<ForwardOutcome> {
  fr.signal.watch(fr.res);
  try {
    return await forward(deps, fr);
  } finally {
    fr.signal.unwatch();
  }
}

/** Finishes the workload in history and answers the client (an error in its dialect, with its retry headers). */
function answer(
  deps: ClientApiDeps,
  route: DialectRoute,
  res: ServerResponse,
  workload: Workload,
  outcome: ForwardOutcome,
): void {
  switch (outcome.kind) {
    case "completed":
      return deps.history.finish(workload, "completed");
    case "cancelled":
      deps.history.finish(workload, "cancelled");
      if (!res.headersSent) res.destroy();
      return;
    case "cut":
      return deps.history.finish(workload, "failed", "upstream_error");
    case "error": {
      deps.history.finish(workload, "failed", outcome.error.code);
      if (res.headersSent) return;
      if (outcome.status !== undefined) return sendJson(res, outcome.status, outcome.body, outcome.headers);
      const reply = pairErrorReply(route.startsWith("/v1/") ? "openai" : "ollama", outcome.error);
      return sendJson(res, reply.status, reply.body, pairErrorHeaders(outcome.error.code));
    }
  }
}

/** A routed request's metrics: its outcome, its duration and first byte, its tokens. */
function countRouted(
  deps: ClientApiDeps,
  route: DialectRoute,
  workload: Workload,
  outcome: ForwardOutcome,
  startedMono: number,
): void {
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
    (deps.clock.now().monoMs - startedMono) / 1000,
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
export function refuseRouted(
  deps: ClientApiDeps,
  res: ServerResponse,
  route: DialectRoute,
  error: PairError,
  status?: number,
): void {
  const reply = pairErrorReply(route.startsWith("/v1/") ? "openai" : "ollama", error);
  sendJson(res, status ?? reply.status, reply.body, pairErrorHeaders(error.code));
  deps.metrics.inc("pair_requests_total", "Routed requests by route, model, engine and outcome.", {
    route,
    model: "unserved",
    engine: "none",
    outcome: error.code,
  });
}
