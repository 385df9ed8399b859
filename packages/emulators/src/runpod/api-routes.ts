/**
 * The REST v2 control-plane surface over HTTP: bearer auth (401 problem), per-key rate limits
 * (headers on every answer, 429 + Retry-After over quota), the call-level faults, and the pod
 * routes — `GET/POST /v2/pods`, `GET/DELETE /v2/pods/{id}`, `POST /v2/pods/{id}/action` — mapped
 * onto the in-process control plane — and `GET /v2/catalog/gpus` (prices, maxCount). Errors are `application/problem+json`.
 * Must not know: the lifecycle rules (the control plane's), the pod proxy, TLS.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { ServerResponse } from "node:http";
import { readJsonObject, sendJson, type Exchange } from "../engine/http-exchange.js";
import type { GpuCatalog } from "./catalog.js";
import type { RunpodClock } from "./clock.js";
import type { Outcome, RunpodControlPlane } from "./control-plane.js";
import type { CallFaults } from "./faults.js";
import { POD_ACTIONS, type PodAction } from "./pod-lifecycle.js";
import { createRefusal, problem, type Problem } from "./problem.js";
import type { RateLimiter } from "./rate-limit.js";

export interface ApiContext {
  readonly apiKey: string;
  readonly plane: RunpodControlPlane;
  readonly catalog: GpuCatalog;
  readonly clock: RunpodClock;
  readonly limiter: RateLimiter;
  readonly calls: CallFaults;
  readonly maxBodyBytes: number;
  /** Told of every authenticated control-plane call (the emulator's request log). */
  readonly seen: (method: string, path: string, fault: "none" | "fail" | "rate-limit") => void;
}

const POD_PATH = /^\/v2\/pods\/([^/]+)$/;
const ACTION_PATH = /^\/v2\/pods\/([^/]+)\/action$/;

export function sendProblem(res: ServerResponse, body: Problem, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, body.status, body, "application/problem+json");
}

