// What many tests share: wait until a condition holds (polling, bounded), and clean up what a test
// started after it, in reverse order.
import { afterEach } from "vitest";

/**
 * Poll `check` every `pollMs` (20) until it returns true (a throw counts as false), within `withinMs`;
 * resolves to the time it took (ms).
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  withinMs = 5_000,
  pollMs = 20,
): Promise<number> {
  const started = Date.now();
  await untilValue(async () => (await check()) || undefined, withinMs, { pollMs });
  return Date.now() - started;
}

/**
 * Poll `check` every `pollMs` (20) until it gives a value (undefined, false or a throw: not yet);
 * throws after `withinMs`, naming `what` when given.
 */
export async function untilValue<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  withinMs: number,
  options: { readonly what?: string; readonly pollMs?: number } = {},
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > withinMs)
      throw new Error(`${options.what === undefined ? "" : `${options.what}: `}not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, options.pollMs ?? 20));
  }
}

/** A list of cleanups run after each test of the calling file, last registered first. */
export function cleanupAfterEach(): (cleanup: () => unknown) => void {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => void cleanups.push(cleanup);
}
