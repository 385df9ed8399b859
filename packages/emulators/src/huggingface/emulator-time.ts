/**
 * The Hugging Face emulator's clock: virtual wall time that moves when a test calls `advance(ms)`,
 * and optionally also with real time at a chosen scale (end-to-end tests and demos: 60 = one virtual
 * minute per real second). Every timestamp, billing minute and timeout of the emulator reads it.
 * Must not know: endpoints, HTTP, billing.
 */

export class EmulatorTime {
  readonly #startMs: number;
  readonly #scale: number;
  readonly #realStart: number;
  #offsetMs = 0;

  /** `scale` 0: time moves only with `advance`; > 0: also that many virtual ms per real ms. */
  constructor(startMs: number, scale: number) {
    this.#startMs = startMs;
    this.#scale = scale;
    this.#realStart = performance.now();
  }

  get scaled(): boolean {
    return this.#scale > 0;
  }

  /** Virtual wall time, epoch milliseconds (integer). */
  nowMs(): number {
    const real = this.#scale > 0 ? (performance.now() - this.#realStart) * this.#scale : 0;
    return Math.floor(this.#startMs + this.#offsetMs + real);
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms): expected ms >= 0, got ${ms}`);
    this.#offsetMs += ms;
  }
}
