/**
 * The control plane's routes: Inference Endpoints API (`/v2/endpoint/...`, `/v2/provider/...`),
 * the catalog (`/api/catalog/...`) and the hub's `GET /api/whoami-v2`. Each route turns an
 * authenticated request into a reply (status + JSON); the server writes it, or drops it when a
 * lost-answer fault acts (the action was already applied).
 * Must not know: sockets, TLS, fault switches, the data plane.
 */

import type { IncomingHttpHeaders } from "node:http";
import type { CatalogItem, ComputeOption } from "./hardware.js";
import { renderEndpoint, renderProviders, renderWhoami } from "./hf-wire.js";
import { mayAccess, type Account, type TokenRegistry } from "./tokens.js";
import type { HuggingFaceWorld, OpResult } from "./world.js";

export interface Reply {
  readonly status: number;
  readonly body: unknown;
}

export interface ControlContext {
  readonly world: HuggingFaceWorld;
  readonly tokens: TokenRegistry;
  readonly hardware: readonly ComputeOption[];
  readonly catalog: readonly CatalogItem[];
  /** Base URL of the server (data-plane URLs hang off it). */
  readonly baseUrl: () => string;
  /** 1, 2, … for generated names (catalog deploys without a name). */
  readonly nextSerial: () => number;
  /** The names the next listing omits (the partial-listing fault); empty when off. */
  readonly hiddenFromListing: () => ReadonlySet<string>;
}

export interface ControlRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when there was none), or a parse problem. */
  readonly body:
    { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };
}

type Access = "anonymous" | "read" | "write";

interface ControlRoute {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly pattern: RegExp;
  readonly access: Access;
  /** Index of the capture group holding the namespace the token must reach (if any). */
  readonly namespaceGroup?: number;
  readonly run: (
    ctx: ControlContext,
    request: ControlRequest,
    match: string[],
    account: Account | undefined,
  ) => Reply;
}

export const errorReply = (status: number, message: string): Reply => ({ status, body: { error: message } });

const userId = (name: string): string =>
  Array.from(name.padEnd(12, "0").slice(0, 12), (c) =>
    (c.charCodeAt(0) % 256).toString(16).padStart(2, "0"),
  ).join("");

function endpointReply(ctx: ControlContext, result: OpResult): Reply {
  if (!result.ok) return errorReply(result.status, result.message);
  return { status: 200, body: renderEndpoint(result.record, ctx.baseUrl(), userId, ctx.world.timeDigits()) };
}

function bodyValue(request: ControlRequest): unknown {
  return request.body.ok ? request.body.value : undefined;
}

const by = (account: Account | undefined): string => account?.namespace ?? "anonymous";

function catalogDeploy(ctx: ControlContext, request: ControlRequest, account: Account | undefined): Reply {
  const body = bodyValue(request);
  if (typeof body !== "object" || body === null) return errorReply(400, "body: expected a JSON object");
  const { namespace, repoId, endpointName, accelerator } = body as Record<string, unknown>;
  if (typeof namespace !== "string" || typeof repoId !== "string")
    return errorReply(400, "namespace and repoId: expected strings");
  if (!account || !mayAccess(account, namespace))
    return errorReply(401, `You don't have access to namespace '${namespace}' (no billing or no access)`);
  if (account.role === "read") return errorReply(403, `This token cannot deploy in namespace '${namespace}'`);
  const item = ctx.catalog.find(
    (entry) => entry.repoId === repoId && (accelerator === undefined || entry.accelerator === accelerator),
  );
  if (!item)
    return errorReply(
      404,
      `Model '${repoId}' is not in the catalog${typeof accelerator === "string" ? ` for ${accelerator}` : ""}`,
    );
  const base = (repoId.split("/").at(-1) ?? "model")
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 26);
  const name =
    typeof endpointName === "string"
      ? endpointName
      : `${base || "model"}-${ctx.nextSerial().toString(36).padStart(4, "0")}`;
  const result = ctx.world.create(
    namespace,
    {
      name,
      type: "authenticated",
      provider: { vendor: item.vendor, region: item.region },
      compute: {
        accelerator: item.accelerator,
        instanceType: item.instanceType,
        instanceSize: item.instanceSize,
        // The recipe's scaling is not documented: assume the worst for a client, one replica always
        // on and no scale-to-zero, so whoever deploys must set its own backstop by an update.
        scaling: { minReplica: 1, maxReplica: 1 },
      },
      model: {
        repository: item.repoId,
        framework: "pytorch",
        task: item.task,
        image: item.image ?? { vLLM: { url: "vllm/vllm-openai:latest", port: 8000, healthRoute: "/health" } },
        fromCatalog: true,
      },
    },
    by(account),
  );
  if (!result.ok) return errorReply(result.status, result.message);
  return {
    status: 200,
    body: { endpoint: renderEndpoint(result.record, ctx.baseUrl(), userId, ctx.world.timeDigits()) },
  };
}

const SEGMENT = "([^/]+)";

