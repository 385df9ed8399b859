/**
 * The Runpod emulator's time: a base `now()` (the system clock, or one a test injects) plus an
 * offset that `advance(ms)` moves forward. Every lifecycle transition and every billed second is
 * read from here, so a test drives hours of pod life in microseconds, deterministically.
 * Must not know: pods, billing, sockets.
 */

export interface RunpodClock {
  /** Milliseconds since the Unix epoch, as the emulated provider sees them. */
  now(): number;
}

export class VirtualClock implements RunpodClock {
  readonly #base: () => number;
  #offsetMs = 0;

  constructor(base: () => number) {
    this.#base = base;
  }

  now(): number {
    return this.#base() + this.#offsetMs;
  }

  /** Moves time forward by `ms` (a non-negative integer). */
  advance(ms: number): void {
    if (!Number.isInteger(ms) || ms < 0) {
      throw new RangeError(`runpod emulator: advance(ms) takes a non-negative integer, got ${String(ms)}`);
    }
    this.#offsetMs += ms;
  }
}

/** A clock that stands still unless advanced: 2026-01-01T00:00:00Z. */
export const FIXED_START_MS = Date.UTC(2026, 0, 1);
