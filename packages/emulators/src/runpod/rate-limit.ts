/**
 * Runpod v2's per-user rate limits, emulated with fixed windows on the virtual clock (minute, hour,
 * day; the spec's example quotas 60/3000/50000 by default). Every authenticated control-plane call
 * counts; the `RateLimit` and `RateLimit-Policy` header values (IETF draft structured lists) go on
 * every answer, and a call over quota gets 429 with `Retry-After` = seconds until the exceeded
 * window resets [I: fixed, clock-aligned windows; the live service's window kind is undocumented].
 * Must not know: HTTP servers, pods.
 */

export interface RateLimitQuotas {
  readonly minute?: number;
  readonly hour?: number;
  readonly day?: number;
}

interface Window {
  readonly name: "minute" | "hour" | "day";
  readonly seconds: number;
  readonly quota: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** `RateLimit` header value after this call. */
  readonly rateLimit: string;
  readonly rateLimitPolicy: string;
  /** Seconds until the exceeded window resets (only when refused). */
  readonly retryAfterS?: number;
}

export class RateLimiter {
  readonly #windows: readonly Window[];
  /** Per key and window: the window's start and the calls counted in it. */
  readonly #counts = new Map<string, { startMs: number; used: number }>();

  constructor(quotas: RateLimitQuotas = {}) {
    const windows: Window[] = [
      { name: "minute", seconds: 60, quota: quotas.minute ?? 60 },
      { name: "hour", seconds: 3600, quota: quotas.hour ?? 3000 },
      { name: "day", seconds: 86400, quota: quotas.day ?? 50000 },
    ];
    for (const window of windows) {
      if (!Number.isInteger(window.quota) || window.quota < 1) {
        throw new RangeError(`runpod emulator option rateLimit.${window.name}: expected an integer ≥ 1`);
      }
    }
    this.#windows = windows;
  }

  /** Counts one call by `key` at `nowMs` (a refused call does not count) and says whether it may proceed. */
  take(key: string, nowMs: number): RateDecision {
    const states = this.#windows.map((window) => {
      const windowMs = window.seconds * 1000;
      const startMs = Math.floor(nowMs / windowMs) * windowMs;
      const id = `${window.name}\u0000${key}`;
      let state = this.#counts.get(id);
      if (!state || state.startMs !== startMs) {
        state = { startMs, used: 0 };
        this.#counts.set(id, state);
      }
      return { window, state, resetS: Math.max(1, Math.ceil((startMs + windowMs - nowMs) / 1000)) };
    });
    const exceeded = states.find(({ window, state }) => state.used >= window.quota);
    if (!exceeded) for (const { state } of states) state.used += 1;
    return {
      allowed: exceeded === undefined,
      rateLimit: states
        .map(
          ({ window, state, resetS }) =>
            `"${window.name}";r=${Math.max(0, window.quota - state.used)};t=${resetS}`,
        )
        .join(", "),
      rateLimitPolicy: this.#windows.map((w) => `"${w.name}";q=${w.quota};w=${w.seconds}`).join(", "),
      ...(exceeded ? { retryAfterS: exceeded.resetS } : {}),
    };
  }
}
