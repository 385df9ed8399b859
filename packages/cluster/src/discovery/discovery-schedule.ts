/**
 * How discovery schedules its work: a pass that runs one at a time (asked for during one, it runs
 * once more after it), and runs set for later that a stop cancels at once.
 * Must not know: what a pass does, sightings, peers.
 */

import type { Timers } from "../runtime/index.js";

/** A pass that runs one at a time; asked for during one, it runs once more after it. */
export function serialPass(
  run: () => Promise<void>,
  stopped: () => boolean,
): { readonly pass: () => Promise<void>; readonly running: () => Promise<void> | undefined } {
  let passing: Promise<void> | undefined;
  let again = false;
  const pass = (): Promise<void> => {
    if (stopped()) return Promise.resolve();
    if (passing !== undefined) {
      again = true;
      return passing;
    }
    passing = (async () => {
      do {
        again = false;
        await run();
      } while (again && !stopped());
    })().finally(() => (passing = undefined));
    return passing;
  };
  return { pass, running: () => passing };
}

/** Runs later, unless stopped; `cancelAll` cancels every run not yet made. */
export function laterOn(
  after: Timers["after"],
  stopped: () => boolean,
): { readonly later: (fn: () => void, ms: number) => void; readonly cancelAll: () => void } {
  const timers = new Set<{ cancel(): void }>();
  return {
    later: (fn, ms) => {
      if (stopped()) return;
      const timer = after(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
    },
    cancelAll: () => {
      for (const timer of timers) timer.cancel();
      timers.clear();
    },
  };
}
