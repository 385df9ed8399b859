/**
 * THE test runtime: a manual clock and timers that fire only when the test moves time. `advance(ms)`
 * walks the clock to each due timer in turn (earliest first, ties in the order they were set) and
 * runs it there, so a timer set by a timer runs in the same advance when it falls due within it;
 * repeating timers are set again after each run. Deterministic: nothing here reads real time.
 * Must not know: what the timers do (a test awaits its own promises between advances).
 */

import { ManualClock, type Instant } from "@pair/provision";
import { sleepOn, type Runtime, type TimerHandle, type Timers } from "./runtime.js";

interface Pending {
  at: number;
  readonly seq: number;
  readonly fn: () => void;
  /** Repeat period; undefined for a one-shot. */
  readonly everyMs: number | undefined;
  live: boolean;
}

export class VirtualRuntime implements Runtime {
  readonly clock: ManualClock;
  readonly timers: Timers;
  readonly #pending: Pending[] = [];
  #seq = 0;

  constructor(start: Partial<Instant> = {}) {
    this.clock = new ManualClock(start);
    const add = (fn: () => void, ms: number, everyMs: number | undefined): TimerHandle => {
      const p: Pending = { at: this.monoMs + Math.max(0, ms), seq: this.#seq++, fn, everyMs, live: true };
      this.#pending.push(p);
      return {
        cancel: () => {
          p.live = false;
          this.#drop(p);
        },
      };
    };
    const after: Timers["after"] = (fn, ms) => add(fn, ms, undefined);
    this.timers = {
      after,
      every: (fn, ms) => add(fn, ms, Math.max(1, ms)),
      sleep: (ms, signal) => sleepOn(after, ms, signal),
    };
  }

  /** The monotonic time now (ms). */
  get monoMs(): number {
    return this.clock.now().monoMs;
  }

  /** The wall time now (epoch ms). */
  get wallMs(): number {
    return this.clock.now().wallMs;
  }

  /** Timers set and not yet run or cancelled (a repeating one counts until cancelled). */
  get pending(): number {
    return this.#pending.length;
  }

  /** Move time by `ms`, running every timer that falls due on the way, at its own time. */
  advance(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance(ms): expected ms >= 0, got ${ms}`);
    const end = this.monoMs + ms;
    for (let next = this.#next(end); next !== undefined; next = this.#next(end)) this.#run(next);
    this.clock.advance(end - this.monoMs);
  }

  /**
   * Move time to the next timer, however far, and run it alone; false when none is set. For a
   * discrete-event loop that lets promises settle between two timers.
   */
  runNext(): boolean {
    const next = this.#next(Infinity);
    if (next === undefined) return false;
    this.#run(next);
    return true;
  }

  /** Run every timer due now (or earlier), as `advance(0)`. */
  runDue(): void {
    this.advance(0);
  }

  #run(p: Pending): void {
    this.clock.advance(Math.max(0, p.at - this.monoMs));
    if (p.everyMs === undefined) {
      p.live = false;
      this.#drop(p);
    } else p.at += p.everyMs;
    p.fn();
  }

  #next(end: number): Pending | undefined {
    let best: Pending | undefined;
    for (const p of this.#pending)
      if (
        p.live &&
        p.at <= end &&
        (best === undefined || p.at < best.at || (p.at === best.at && p.seq < best.seq))
      )
        best = p;
    return best;
  }

  #drop(p: Pending): void {
    const i = this.#pending.indexOf(p);
    if (i >= 0) this.#pending.splice(i, 1);
  }
}
