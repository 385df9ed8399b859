/**
 * The one time seam of the daemon: what time it is (`clock`) and when to run something (`timers`).
 * Every part that waits, repeats or reads the time takes a `Runtime` (or one of its halves), so a
 * test swaps the whole of it for a `VirtualRuntime` whose time moves only when told to.
 * The system runtime's timers are unref'd: a pending timer never holds the process open (a request
 * or a server does that); the node's exit closes what it started.
 * Must not know: who waits, what runs.
 */

import type { Clock } from "@pair/provision";

/** A scheduled run, until cancelled (cancelling twice, or after it ran, does nothing). */
export interface TimerHandle {
  cancel(): void;
}

/** Plain functions (no `this`), so a part may take one of them alone. */
export interface Timers {
  /** Run `fn` once, `ms` from now. */
  readonly after: (fn: () => void, ms: number) => TimerHandle;
  /** Run `fn` every `ms` from now on. */
  readonly every: (fn: () => void, ms: number) => TimerHandle;
  /** Resolves true after `ms`, false as soon as `signal` aborts (at once when it already has). */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
}

export interface Runtime {
  readonly clock: Clock;
  readonly timers: Timers;
}

/** A `sleep` made of `after`: both runtimes wait the same way. */
export function sleepOn(after: Timers["after"], ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = after(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export const SYSTEM_CLOCK: Clock = { now: () => ({ wallMs: Date.now(), monoMs: performance.now() }) };

const after: Timers["after"] = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return { cancel: () => clearTimeout(t) };
};

export const SYSTEM_TIMERS: Timers = {
  after,
  every: (fn, ms) => {
    const t = setInterval(fn, ms);
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
  sleep: (ms, signal) => sleepOn(after, ms, signal),
};

/** This process's clock and unref'd timers. */
export const SYSTEM_RUNTIME: Runtime = { clock: SYSTEM_CLOCK, timers: SYSTEM_TIMERS };

/**
 * The system runtime with another wall clock: monotonic time and timers stay real (exit bounds,
 * polls), wall time (billing, budgets, idle) reads `wallMs` — an emulator's or a sandbox's clock.
 */
export function withWallClock(wallMs: () => number): Runtime {
  return { clock: { now: () => ({ wallMs: wallMs(), monoMs: performance.now() }) }, timers: SYSTEM_TIMERS };
}
