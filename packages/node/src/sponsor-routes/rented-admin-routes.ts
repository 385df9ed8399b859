/**
 * The admin routes for rented nodes, on the client port behind the admin bearer token:
 *   GET  /pair/v1/rented                    → [rented node]      what this node sponsors
 *   POST /pair/v1/rented/attach {entry}     → the node (201)     an entry shaped like `rented_nodes:`
 *   POST /pair/v1/rented/share {name, share: bool} → the node     share with the cluster or not
 *   POST /pair/v1/rented/policy {name, use} → the node            routing use
 *   POST /pair/v1/rented/reset {name} → the node                  drop the share and policy set at run time
 *   POST /pair/v1/rented/probe              → [rented node]      probe every node now
 *   POST /pair/v1/rented/lifecycle {name, action: pause|resume|delete} → the node (managed ones only)
 * Changes persist in the data dir (never a secret) and reach peers at once (`onChange`).
 * Must not know: the bearer token, how nodes are probed or routed to.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { ROUTING_USES, type RoutingUse } from "../config/index.js";
import { isPairErrorCode, PAIR_ERROR_CODES } from "@pair/dialects";
import { adminFail, BodyRefusal, readJsonObject, refuseBody, sendAdminJson } from "../http/admin-json.js";
import type { RentedChange, RentedNodes } from "@pair/sponsor";

export const RENTED_ADMIN_PATHS = [
  "/pair/v1/rented",
  "/pair/v1/rented/attach",
  "/pair/v1/rented/share",
  "/pair/v1/rented/policy",
  "/pair/v1/rented/reset",
  "/pair/v1/rented/probe",
  "/pair/v1/rented/lifecycle",
] as const;

export function isRentedAdminPath(path: string): boolean {
  return (RENTED_ADMIN_PATHS as readonly string[]).includes(path);
}

const STATUS: Readonly<Record<Exclude<RentedChange, { ok: true }>["code"], number>> = {
  unknown_rented_node: 404,
  invalid_value: 400,
  insecure_url: 400,
  literal_credential: 400,
  budget_required: 400,
  duplicate_name: 409,
};

/** Serve one of `RENTED_ADMIN_PATHS` (the caller checked the path and the token). Never rejects. */
export function serveRentedAdmin(
  rented: RentedNodes,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  onChange: () => void,
): void {
  route(rented, req, res, path, onChange).catch((cause: unknown) => {
    if (res.headersSent) res.destroy();
    else adminFail(res, 500, "upstream_error", `internal error: ${String(cause)}`);
  });
}

async function route(
  rented: RentedNodes,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  onChange: () => void,
): Promise<void> {
  const method = req.method ?? "GET";
  if (path === "/pair/v1/rented") {
    if (method !== "GET") return adminFail(res, 405, "invalid_request", `use GET for ${path}`);
    return sendAdminJson(res, 200, rented.list());
  }
  if (method !== "POST") return adminFail(res, 405, "invalid_request", `use POST for ${path}`);
  const body = await readJsonObject(req);
  if (body instanceof BodyRefusal) return refuseBody(res, body);
  const answer = (change: RentedChange, okStatus = 200): void => {
    if (!change.ok)
      return adminFail(res, STATUS[change.code], change.code, change.message, {
        ...(change.problems === undefined ? {} : { problems: change.problems }),
      });
    onChange();
    sendAdminJson(res, okStatus, change.node);
  };
  switch (path) {
    case "/pair/v1/rented/attach":
      return answer(await rented.attach(body), 201);
    case "/pair/v1/rented/share": {
      const { name, share } = body;
      if (typeof name !== "string" || typeof share !== "boolean")
        return adminFail(
          res,
          400,
          "invalid_request",
          'expected {"name": "<rented node>", "share": true|false}',
        );
      return answer(rented.override(name, { share_with_cluster: share }));
    }
    case "/pair/v1/rented/policy": {
      const { name, use } = body;
      if (typeof name !== "string" || !(ROUTING_USES as readonly unknown[]).includes(use))
        return adminFail(
          res,
          400,
          "invalid_request",
          `expected {"name": "<rented node>", "use": ${ROUTING_USES.map((u) => `"${u}"`).join(" | ")}}`,
        );
      return answer(rented.override(name, { routing_use: use as RoutingUse }));
    }
    case "/pair/v1/rented/reset": {
      const { name } = body;
      if (typeof name !== "string")
        return adminFail(res, 400, "invalid_request", 'expected {"name": "<rented node>"}');
      return answer(rented.reset(name));
    }
    case "/pair/v1/rented/lifecycle": {
      const { name, action } = body;
      if (typeof name !== "string" || (action !== "pause" && action !== "resume" && action !== "delete"))
        return adminFail(
          res,
          400,
          "invalid_request",
          'expected {"name": "<rented node>", "action": "pause" | "resume" | "delete"}',
        );
      const done = await rented.act(name, action);
      if (!done.ok) {
        const status = done.error.code === "unknown_rented_node" ? 404 : errorStatus(done.error.code);
        return adminFail(res, status, done.error.code, done.error.message);
      }
      onChange();
      return sendAdminJson(res, 200, done.node);
    }
    case "/pair/v1/rented/probe":
      await rented.probe();
      onChange();
      return sendAdminJson(res, 200, rented.list());
    default:
      return adminFail(res, 404, "invalid_request", `no admin route ${path}`);
  }
}

/** The HTTP status of a PAIR error code (502 for anything else). */
function errorStatus(code: string): number {
  return isPairErrorCode(code) ? PAIR_ERROR_CODES[code].status : 502;
}
