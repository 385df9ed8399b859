/**
 * The admin routes for creating managed rented GPUs (on the client port behind the admin bearer token;
 * the shared contract is api-create.md):
 *   GET  /pair/v1/rented/account?credential=REF              → who the stored Hugging Face token is
 *   GET  /pair/v1/rented/catalog?credential=REF              → [{repo_id}]
 *   GET  /pair/v1/rented/hardware?credential=REF[&namespace=NS] → [hardware offer]
 *   GET  /pair/v1/rented/job-hardware?credential=REF          → [{flavor, gpu, gpus, usd_per_hour}]
 *   POST /pair/v1/rented/create {…}                          → 202 the node view (state "starting")
 * Never a token value, never a rented node's URL in an answer. A create reaches peers at once (`onChange`).
 * Must not know: the bearer token, how the create is carried out.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { adminFail, BodyRefusal, readJsonObject, refuseBody, sendAdminJson } from "../http/admin-json.js";
import type { HfAnswer, RentedCreator } from "@pair/sponsor";

export const HF_ACCOUNT_PATHS = [
  "/pair/v1/rented/account",
  "/pair/v1/rented/catalog",
  "/pair/v1/rented/hardware",
  "/pair/v1/rented/job-hardware",
  "/pair/v1/rented/create",
] as const;

export function isHfAccountPath(path: string): boolean {
  return (HF_ACCOUNT_PATHS as readonly string[]).includes(path);
}

/** Serve one of `HF_ACCOUNT_PATHS` (the caller checked the path and the token). Never rejects. */
export function serveHfAccount(
  creator: RentedCreator,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  onChange: () => void,
): void {
  route(creator, req, res, url, onChange).catch((cause: unknown) => {
    if (res.headersSent) res.destroy();
    else adminFail(res, 500, "upstream_error", `internal error: ${String(cause)}`);
  });
}

function answer<T>(res: ServerResponse, result: HfAnswer<T>, okStatus = 200): void {
  if (result.ok) return sendAdminJson(res, okStatus, result.value);
  adminFail(res, result.status, result.code, result.message, {
    ...(result.param === undefined ? {} : { param: result.param }),
  });
}

async function route(
  creator: RentedCreator,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  onChange: () => void,
): Promise<void> {
  const method = req.method ?? "GET";
  const path = url.pathname.replace(/\/+$/, "");
  const credential = url.searchParams.get("credential") ?? undefined;
  if (path === "/pair/v1/rented/create") {
    if (method !== "POST") return adminFail(res, 405, "invalid_request", `use POST for ${path}`);
    const body = await readJsonObject(req);
    if (body instanceof BodyRefusal) return refuseBody(res, body);
    const created = await creator.create(body);
    if (created.ok) onChange();
    return answer(res, created, 202);
  }
  if (method !== "GET") return adminFail(res, 405, "invalid_request", `use GET for ${path}`);
  switch (path) {
    case "/pair/v1/rented/account":
      return answer(res, await creator.account(credential));
    case "/pair/v1/rented/catalog":
      return answer(res, await creator.catalog(credential));
    case "/pair/v1/rented/hardware":
      return answer(res, await creator.hardware(credential, url.searchParams.get("namespace") ?? undefined));
    case "/pair/v1/rented/job-hardware":
      return answer(res, await creator.jobHardware(credential));
    default:
      return adminFail(res, 404, "invalid_request", `no admin route ${path}`);
  }
}
