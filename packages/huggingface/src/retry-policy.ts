/**
 * One pure retry policy for the Hugging Face transport: which failures of which calls are tried
 * again, and after how long. Idempotent calls (GET, pause, resume, scale-to-zero, delete) retry on
 * 429/503 after the server's `retry-after` (bounded by `maxRetryAfterMs`), on other 5xx and on a lost
 * answer with jittered exponential backoff, up to `maxAttempts`. Non-idempotent calls (create, update,
 * catalog deploy) are never retried: a lost answer is `uncertain` and the caller lists to resolve it.
 * Must not know: HTTP libraries, clocks, sleeping (the transport does those with its own seams).
 */

export interface RetryPolicy {
  /** Attempts in all, including the first (1 = never retry). */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A longer `retry-after` is not waited for: the call fails `rate_limited` at once. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** What one attempt ended with. */
export type AttemptOutcome =
  | { readonly kind: "status"; readonly status: number; readonly retryAfterMs: number | undefined }
  /** No answer. `sent`: the request may have reached the server (connection was up). */
  | { readonly kind: "no-answer"; readonly sent: boolean };

export type RetryDecision = { readonly retry: true; readonly delayMs: number } | { readonly retry: false };

/** Checks a policy (a limit on everything); returns the problems found. */
export function validateRetryPolicy(policy: RetryPolicy): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1 || policy.maxAttempts > 10)
    problems.push("maxAttempts: an integer in [1, 10]");
  if (!(policy.baseDelayMs >= 0)) problems.push("baseDelayMs: >= 0");
  if (!(policy.maxDelayMs >= policy.baseDelayMs)) problems.push("maxDelayMs: >= baseDelayMs");
  if (!(policy.maxRetryAfterMs >= 0 && policy.maxRetryAfterMs <= 3_600_000))
    problems.push("maxRetryAfterMs: in [0, 3600000]");
  return problems;
}

/** Backoff for the n-th retry (1-based): full jitter over base × 2^(n-1), capped. */
export function backoffMs(policy: RetryPolicy, retry: number, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling * (0.5 + random / 2));
}

/**
 * Whether to try again after `attempt` (1-based) ended with `outcome`. `random` in [0, 1) comes from
 * the caller's seeded or real source.
 */
export function decideRetry(
  policy: RetryPolicy,
  idempotent: boolean,
  attempt: number,
  outcome: AttemptOutcome,
  random: number,
): RetryDecision {
  if (!idempotent || attempt >= policy.maxAttempts) return { retry: false };
  if (outcome.kind === "no-answer") return { retry: true, delayMs: backoffMs(policy, attempt, random) };
  const { status, retryAfterMs } = outcome;
  if (status === 429 || status === 503) {
    if (retryAfterMs !== undefined)
      return retryAfterMs <= policy.maxRetryAfterMs
        ? { retry: true, delayMs: retryAfterMs }
        : { retry: false };
    return { retry: true, delayMs: backoffMs(policy, attempt, random) };
  }
  if (status >= 500) return { retry: true, delayMs: backoffMs(policy, attempt, random) };
  return { retry: false };
}

/** `retry-after` as milliseconds: delta-seconds or an HTTP date (against `nowMs`); undefined if absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
