/**
 * Who may call the admin API (`/pair/v1/…`), decided from a request's headers: the CLI with the
 * admin bearer token, or the dashboard with its session cookie. A cookie-borne request that changes
 * state (any method but GET/HEAD) must also prove it comes from the dashboard's own page: the
 * session's CSRF token in `x-pair-csrf` (a page of another site can neither read it nor, without a
 * CORS preflight PAIR never grants, send that header), an `Origin` naming this very host, and no
 * `Sec-Fetch-Site` other than `same-origin`. Also: the session cookie's name, reading and writing.
 * Must not know: routes, how a refusal is written, where sessions are kept.
 */

import { bearerMatches } from "../auth/admin-token.js";
import { csrfMatches, type UiSession, type UiSessions } from "./ui-sessions.js";

/** Stable codes of an admin-API refusal. Add freely, never rename (docs/errors.md lists them). */
export const ADMIN_AUTH_ERROR_CODES = ["unauthorized", "csrf_refused"] as const;

/** The header the dashboard sends its CSRF token in. */
export const CSRF_HEADER = "x-pair-csrf";

/** The request facts the decision reads (header values as received). */
export interface AdminRequestFacts {
  readonly method: string;
  readonly authorization: string | undefined;
  readonly cookie: string | undefined;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  readonly csrf: string | undefined;
}

export type AdminCaller =
  | { readonly ok: true; readonly via: "bearer" }
  | {
      readonly ok: true;
      readonly via: "session";
      readonly sessionId: string;
      readonly session: UiSession;
    }
  | {
      readonly ok: false;
      readonly status: 401 | 403;
      readonly code: (typeof ADMIN_AUTH_ERROR_CODES)[number];
      readonly message: string;
    };

export interface AdminAuthDeps {
  readonly adminToken: string;
  readonly sessions: UiSessions;
  readonly cookieName: string;
}

const SAFE_METHODS = new Set(["GET", "HEAD"]);

export function adminCaller(deps: AdminAuthDeps, req: AdminRequestFacts): AdminCaller {
  if (bearerMatches(req.authorization, deps.adminToken)) return { ok: true, via: "bearer" };
  const sessionId = readCookie(req.cookie, deps.cookieName);
  const session = sessionId === undefined ? undefined : deps.sessions.session(sessionId);
  if (sessionId === undefined || session === undefined)
    return {
      ok: false,
      status: 401,
      code: "unauthorized",
      message:
        sessionId === undefined
          ? "admin API: missing or wrong bearer token (see <data_dir>/admin.token), and no dashboard session"
          : "admin API: the dashboard session has ended — run `pair ui` for a new login link",
    };
  if (!SAFE_METHODS.has(req.method.toUpperCase())) {
    const why = crossSiteReason(req, session);
    if (why !== undefined)
      return {
        ok: false,
        status: 403,
        code: "csrf_refused",
        message: `admin API: a change with a dashboard session was refused: ${why} — reload the dashboard page`,
      };
  }
  return { ok: true, via: "session", sessionId, session };
}

/** Why a cookie-borne change may come from another site, or undefined when it is the dashboard's own. */
function crossSiteReason(req: AdminRequestFacts, session: UiSession): string | undefined {
  if (req.secFetchSite !== undefined && req.secFetchSite !== "same-origin")
    return `Sec-Fetch-Site is ${req.secFetchSite}`;
  if (req.origin === undefined) return "no Origin header";
  let originHost: string;
  try {
    originHost = new URL(req.origin).host;
  } catch {
    return "the Origin header is not a URL";
  }
  if (req.host === undefined || originHost !== req.host.toLowerCase())
    return "the Origin is not this node's address";
  if (!csrfMatches(session, req.csrf)) return `missing or wrong ${CSRF_HEADER} header`;
  return undefined;
}

/** One cookie's value from a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value === "" ? undefined : value;
    }
  }
  return undefined;
}

/** The session cookie: HttpOnly, SameSite=Strict, Path=/ (`maxAgeS` 0 clears it). */
export function sessionCookie(name: string, value: string, maxAgeS: number): string {
  return `${name}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeS))}`;
}

/**
 * The cookie's name for one node. Cookies ignore ports, so two nodes on one host (or `pair demo`)
 * would overwrite each other's session under one name: each node uses its own.
 */
export function sessionCookieName(nodeId: string): string {
  return `pair_ui_${nodeId.replace(/[^A-Za-z0-9]/g, "").slice(0, 16)}`;
}
