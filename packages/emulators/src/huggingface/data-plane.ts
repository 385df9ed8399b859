/**
 * Each endpoint's data plane at its `status.url` (`/endpoints/{label}`): access control by the
 * endpoint's type, state gating (paused and failed answer 503; a scaled-to-zero endpoint wakes and
 * answers 503 at once, or holds the request while a replica starts when it carries
 * `X-Scale-Up-Timeout`), idle tracking, then the endpoint's own engine (a vLLM-like OpenAI server)
 * serves it. Held requests are released when the virtual clock moves.
 * Must not know: the control plane's routes, billing, fault switches.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { EmulatorTime } from "./emulator-time.js";
import { isServing, isStarting } from "./endpoint-states.js";
import { imageOf, servesOpenAi, serveToolkit } from "./inference-toolkit.js";
import { mayAccess, type TokenRegistry } from "./tokens.js";
import type { EndpointRecord, HuggingFaceWorld } from "./world.js";

/** Longest X-Scale-Up-Timeout honoured, in seconds (HF documents 600 as an example, no maximum). */
export const MAX_SCALE_UP_TIMEOUT_S = 3600;

interface Held {
  readonly record: EndpointRecord;
  readonly deadlineMs: number;
  readonly timeoutS: number;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly rest: string;
}

function sendError(res: ServerResponse, status: number, message: string): void {
  const text = JSON.stringify({ error: message });
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/** Seconds from `X-Scale-Up-Timeout`, or undefined when absent or not a positive number. */
function scaleUpTimeoutS(req: IncomingMessage): number | undefined {
  const raw = req.headers["x-scale-up-timeout"];
  const value = Number(Array.isArray(raw) ? raw[0] : raw);
  if (raw === undefined || !Number.isFinite(value) || value <= 0) return undefined;
  return Math.min(value, MAX_SCALE_UP_TIMEOUT_S);
}

export class DataPlane {
  readonly #world: HuggingFaceWorld;
  readonly #tokens: TokenRegistry;
  readonly #time: EmulatorTime;
  #held: Held[] = [];

  constructor(world: HuggingFaceWorld, tokens: TokenRegistry, time: EmulatorTime) {
    this.#world = world;
    this.#tokens = tokens;
    this.#time = time;
    world.onSettle(() => this.#recheck());
  }

  /** Requests held for an endpoint (all endpoints when no name is given). */
  heldCount(namespace?: string, name?: string): number {
    return this.#held.filter(
      (held) =>
        (namespace === undefined || held.record.namespace === namespace) &&
        (name === undefined || held.record.config.name === name),
    ).length;
  }

  /** Serves a request whose path starts with `/endpoints/`. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): void {
    const match = /^\/endpoints\/([a-z0-9]+)(\/.*)?$/.exec(path);
    const record = match?.[1] === undefined ? undefined : this.#world.byLabel(match[1]);
    if (!match || !record) return sendError(res, 404, "Not Found: no endpoint at this URL");
    const refusal = this.#accessRefusal(req, record);
    if (refusal) return sendError(res, 401, refusal);
    const rest = (match[2] ?? "/") + query;
    this.#route(req, res, record, rest);
  }

  #accessRefusal(req: IncomingMessage, record: EndpointRecord): string | undefined {
    if (record.config.type === "public") return undefined;
    const account = this.#tokens.fromHeaders(req.headers);
    if (!account) return "Invalid credentials in Authorization header";
    if (record.config.type === "private" && !mayAccess(account, record.namespace))
      return `This endpoint is private: only members of '${record.namespace}' may call it`;
    return undefined;
  }

  #route(req: IncomingMessage, res: ServerResponse, record: EndpointRecord, rest: string): void {
    if (isServing(record.state)) return this.#serve(req, res, record, rest);
    if (record.state === "paused")
      return sendError(res, 503, "503 Service Unavailable: endpoint is paused; resume it to serve requests");
    if (record.state === "failed")
      return sendError(res, 503, `503 Service Unavailable: endpoint failed: ${record.message}`);
    if (isStarting(record.state)) {
      this.#world.wake(record);
      const timeoutS = scaleUpTimeoutS(req);
      if (timeoutS === undefined)
        return sendError(
          res,
          503,
          "503 Service Unavailable: endpoint is scaled to zero or starting; a replica is starting (send X-Scale-Up-Timeout to wait)",
        );
      const held: Held = {
        record,
        deadlineMs: this.#time.nowMs() + timeoutS * 1000,
        timeoutS,
        req,
        res,
        rest,
      };
      this.#held.push(held);
      res.once("close", () => {
        this.#held = this.#held.filter((other) => other !== held);
      });
      return;
    }
  }

  #serve(req: IncomingMessage, res: ServerResponse, record: EndpointRecord, rest: string): void {
    this.#world.noteRequest(record, 1);
    res.once("close", () => this.#world.noteRequest(record, -1));
    req.url = rest;
    if (!servesOpenAi(imageOf(record.config.json))) return serveToolkit(req, res, record.config.repository);
    record.engine.handle(req, res);
  }

  /** After the world moved: serve, refuse or keep holding each held request. */
  #recheck(): void {
    if (this.#held.length === 0) return;
    const now = this.#time.nowMs();
    const still: Held[] = [];
    const ready: Held[] = [];
    for (const held of this.#held) {
      const { record } = held;
      if (record.deleted) sendError(held.res, 503, "503 Service Unavailable: endpoint was deleted");
      else if (isServing(record.state) && record.stateSinceMs <= held.deadlineMs) ready.push(held);
      else if (now >= held.deadlineMs || isServing(record.state))
        sendError(
          held.res,
          503,
          `503 Service Unavailable: no replica became ready within X-Scale-Up-Timeout (${held.timeoutS} s)`,
        );
      else if (record.state === "paused" || record.state === "failed")
        sendError(held.res, 503, `503 Service Unavailable: endpoint is ${record.state}`);
      else still.push(held);
    }
    this.#held = still;
    // Served after the list is updated: serving settles the world, which re-enters here.
    for (const held of ready) this.#serve(held.req, held.res, held.record, held.rest);
  }
}
