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
  /** This process's own clock when `clock`'s wall time is another's (withWallClock); absent: `clock` is it. */
  readonly processClock?: Clock;
}

/**
 * The clock for what a browser or a person checks in real seconds (a session cookie's max-age, a
 * login code, a pairing PIN, a TLS certificate's validity): a sandbox's wall clock may run fast and
 * would expire them early; a test's VirtualRuntime is its own process clock.
 */
export function realClock(runtime: Runtime): Clock {
  return runtime.processClock ?? runtime.clock;
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

const held: Timers["after"] = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

/**
 * This process's clock and timers that hold it open while pending: a command's wait between two
 * requests (a poll, a lock retry), where nothing else keeps the event loop alive.
 */
export const HOLDING_RUNTIME: Runtime = {
  clock: SYSTEM_CLOCK,
  timers: {
    after: held,
    every: (fn, ms) => {
      const t = setInterval(fn, ms);
      return { cancel: () => clearInterval(t) };
    },
    sleep: (ms, signal) => sleepOn(held, ms, signal),
  },
};

/** A clock that reads `ms()` as both its wall and its monotonic time: a test's fixed or stepped time. */
export function clockAt(ms: () => number): Clock {
  return { now: () => ({ wallMs: ms(), monoMs: ms() }) };
}

/**
 * The system runtime with another wall clock: monotonic time and timers stay real (exit bounds,
 * polls), wall time (billing, budgets, idle) reads `wallMs` — an emulator's or a sandbox's clock.
 */
export function withWallClock(wallMs: () => number): Runtime {
  return {
    clock: { now: () => ({ wallMs: wallMs(), monoMs: performance.now() }) },
    timers: SYSTEM_TIMERS,
    processClock: SYSTEM_CLOCK,
  };
}
