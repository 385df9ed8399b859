/**
 * Time as an input. The core never reads a clock: every input carries an `Instant`.
 * Wall time (epoch milliseconds) is for billing and evidence; monotonic time is for lease
 * expiry and timeouts, and means nothing across a restart.
 */

export interface Instant {
  /** Milliseconds since the Unix epoch, as the sponsor's wall clock reads. */
  readonly wallMs: number;
  /** Milliseconds on a monotonic clock of this process; not comparable across restarts. */
  readonly monoMs: number;
}

/** A clock the shell passes in. Implementations: the system clock (node), a manual clock (tests). */
export interface Clock {
  now(): Instant;
}

/** A clock whose time moves only when told to. For tests and simulations. */
export class ManualClock implements Clock {
  #wallMs: number;
  #monoMs: number;

  constructor(start: Partial<Instant> = {}) {
    this.#wallMs = start.wallMs ?? Date.UTC(2026, 0, 1);
    this.#monoMs = start.monoMs ?? 0;
  }

  now(): Instant {
    return { wallMs: this.#wallMs, monoMs: this.#monoMs };
  }

  advance(ms: number): Instant {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance(ms): expected ms >= 0, got ${ms}`);
    this.#wallMs += ms;
    this.#monoMs += ms;
    return this.now();
  }

  /** A process restart: wall time goes on, the monotonic clock starts again from zero. */
  restartProcess(): void {
    this.#monoMs = 0;
  }
}
