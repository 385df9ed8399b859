/**
 * Dashboard sign-in, in the running node's memory only: one-time login codes (issued to a holder of
 * the admin token, short-lived, single use) and the browser sessions they become (a session id for
 * the cookie, a CSRF token the page reads and sends back on every change). Codes and session ids are
 * kept only as SHA-256 hashes, so a heap dump or a log line of this state reveals neither; the CSRF
 * token is kept as is (it is useless without the cookie). Time and randomness are inputs; a node
 * restart ends every session.
 * Must not know: HTTP, cookies' syntax, routes, the admin token.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { Clock } from "@pair/provision";

/** How long a login code may wait to be used. */
export const DEFAULT_LOGIN_CODE_TTL_MS = 120_000;
/** How long a session lasts from sign-in (absolute, not sliding). */
export const DEFAULT_SESSION_TTL_MS = 12 * 3_600_000;
/** Codes not yet used, at most; the oldest is dropped to make room. */
export const DEFAULT_MAX_LOGIN_CODES = 16;
/** Live sessions, at most; the oldest is ended to make room. */
export const DEFAULT_MAX_SESSIONS = 64;

export interface UiSessionsOptions {
  /** Expiries read its wall time (epoch ms). */
  readonly clock: Clock;
  /** `n` unpredictable bytes (crypto.randomBytes in the node; seeded in tests). */
  readonly randomBytes: (n: number) => Buffer;
  readonly loginCodeTtlMs?: number;
  readonly sessionTtlMs?: number;
  readonly maxLoginCodes?: number;
  readonly maxSessions?: number;
}

export interface IssuedLoginCode {
  /** The code itself: shown once (`pair ui`), never stored. */
  readonly code: string;
  readonly expiresAtMs: number;
}

export interface UiSession {
  /** What the page sends back in `x-pair-csrf` on every state-changing request. */
  readonly csrfToken: string;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
}

export type Redeemed =
  | { readonly ok: true; readonly sessionId: string; readonly session: UiSession }
  | { readonly ok: false; readonly reason: "unknown" | "expired" };

/** Bytes of entropy in a code, a session id and a CSRF token. */
const SECRET_BYTES = 32;

export class UiSessions {
  readonly #clock: Clock;
  readonly #random: (n: number) => Buffer;
  readonly #codeTtlMs: number;
  readonly #sessionTtlMs: number;
  readonly #maxCodes: number;
  readonly #maxSessions: number;
  /** sha256(code) → expiry. Insertion order is age order. */
  readonly #codes = new Map<string, number>();
  /** sha256(session id) → session. Insertion order is age order. */
  readonly #sessions = new Map<string, UiSession>();

  #wallMs(): number {
    return this.#clock.now().wallMs;
  }

  constructor(options: UiSessionsOptions) {
    this.#clock = options.clock;
    this.#random = options.randomBytes;
    this.#codeTtlMs = positive("loginCodeTtlMs", options.loginCodeTtlMs ?? DEFAULT_LOGIN_CODE_TTL_MS);
    this.#sessionTtlMs = positive("sessionTtlMs", options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS);
    this.#maxCodes = positive("maxLoginCodes", options.maxLoginCodes ?? DEFAULT_MAX_LOGIN_CODES);
    this.#maxSessions = positive("maxSessions", options.maxSessions ?? DEFAULT_MAX_SESSIONS);
  }

  /** A new one-time login code (the caller proved it holds the admin token). */
  issueCode(): IssuedLoginCode {
    this.#sweep();
    const code = this.#secret();
    const expiresAtMs = this.#wallMs() + this.#codeTtlMs;
    while (this.#codes.size >= this.#maxCodes) this.#codes.delete(this.#codes.keys().next().value!);
    this.#codes.set(digest(code), expiresAtMs);
    return { code, expiresAtMs };
  }

  /** Spend a login code (once, whatever the outcome) and open a session for it. */
  redeem(code: string): Redeemed {
    const key = digest(code);
    const expiresAtMs = this.#codes.get(key);
    this.#codes.delete(key);
    if (expiresAtMs === undefined) return { ok: false, reason: "unknown" };
    const now = this.#wallMs();
    if (now >= expiresAtMs) return { ok: false, reason: "expired" };
    this.#sweep();
    while (this.#sessions.size >= this.#maxSessions)
      this.#sessions.delete(this.#sessions.keys().next().value!);
    const sessionId = this.#secret();
    const session: UiSession = {
      csrfToken: this.#secret(),
      createdAtMs: now,
      expiresAtMs: now + this.#sessionTtlMs,
    };
    this.#sessions.set(digest(sessionId), session);
    return { ok: true, sessionId, session };
  }

  /** The live session with this id, if any. */
  session(sessionId: string): UiSession | undefined {
    const key = digest(sessionId);
    const session = this.#sessions.get(key);
    if (session === undefined) return undefined;
    if (this.#wallMs() >= session.expiresAtMs) {
      this.#sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** End a session (sign out). True when there was one. */
  end(sessionId: string): boolean {
    return this.#sessions.delete(digest(sessionId));
  }

  /** Live codes and sessions (for tests and status). */
  counts(): { readonly loginCodes: number; readonly sessions: number } {
    this.#sweep();
    return { loginCodes: this.#codes.size, sessions: this.#sessions.size };
  }

  #secret(): string {
    const bytes = this.#random(SECRET_BYTES);
    if (bytes.length !== SECRET_BYTES) throw new Error(`randomBytes gave ${bytes.length} bytes, not 32`);
    return bytes.toString("base64url");
  }

  #sweep(): void {
    const now = this.#wallMs();
    for (const [key, expiresAtMs] of this.#codes) if (now >= expiresAtMs) this.#codes.delete(key);
    for (const [key, s] of this.#sessions) if (now >= s.expiresAtMs) this.#sessions.delete(key);
  }
}

/** Whether the CSRF token a request carries is the session's (constant time). */
export function csrfMatches(session: UiSession, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

function digest(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`UiSessions: ${name} must be a positive number, got ${value}`);
  return value;
}
