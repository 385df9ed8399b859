/**
 * vLLM's `--api-key` middleware as the engine emulator applies it: only paths under `/v1` are
 * guarded, OPTIONS passes, the scheme is compared case-insensitively to "bearer" and the token
 * exactly (constant time against each configured key). A refusal is 401 `{"error":"Unauthorized"}`
 * without `WWW-Authenticate`, before any body is read or any stream starts.
 * Must not know: routes, models, faults.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** True when the request may pass: no keys configured, an unguarded path, or a matching bearer token. */
export function apiKeyAccepted(keys: readonly string[], req: IncomingMessage, path: string): boolean {
  if (keys.length === 0 || req.method === "OPTIONS") return true;
  if (path !== "/v1" && !path.startsWith("/v1/")) return true;
  const header = req.headers.authorization ?? "";
  const space = header.indexOf(" ");
  if (space < 0 || header.slice(0, space).toLowerCase() !== "bearer") return false;
  const offered = digest(header.slice(space + 1));
  let accepted = false;
  for (const key of keys) accepted = timingSafeEqual(offered, digest(key)) || accepted;
  return accepted;
}
