/**
 * A small seeded PRNG (mulberry32) so every fault schedule replays from its seed.
 * Must not know: what the numbers are used for.
 */

export class SeededRandom {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** Ids from counters: `deployment-1`, `request-1`, … Deterministic for tests and simulations. */
export class CountingIds {
  #counts = new Map<string, number>();

  constructor(readonly prefix = "") {}

  next(kind: string): string {
    const n = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, n);
    return `${this.prefix}${kind}-${n}`;
  }
}
