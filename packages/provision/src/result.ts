/**
 * Result unions for expected refusals. An illegal transition, a stale lease or a missing
 * authorization is an answer, not an exception: callers must look at it.
 * Must not know: anything about providers, storage or time.
 */

export type Result<T, E> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

export function err<E>(error: E): { readonly ok: false; readonly error: E } {
  return { ok: false, error };
}

/** Exhaustiveness guard for `switch` statements over literal unions. */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
