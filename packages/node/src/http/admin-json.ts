/**
 * The admin API's JSON plumbing, shared by its route files: read a small JSON object body, answer
 * JSON (never cached), and fail with the admin envelope `{"error": {message, type, code, ...}}`.
 * Must not know: any route, the bearer token.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "./json-depth.js";
import { readBody } from "./request-body.js";

/** Largest admin request body. */
export const MAX_ADMIN_BODY_BYTES = 16 * 1024;

/** Why a body was not read: 400/413 `invalid_request`, or 408 `request_timeout` for one that stalled. */
export class BodyRefusal {
  constructor(
    readonly status: number,
    readonly code: "invalid_request" | "request_timeout",
    readonly message: string,
  ) {}
}

/** The body as a JSON object, or why not. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown> | BodyRefusal> {
  const body = await readBody(req, MAX_ADMIN_BODY_BYTES);
  if (!body.ok) return new BodyRefusal(body.status === 408 ? 408 : 400, body.code, body.message);
  const invalid = (message: string) => new BodyRefusal(400, "invalid_request", message);
  if (jsonNestsDeeperThan(body.bytes))
    return invalid(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    const json: unknown = JSON.parse(body.bytes.toString("utf8"));
    if (typeof json === "object" && json !== null && !Array.isArray(json))
      return json as Record<string, unknown>;
  } catch {
    // reported below
  }
  return invalid("the request body must be a JSON object");
}

/** Answers a refused body; a stalled one also closes the connection (its rest is never read). */
export function refuseBody(res: ServerResponse, refusal: BodyRefusal, type?: string): void {
  if (refusal.status === 408) res.setHeader("connection", "close");
  adminFail(res, refusal.status, refusal.code, refusal.message, {}, type);
}

export function sendAdminJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
  });
  res.end(text);
}

/** An admin error; `type` is `invalid_request_error` for 400/404/405, else `fallbackType`. */
export function adminFail(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
  fallbackType = "server_error",
): void {
  const type = status === 400 || status === 404 || status === 405 ? "invalid_request_error" : fallbackType;
  sendAdminJson(res, status, { error: { message, type, code, ...extra } });
}
