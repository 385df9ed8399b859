/**
 * `GET /pair/v1/rented/history?name=NODE` (admin): a rented node's state history, oldest first,
 * as `[{at, state, reason}]` (empty for a node never seen).
 * Must not know: how the history is kept or fed, who may call (the admin API checked that).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { adminFail, sendAdminJson } from "../http/admin-json.js";
import type { RentedStateHistory } from "@pair/sponsor";

export const STATE_HISTORY_PATH = "/pair/v1/rented/history";

export function serveStateHistory(
  history: RentedStateHistory,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): void {
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD")
    return adminFail(res, 405, "invalid_request", `use GET for ${STATE_HISTORY_PATH}`);
  const name = url.searchParams.get("name");
  if (name === null || name === "")
    return adminFail(
      res,
      400,
      "invalid_request",
      `${STATE_HISTORY_PATH}: name: expected ?name=<rented node> (pair nodes lists them)`,
    );
  return sendAdminJson(res, 200, history.list(name));
}
