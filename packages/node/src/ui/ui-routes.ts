/**
 * The dashboard's routes on the client port:
 *   GET  /ui/login?code=C          spend a one-time login code: set the session cookie, 303 to /ui/
 *   GET  /ui/, /ui/<file>          the built app (a session is required; else a page saying how to sign in)
 *   POST /pair/v1/ui/login-code    (admin bearer token only) → {code, path, expires_at}
 *   GET  /pair/v1/ui/session       (session) → {node, csrf_token, expires_at}
 *   POST /pair/v1/ui/logout        (session + CSRF) → {ok: true}, the cookie cleared
 * Must not know: how callers are authenticated (admin-auth.ts decides), the other admin routes.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "@pair/provision";
import { adminFail, sendAdminJson } from "../http/admin-json.js";
import { readCookie, sessionCookie, type AdminCaller } from "./admin-auth.js";
import { sendUiPage, serveUiFile } from "./ui-static.js";
import type { UiSessions } from "./ui-sessions.js";

export interface UiDeps {
  readonly nodeName: string;
  readonly sessions: UiSessions;
  readonly cookieName: string;
  /** The built dashboard (packages/dashboard/dist). */
  readonly uiDir: string;
  /** The cookie's max-age counts from its wall time. */
  readonly clock: Clock;
}

export const UI_ADMIN_PATHS = [
  "/pair/v1/ui/login-code",
  "/pair/v1/ui/session",
  "/pair/v1/ui/logout",
] as const;

export function isUiPath(pathname: string): boolean {
  return pathname === "/ui" || pathname.startsWith("/ui/");
}

export function isUiAdminPath(path: string): boolean {
  return (UI_ADMIN_PATHS as readonly string[]).includes(path);
}

const SIGN_IN_HINT =
  "Run `pair ui` on the node's machine (with the node's --config) and open the link it prints. " +
  "The link works once, for two minutes.";

/** Serve a /ui path (`pathname` as received, before any trailing-slash trimming). Never rejects. */
export async function serveUi(deps: UiDeps, req: IncomingMessage, res: ServerResponse, url: URL) {
  const method = req.method ?? "GET";
  if (method !== "GET" && method !== "HEAD")
    return sendUiPage(res, 405, "Method not allowed", `Use GET for ${url.pathname}.`, { allow: "GET, HEAD" });
  if (url.pathname === "/ui/login") {
    // Only a GET spends the code: a HEAD (a link preview, a checker) must not burn it.
    if (method !== "GET")
      return sendUiPage(res, 405, "Method not allowed", "Open the login link in a browser.", {
        allow: "GET",
      });
    const code = url.searchParams.get("code");
    const redeemed = code === null || code === "" ? undefined : deps.sessions.redeem(code);
    if (redeemed === undefined || !redeemed.ok)
      return sendUiPage(
        res,
        401,
        "Login link not valid",
        `${redeemed?.ok === false && redeemed.reason === "expired" ? "This login link has expired." : "This login link is unknown or was already used."} ${SIGN_IN_HINT}`,
      );
    // Rounded: the session was made a moment ago, with the full lifetime (a floor would flake by a second).
    const maxAgeS = Math.round((redeemed.session.expiresAtMs - deps.clock.now().wallMs) / 1000);
    res.writeHead(303, {
      location: "/ui/",
      "set-cookie": sessionCookie(deps.cookieName, redeemed.sessionId, maxAgeS),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "content-length": "0",
    });
    res.end();
    return;
  }
  const sessionId = readCookie(req.headers.cookie, deps.cookieName);
  if (sessionId === undefined || deps.sessions.session(sessionId) === undefined)
    return sendUiPage(res, 401, "Sign in to the PAIR dashboard", SIGN_IN_HINT);
  const rest = url.pathname === "/ui" ? "" : url.pathname.slice("/ui/".length);
  return serveUiFile(deps.uiDir, rest, method === "HEAD", res);
}

/** Serve one of UI_ADMIN_PATHS for a caller the admin API already accepted. */
export function serveUiAdmin(
  deps: UiDeps,
  caller: Extract<AdminCaller, { ok: true }>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  const method = req.method ?? "GET";
  // No body is read: drain whatever was sent so the connection stays usable.
  req.resume();
  switch (path) {
    case "/pair/v1/ui/login-code": {
      if (method !== "POST") return adminFail(res, 405, "invalid_request", `use POST for ${path}`);
      if (caller.via !== "bearer")
        return adminFail(
          res,
          403,
          "unauthorized",
          "login codes are issued only to the admin token's holder (`pair ui`), not to a dashboard session",
          {},
          "authentication_error",
        );
      const { code, expiresAtMs } = deps.sessions.issueCode();
      return sendAdminJson(res, 200, {
        code,
        path: `/ui/login?code=${encodeURIComponent(code)}`,
        expires_at: new Date(expiresAtMs).toISOString(),
      });
    }
    case "/pair/v1/ui/session":
      if (method !== "GET") return adminFail(res, 405, "invalid_request", `use GET for ${path}`);
      if (caller.via !== "session")
        return adminFail(
          res,
          400,
          "invalid_request",
          "no dashboard session: this request used the admin token",
        );
      return sendAdminJson(res, 200, {
        node: deps.nodeName,
        csrf_token: caller.session.csrfToken,
        expires_at: new Date(caller.session.expiresAtMs).toISOString(),
      });
    case "/pair/v1/ui/logout":
      if (method !== "POST") return adminFail(res, 405, "invalid_request", `use POST for ${path}`);
      if (caller.via === "session") deps.sessions.end(caller.sessionId);
      res.setHeader("set-cookie", sessionCookie(deps.cookieName, "", 0));
      return sendAdminJson(res, 200, { ok: true });
    default:
      return adminFail(res, 404, "invalid_request", `no admin route ${path}`);
  }
}
