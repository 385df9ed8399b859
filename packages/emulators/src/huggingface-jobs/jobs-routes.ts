/**
 * The Jobs API routes on the hub host (reference §5.1 [C]): create (`POST /api/jobs/{ns}`), list
 * (`GET`, repeatable `stage=` and `label=key=value` filters, `Link: <…>; rel="next"` pagination),
 * inspect, cancel, labels (replace all), logs (SSE) and `GET /api/jobs/hardware`. Auth as the hub:
 * a bearer token with access to the namespace (401 otherwise), write role to mutate (403).
 * Must not know: sockets, TLS, fault switches (the service applies them; a listing only asks which
 * ids to leave out), the proxy.
 */

import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { mayAccess, type Account, type TokenRegistry } from "../huggingface/tokens.js";
import type { BodyRead } from "./http-io.js";
import { renderFlavor, type JobFlavor } from "./flavors.js";
import { isJobStage, type JobStage } from "./job-stages.js";
import { readLabels } from "./job-spec.js";
import { renderJob } from "./jobs-wire.js";
import type { JobRecord, JobResult, JobsWorld } from "./jobs-world.js";

export interface JobsRouteContext {
  readonly world: JobsWorld;
  readonly tokens: TokenRegistry;
  readonly flavors: readonly JobFlavor[];
  readonly baseUrl: () => string;
  readonly nowMs: () => number;
  readonly pageSize: number;
  /** Job ids this listing leaves out (the partial-listing fault; counts the listing against each). */
  readonly hiddenFromListing: () => ReadonlySet<string>;
}

export interface JobsRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: BodyRead;
}

/** A JSON reply, or a stream the route writes itself (logs). */
export type JobsReply =
  | {
      readonly kind: "json";
      readonly status: number;
      readonly body: unknown;
      readonly headers?: Record<string, string>;
    }
  | { readonly kind: "logs"; readonly record: JobRecord };

const error = (status: number, message: string): JobsReply => ({
  kind: "json",
  status,
  body: { error: message },
});

export function isJobsPath(path: string): boolean {
  return path === "/api/jobs" || path.startsWith("/api/jobs/");
}

function jobReply(ctx: JobsRouteContext, result: JobResult): JobsReply {
  if (!result.ok) return error(result.status, result.message);
  return { kind: "json", status: 200, body: renderJob(result.record, ctx.baseUrl(), ctx.nowMs()) };
}

function matchesFilters(
  record: JobRecord,
  stages: JobStage[],
  labels: [string, string | undefined][],
): boolean {
  if (stages.length > 0 && !stages.includes(record.stage)) return false;
  return labels.every(([key, value]) =>
    value === undefined ? key in record.labels : record.labels[key] === value,
  );
}

function list(ctx: JobsRouteContext, namespace: string, request: JobsRequest): JobsReply {
  const stagesRaw = request.query.getAll("stage");
  const bad = stagesRaw.find((stage) => !isJobStage(stage));
  if (bad !== undefined) return error(400, `stage: unknown stage '${bad}'`);
  const stages = stagesRaw.filter(isJobStage);
  const labels = request.query.getAll("label").map((entry): [string, string | undefined] => {
    const cut = entry.indexOf("=");
    return cut < 0 ? [entry, undefined] : [entry.slice(0, cut), entry.slice(cut + 1)];
  });
  const cursorRaw = request.query.get("cursor") ?? "0";
  if (!/^\d{1,9}$/.test(cursorRaw)) return error(400, "cursor: expected the value from the Link header");
  const cursor = Number(cursorRaw);
  const hidden = ctx.hiddenFromListing();
  const all = ctx.world
    .list(namespace)
    .filter((record) => !hidden.has(record.id) && matchesFilters(record, stages, labels));
  const page = all.slice(cursor, cursor + ctx.pageSize);
  const headers: Record<string, string> = {};
  if (cursor + ctx.pageSize < all.length) {
    const next = new URLSearchParams(request.query);
    next.set("cursor", String(cursor + ctx.pageSize));
    headers["link"] =
      `<${ctx.baseUrl()}/api/jobs/${encodeURIComponent(namespace)}?${next.toString()}>; rel="next"`;
  }
  return {
    kind: "json",
    status: 200,
    body: page.map((record) => renderJob(record, ctx.baseUrl(), ctx.nowMs())),
    headers,
  };
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

const who = (account: Account): string => account.namespace;

export function jobsReply(ctx: JobsRouteContext, request: JobsRequest): JobsReply {
  const { method, path } = request;
  if (path === "/api/jobs/hardware") {
    if (method !== "GET") return error(405, `Method ${method} not allowed on ${path}`);
    return { kind: "json", status: 200, body: ctx.flavors.map(renderFlavor) };
  }
  const match = /^\/api\/jobs\/([^/]+)(?:\/([^/]+)(?:\/(cancel|labels|logs))?)?$/.exec(path);
  if (!match?.[1]) return error(404, "Not Found");
  const namespace = decode(match[1]);
  const id = match[2] === undefined ? undefined : decode(match[2]);
  const action = match[3];
  const account = ctx.tokens.fromHeaders(request.headers);
  if (!account) return error(401, "Invalid credentials in Authorization header");
  if (!mayAccess(account, namespace))
    return error(401, `You don't have access to namespace '${namespace}' (no billing or no access)`);
  const mutating = method !== "GET";
  if (mutating && account.role === "read")
    return error(403, `This token has read access only and cannot run or change jobs in '${namespace}'`);
  if (mutating && !request.body.ok) return error(400, `Invalid JSON body: ${request.body.message}`);
  const body = request.body.ok ? request.body.value : undefined;

  if (id === undefined) {
    if (method === "GET") return list(ctx, namespace, request);
    if (method === "POST") return jobReply(ctx, ctx.world.create(namespace, body, who(account)));
    return error(405, `Method ${method} not allowed on ${path}`);
  }
  const notFound = () => error(404, `Job '${id}' not found in namespace '${namespace}'`);
  switch (action) {
    case undefined: {
      if (method !== "GET") return error(405, `Method ${method} not allowed on ${path}`);
      const record = ctx.world.get(namespace, id);
      return record ? jobReply(ctx, { ok: true, record }) : notFound();
    }
    case "cancel":
      if (method !== "POST") return error(405, `Method ${method} not allowed on ${path}`);
      return jobReply(ctx, ctx.world.cancel(namespace, id, who(account)));
    case "labels": {
      if (method !== "PUT") return error(405, `Method ${method} not allowed on ${path}`);
      const labels = readLabels((body as Record<string, unknown> | undefined)?.["labels"]);
      if (!labels.ok) return error(400, labels.message);
      return jobReply(ctx, ctx.world.setLabels(namespace, id, labels.value));
    }
    case "logs": {
      if (method !== "GET") return error(405, `Method ${method} not allowed on ${path}`);
      const record = ctx.world.get(namespace, id);
      return record ? { kind: "logs", record } : notFound();
    }
    default:
      return notFound();
  }
}

export function writeJobsReply(res: ServerResponse, reply: Extract<JobsReply, { kind: "json" }>): void {
  const text = JSON.stringify(reply.body);
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}
