/**
 * The dashboard on the client port: sign-in by one-time code, browser sessions with a CSRF token,
 * who may call the admin API (bearer token or session), and the built app's files under /ui.
 * The public face of this folder.
 * Must not know: the other admin routes, how the app is built.
 */

export {
  ADMIN_AUTH_ERROR_CODES,
  adminCaller,
  CSRF_HEADER,
  readCookie,
  sessionCookie,
  sessionCookieName,
  type AdminAuthDeps,
  type AdminCaller,
  type AdminRequestFacts,
} from "./admin-auth.js";
export { isUiAdminPath, isUiPath, serveUi, serveUiAdmin, UI_ADMIN_PATHS, type UiDeps } from "./ui-routes.js";
export {
  csrfMatches,
  DEFAULT_LOGIN_CODE_TTL_MS,
  DEFAULT_MAX_LOGIN_CODES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_TTL_MS,
  UiSessions,
  type IssuedLoginCode,
  type Redeemed,
  type UiSession,
  type UiSessionsOptions,
} from "./ui-sessions.js";
export { DEFAULT_UI_DIR, UI_CSP } from "./ui-static.js";
export {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_MAX_EVENT_CLIENTS,
  EVENTS_RETRY_MS,
  LIVE_EVENTS_ERROR_CODES,
  LiveEvents,
  type LiveEventsOptions,
} from "./live-events.js";
