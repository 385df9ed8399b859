// What many tests share: wait until a condition holds (polling, bounded), and clean up what a test
// started after it, in reverse order.
import { afterEach } from "vitest";

/**
 * Poll `check` every 20 ms until it returns true (a throw counts as false), within `withinMs`;
 * resolves to the time it took (ms).
 */
export async function until(check: () => Promise<boolean> | boolean, withinMs = 5_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
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
