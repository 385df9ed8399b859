/**
 * When a stop that was not confirmed is sent again: a capped exponential backoff. After the n-th
 * unconfirmed attempt the controller waits `stopRetryMs × 2^(n−1)`, never more than `maxStopRetryMs`
 * (a billed resource must keep being stopped), and never less than a retry-after the provider gave
 * with its last answer (`stopNotBeforeMs` on the record).
 * Must not know: providers, timers, the store (pure arithmetic on a record and the time given).
 */

import type { DeploymentRecord } from "./state.js";

export interface StopBackoff {
  /** The wait after the first unconfirmed attempt (ms). */
  readonly stopRetryMs: number;
  /** The longest wait between two attempts (ms), whatever the count. */
  readonly maxStopRetryMs: number;
}

/** Default cap: a stop not confirmed is sent again at least once a minute while it may bill. */
export const DEFAULT_MAX_STOP_RETRY_MS = 60_000;

/** Problems with a backoff's limits (empty when fine). */
export function validateStopBackoff(b: StopBackoff): readonly string[] {
  const problems: string[] = [];
  if (!(b.stopRetryMs >= 0)) problems.push("stopRetryMs: must be >= 0");
  if (!(b.maxStopRetryMs >= b.stopRetryMs)) problems.push("maxStopRetryMs: must be >= stopRetryMs");
  return problems;
}

/** The wait after `attempts` unconfirmed attempts: stopRetryMs × 2^(attempts−1), capped. */
export function stopRetryDelayMs(attempts: number, b: StopBackoff): number {
  if (attempts <= 0) return 0;
  // 2^(attempts−1) overflows to Infinity for huge counts; the cap keeps the result finite.
  return Math.min(b.maxStopRetryMs, b.stopRetryMs * 2 ** Math.min(attempts - 1, 1_000));
}

/**
 * When the record's next stop attempt is due (epoch ms): at once when none was sent yet — or none
 * since `sinceMs`, the controller's start: a restarted sponsor sends a required stop at once instead
 * of waiting out the backoff its previous process had reached — else the backoff after the last
 * attempt, and never before the provider's retry-after.
 */
export function nextStopAttemptAtMs(
  record: Pick<DeploymentRecord, "stopAttempts" | "lastStopAttemptAtMs" | "stopNotBeforeMs">,
  b: StopBackoff,
  sinceMs = Number.NEGATIVE_INFINITY,
): number {
  const backoff =
    record.lastStopAttemptAtMs === undefined || record.lastStopAttemptAtMs < sinceMs
      ? Number.NEGATIVE_INFINITY
      : record.lastStopAttemptAtMs + stopRetryDelayMs(record.stopAttempts, b);
  return Math.max(backoff, record.stopNotBeforeMs ?? Number.NEGATIVE_INFINITY);
}
