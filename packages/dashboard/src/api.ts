/**
 * The dashboard's calls to its node's admin API (same origin; the session cookie goes along by
 * itself, HttpOnly, never seen here). Every change carries the session's CSRF token in
 * `x-pair-csrf`. An answer that is not 2xx becomes an `ApiError` with the node's code and message.
 * Must not know: any view, how answers are shown.
 */

import type {
  CreateRentedRequest,
  LifecycleAction,
  RoutingUse,
  SessionInfo,
  SponsoredNode,
  StateChange,
} from "./wire.js";

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  /** The session is gone (expired, node restarted): only a new `pair ui` link helps. */
  get signedOut(): boolean {
    return this.status === 401;
  }
}

let csrfToken: string | undefined;

/** The node's clock minus the browser's, from the last answer's `x-pair-time` (0 until one came). */
let clockOffsetMs = 0;

/**
 * The time on the node's clock (its wall time; in the demo, the sandbox's virtual time), so every
 * time a page shows — idle timers, "today", history — is read against one clock, not the browser's.
 */
export function nodeNow(): number {
  return Date.now() + clockOffsetMs;
}

function noteNodeTime(res: Response): void {
  const at = Date.parse(res.headers.get("x-pair-time") ?? "");
  if (!Number.isNaN(at)) clockOffsetMs = at - Date.now();
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { ...init, credentials: "same-origin", cache: "no-store" });
  } catch (cause) {
    throw new ApiError(0, "unreachable", `the node did not answer (${String(cause)}) — is it still running?`);
  }
  noteNodeTime(res);
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const error = (json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    throw new ApiError(
      res.status,
      typeof error?.code === "string" ? error.code : `http_${res.status}`,
      typeof error?.message === "string" ? error.message : `HTTP ${res.status} for ${path}`,
    );
  }
  return json as T;
}

export function get<T>(path: string): Promise<T> {
  return call<T>(path);
}

async function post<T>(path: string, body: unknown): Promise<T> {
  if (csrfToken === undefined) await session();
  return call<T>(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-pair-csrf": csrfToken ?? "" },
    body: JSON.stringify(body),
  });
}

/** The signed-in session: the node's name and the CSRF token (kept for `post`). */
export async function session(): Promise<SessionInfo> {
  const info = await call<SessionInfo>("/pair/v1/ui/session");
  csrfToken = info.csrf_token;
  return info;
}

export function setShare(name: string, share: boolean): Promise<unknown> {
  return post("/pair/v1/rented/share", { name, share });
}

export function setPolicy(name: string, use: RoutingUse): Promise<unknown> {
  return post("/pair/v1/rented/policy", { name, use });
}

/** Drop the share switch and policy set at run time: the config's values apply again. */
export function resetRented(name: string): Promise<unknown> {
  return post("/pair/v1/rented/reset", { name });
}

export function lifecycle(name: string, action: LifecycleAction): Promise<unknown> {
  return post("/pair/v1/rented/lifecycle", { name, action });
}

export function stateHistory(name: string): Promise<StateChange[]> {
  return get(`/pair/v1/rented/history?name=${encodeURIComponent(name)}`);
}

/** Cancel a batch: lines not yet run end as `batch_cancelled`. */
export function cancelBatch(id: string): Promise<unknown> {
  return post(`/pair/v1/batches/${encodeURIComponent(id)}/cancel`, {});
}

/** Start creating a rented GPU (202: the node view, state "starting"; progress by polling). */
export function createRented(body: CreateRentedRequest): Promise<SponsoredNode> {
  return post("/pair/v1/rented/create", body);
}

export function signOut(): Promise<unknown> {
  return post("/pair/v1/ui/logout", {});
}