const ROUTES: readonly ControlRoute[] = [
  {
    method: "GET",
    pattern: /^\/api\/whoami-v2$/,
    access: "read",
    run: (_ctx, _request, _match, account) =>
      account
        ? { status: 200, body: renderWhoami(account) }
        : errorReply(401, "Invalid credentials in Authorization header"),
  },
  {
    method: "GET",
    pattern: /^\/v2\/provider$/,
    access: "anonymous",
    run: (ctx) => ({ status: 200, body: renderProviders(ctx.hardware, undefined) }),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/v2/provider/${SEGMENT}$`),
    access: "read",
    namespaceGroup: 1,
    run: (ctx, _request, match) => ({
      status: 200,
      body: renderProviders(ctx.hardware, (option) =>
        ctx.world.quotaUsed(match[1] ?? "", option.vendor, option.instanceType),
      ),
    }),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}$`),
    access: "read",
    namespaceGroup: 1,
    run: (ctx, _request, match) => ({
      status: 200,
      body: {
        items: ((hidden) =>
          ctx.world
            .list(match[1] ?? "")
            .filter((record) => !hidden.has(record.config.name))
            .map((record) => renderEndpoint(record, ctx.baseUrl(), userId, ctx.world.timeDigits())))(
          ctx.hiddenFromListing(),
        ),
      },
    }),
  },
  {
    method: "POST",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}$`),
    access: "write",
    namespaceGroup: 1,
    run: (ctx, request, match, account) =>
      endpointReply(ctx, ctx.world.create(match[1] ?? "", bodyValue(request), by(account))),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}/${SEGMENT}$`),
    access: "read",
    namespaceGroup: 1,
    run: (ctx, _request, match) => {
      const record = ctx.world.get(match[1] ?? "", match[2] ?? "");
      return record
        ? { status: 200, body: renderEndpoint(record, ctx.baseUrl(), userId, ctx.world.timeDigits()) }
        : errorReply(404, `Endpoint '${match[2] ?? ""}' not found in namespace '${match[1] ?? ""}'`);
    },
  },
  {
    method: "PUT",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}/${SEGMENT}$`),
    access: "write",
    namespaceGroup: 1,
    run: (ctx, request, match, account) =>
      endpointReply(ctx, ctx.world.update(match[1] ?? "", match[2] ?? "", bodyValue(request), by(account))),
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}/${SEGMENT}$`),
    access: "write",
    namespaceGroup: 1,
    run: (ctx, _request, match, account) => {
      const result = ctx.world.delete(match[1] ?? "", match[2] ?? "", by(account));
      return result.ok ? { status: 200, body: {} } : errorReply(result.status, result.message);
    },
  },
  ...(["pause", "resume", "scale-to-zero"] as const).map((action): ControlRoute => ({
    method: "POST",
    pattern: new RegExp(`^/v2/endpoint/${SEGMENT}/${SEGMENT}/${action}$`),
    access: "write",
    namespaceGroup: 1,
    run: (ctx, _request, match, account) => {
      const [ns, name, who] = [match[1] ?? "", match[2] ?? "", by(account)];
      switch (action) {
        case "pause":
          return endpointReply(ctx, ctx.world.pause(ns, name, who));
        case "resume":
          return endpointReply(ctx, ctx.world.resume(ns, name, who));
        case "scale-to-zero":
          return endpointReply(ctx, ctx.world.scaleToZero(ns, name, who));
      }
    },
  })),
  {
    method: "GET",
    pattern: /^\/api\/catalog\/repo-list$/,
    access: "anonymous",
    run: (ctx) => ({ status: 200, body: { models: [...new Set(ctx.catalog.map((item) => item.repoId))] } }),
  },
  {
    method: "POST",
    pattern: /^\/api\/catalog\/deploy$/,
    access: "write",
    run: (ctx, request, _match, account) => catalogDeploy(ctx, request, account),
  },
];

/** Whether a path belongs to the control plane (so faults and request ids apply). */
export function isControlPath(path: string): boolean {
  return path.startsWith("/v2/") || path === "/api/whoami-v2" || path.startsWith("/api/catalog/");
}

/** Routes, authenticates and runs one control-plane request. */
export function controlReply(ctx: ControlContext, request: ControlRequest): Reply {
  const onPath = ROUTES.filter((route) => route.pattern.test(request.path));
  const route = onPath.find((candidate) => candidate.method === request.method);
  if (!route)
    return onPath.length > 0
      ? errorReply(405, `Method ${request.method} not allowed on ${request.path}`)
      : errorReply(404, "Not Found");
  const match = (route.pattern.exec(request.path) ?? []).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const account = ctx.tokens.fromHeaders(request.headers);
  if (route.access !== "anonymous") {
    if (!account) return errorReply(401, "Invalid credentials in Authorization header");
    const namespace = route.namespaceGroup === undefined ? undefined : match[route.namespaceGroup];
    if (namespace !== undefined && !mayAccess(account, namespace))
      return errorReply(401, `You don't have access to namespace '${namespace}' (no billing or no access)`);
    if (route.access === "write" && account.role === "read")
      return errorReply(
        403,
        `This token has read access only and cannot change endpoints${namespace ? ` in '${namespace}'` : ""}`,
      );
  }
  if (!request.body.ok && route.method !== "GET" && route.method !== "DELETE")
    return errorReply(400, `Invalid JSON body: ${request.body.message}`);
  return route.run(ctx, request, match, account);
}
