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

/** The body as a JSON object, or what is wrong with it. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown> | string> {
  const body = await readBody(req, MAX_ADMIN_BODY_BYTES);
  if (!body.ok) return body.message;
  if (jsonNestsDeeperThan(body.bytes)) return `the request body nests deeper than ${MAX_JSON_DEPTH} levels`;
  try {
    const json: unknown = JSON.parse(body.bytes.toString("utf8"));
    if (typeof json === "object" && json !== null && !Array.isArray(json))
      return json as Record<string, unknown>;
  } catch {
    // reported below
  }
  return "the request body must be a JSON object";
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
