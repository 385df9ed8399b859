/**
 * Runpod v2's rate-limit headers, parsed: `RateLimit: "minute";r=0;t=12, "hour";r=2800;t=1812`
 * (remaining, seconds to reset, per window) and `RateLimit-Policy: "minute";q=60;w=60, …`
 * (quota and window length), IETF ratelimit-headers draft structured lists; and `Retry-After`
 * (delta seconds or an HTTP date). Unparseable members are skipped, never fatal.
 * Must not know: HTTP clients, retry policy (the caller's).
 */

export interface RateLimitWindow {
  readonly name: string;
  readonly remaining?: number;
  readonly resetSeconds?: number;
  readonly quota?: number;
  readonly windowSeconds?: number;
}

export interface RateLimitState {
  readonly windows: readonly RateLimitWindow[];
}

function members(header: string): { name: string; params: Map<string, number> }[] {
  const out: { name: string; params: Map<string, number> }[] = [];
  for (const member of header.split(",")) {
    const [rawName, ...params] = member.trim().split(";");
    const name = (rawName ?? "").trim().replace(/^"(.*)"$/, "$1");
    if (name === "") continue;
    const values = new Map<string, number>();
    for (const param of params) {
      const [key, value] = param.trim().split("=");
      const number = Number(value);
      if (key && value !== undefined && Number.isFinite(number)) values.set(key.trim(), number);
    }
    out.push({ name, params: values });
  }
  return out;
}

/** The state both headers describe, by window name; undefined when neither header is present. */
export function parseRateLimit(
  rateLimit: string | undefined,
  policy: string | undefined,
): RateLimitState | undefined {
  if (rateLimit === undefined && policy === undefined) return undefined;
  const windows = new Map<
    string,
    { name: string; remaining?: number; resetSeconds?: number; quota?: number; windowSeconds?: number }
  >();
  const windowOf = (name: string) => {
    const existing = windows.get(name) ?? { name };
    windows.set(name, existing);
    return existing;
  };
  for (const { name, params } of members(policy ?? "")) {
    const window = windowOf(name);
    const quota = params.get("q");
    const length = params.get("w");
    if (quota !== undefined) window.quota = quota;
    if (length !== undefined) window.windowSeconds = length;
  }
  for (const { name, params } of members(rateLimit ?? "")) {
    const window = windowOf(name);
    const remaining = params.get("r");
    const reset = params.get("t");
    if (remaining !== undefined) window.remaining = remaining;
    if (reset !== undefined) window.resetSeconds = reset;
  }
  return { windows: [...windows.values()] };
}

/** `Retry-After` in ms from `nowMs`: delta seconds or an HTTP date; undefined if absent or unreadable. */
export function parseRetryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined || header.trim() === "") return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