function sendOutcome<T>(res: ServerResponse, outcome: Outcome<T>, status: number): void {
  if (!outcome.ok) return sendProblem(res, outcome.problem);
  if (outcome.value === undefined) {
    res.statusCode = 204;
    res.end();
    return;
  }
  sendJson(res, status, outcome.value);
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The bearer token check; the problem to send when it fails. */
function authProblem(ctx: ApiContext, header: string | undefined): Problem | undefined {
  if (!header) return problem(401, "missing bearer token");
  const match = /^bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return problem(401, "malformed authorization header: expected 'Bearer <api key>'");
  return timingSafeEqual(digest(match[1] ?? ""), digest(ctx.apiKey))
    ? undefined
    : problem(401, "invalid bearer token");
}

function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

async function readBody(ctx: ApiContext, exchange: Exchange): Promise<Record<string, unknown> | undefined> {
  const parsed = await readJsonObject(exchange, ctx.maxBodyBytes);
  if (parsed.ok) return parsed.value;
  if (parsed.problem === "aborted") return undefined;
  const status = parsed.problem === "too_large" ? 413 : 400;
  sendProblem(exchange.res, problem(status, `request body: ${parsed.detail}`));
  return undefined;
}

/**
 * Carries out a create or terminate — held first when a hold is armed for it: at once with only the
 * answer held, or only once released with "apply". Undefined when nothing is to be answered (dropped
 * unapplied: the connection is cut; or the client left while it was held).
 */
async function carryOut<T>(
  ctx: ApiContext,
  exchange: Exchange,
  call: "create" | "terminate",
  act: () => Outcome<T>,
): Promise<Outcome<T> | undefined> {
  const applied = ctx.calls.takeHold(call);
  if (applied === undefined) return act();
  const early = applied === "before-answer" ? act() : undefined;
  const how = await ctx.calls.held.park();
  if (how === "drop" && early === undefined) {
    exchange.req.socket.destroy();
    return undefined;
  }
  const outcome = early ?? act();
  return exchange.req.socket.destroyed ? undefined : outcome; // gone: carried out, never answered
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendProblem(res, problem(405, "The requested method is not allowed for this path."), { allow });
}

export async function handleApi(ctx: ApiContext, exchange: Exchange): Promise<void> {
  const { req, res, path } = exchange;
  res.setHeader("server", "runpod-emulator");
  const refused = authProblem(ctx, req.headers.authorization);
  if (refused) {
    req.resume();
    return sendProblem(res, refused, { "www-authenticate": 'Bearer realm="runpod"' });
  }
  const rate = ctx.limiter.take(ctx.apiKey, ctx.clock.now());
  res.setHeader("ratelimit", rate.rateLimit);
  res.setHeader("ratelimit-policy", rate.rateLimitPolicy);
  if (!rate.allowed) {
    req.resume();
    return sendProblem(res, problem(429, "rate limit exceeded"), {
      "retry-after": String(rate.retryAfterS ?? 1),
    });
  }
  const method = req.method ?? "GET";
  const limitedS = ctx.calls.takeRateLimit();
  if (limitedS !== undefined) {
    ctx.seen(method, path, "rate-limit");
    req.resume();
    return sendProblem(res, problem(429, "rate limit exceeded (injected)"), {
      "retry-after": String(limitedS),
    });
  }
  const injected = ctx.calls.takeCallFailure();
  ctx.seen(method, path, injected === undefined ? "none" : "fail");
  if (injected !== undefined) {
    req.resume();
    return sendProblem(res, problem(injected, "injected fault: the emulated control plane failed this call"));
  }
  if (path === "/v2/catalog/gpus") {
    req.resume();
    if (method !== "GET") return methodNotAllowed(res, "GET");
    if (ctx.calls.catalogFailure !== undefined)
      return sendProblem(res, problem(ctx.calls.catalogFailure, "injected fault: the catalogue failed"));
    return sendJson(
      res,
      200,
      ctx.catalog.wire(new URL(req.url ?? "/", "http://x").searchParams.get("include") === "AVAILABILITY"),
    );
  }
  if (path === "/v2/pods") {
    if (method === "GET") {
      const hidden = ctx.calls.takeHidden();
      return sendJson(res, 200, { pods: ctx.plane.list().filter((pod) => !hidden.has(pod.id)) });
    }
    if (method !== "POST") return methodNotAllowed(res, "GET, POST");
    const body = await readBody(ctx, exchange);
    if (!body) return;
    const refusal = ctx.calls.takeCreateRefusal();
    if (refusal !== undefined) return sendProblem(res, createRefusal(refusal));
    const outcome = await carryOut(ctx, exchange, "create", () => ctx.plane.create(body));
    if (outcome === undefined) return;
    if (outcome.ok && ctx.calls.takeLostCreate()) {
      // The pod exists and bills; the client never hears of it.
      res.socket?.destroy();
      return;
    }
    return sendOutcome(res, outcome, 201);
  }
  const action = ACTION_PATH.exec(path);
  if (action) {
    if (method !== "POST") return methodNotAllowed(res, "POST");
    const body = await readBody(ctx, exchange);
    if (!body) return;
    const extra = Object.keys(body).filter((key) => key !== "action");
    const name = body["action"];
    if (extra.length > 0 || typeof name !== "string" || !POD_ACTIONS.includes(name as PodAction)) {
      const errors = [
        ...(extra.length > 0
          ? [`$: additional properties ${extra.map((k) => `'${k}'`).join(", ")} not allowed`]
          : []),
        ...(typeof name !== "string" || !POD_ACTIONS.includes(name as PodAction)
          ? [`$.action: value must be one of ${POD_ACTIONS.map((a) => `'${a}'`).join(", ")}`]
          : []),
      ];
      return sendProblem(res, problem(422, "Request validation failed.", errors));
    }
    const target = decodeId(action[1] ?? "");
    if (name === "stop" && ctx.calls.stopsIgnored && ctx.plane.get(target).ok)
      return sendOutcome(res, ctx.plane.get(target), 200); // accepted; the pod runs on
    return sendOutcome(res, ctx.plane.act(target, name as PodAction), 200);
  }
  const pod = POD_PATH.exec(path);
  if (pod) {
    const id = decodeId(pod[1] ?? "");
    if (method === "GET") return sendOutcome(res, ctx.plane.get(id), 200);
    if (method === "DELETE") {
      if (ctx.calls.stopsIgnored && ctx.plane.get(id).ok)
        return sendOutcome(res, { ok: true, value: undefined }, 204);
      const removed = await carryOut(ctx, exchange, "terminate", () => ctx.plane.remove(id));
      if (removed === undefined) return;
      if (removed.ok && ctx.calls.takeLostTerminate()) {
        // Terminated; the client never hears of it.
        res.socket?.destroy();
        return;
      }
      return sendOutcome(res, removed, 204);
    }
    return methodNotAllowed(res, "GET, DELETE");
  }
  req.resume();
  sendProblem(res, problem(404, `no route for ${method} ${path} in the runpod emulator (pods only)`));
}
