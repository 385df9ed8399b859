/**
 * Concurrency slots for generation: at most `maxConcurrent` requests hold one; the rest wait in
 * FIFO order (bounded) or are refused at once. A released slot passes straight to the oldest
 * waiter, so late arrivals never overtake. Knows nothing of HTTP; waiting is cancelled by signal.
 */

import type { WhenFull } from "./options.js";

export type AcquireResult = "granted" | "full" | "aborted";

interface Waiter {
  readonly grant: (result: AcquireResult) => void;
}

export class SlotLimiter {
  #active = 0;
  #maxActiveSeen = 0;
  #maxQueuedSeen = 0;
  readonly #waiters: Waiter[] = [];

  constructor(
    private readonly maxConcurrent: number,
    private readonly whenFull: WhenFull,
    private readonly maxQueued: number,
  ) {}

  get active(): number {
    return this.#active;
  }
  get maxActiveSeen(): number {
    return this.#maxActiveSeen;
  }
  get queued(): number {
    return this.#waiters.length;
  }
  get maxQueuedSeen(): number {
    return this.#maxQueuedSeen;
  }

  /** Resolves "granted" (call `release` later), "full" (refuse the request) or "aborted". */
  acquire(signal: AbortSignal): Promise<AcquireResult> {
    if (signal.aborted) return Promise.resolve("aborted");
    if (this.#active < this.maxConcurrent) {
      this.#take();
      return Promise.resolve("granted");
    }
    if (this.whenFull === "503" || this.#waiters.length >= this.maxQueued) return Promise.resolve("full");
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve("aborted");
      };
      const waiter: Waiter = {
        grant: (result) => {
          signal.removeEventListener("abort", onAbort);
          resolve(result);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#maxQueuedSeen = Math.max(this.#maxQueuedSeen, this.#waiters.length);
    });
  }

  release(): void {
    this.#active -= 1;
    const next = this.#waiters.shift();
    if (next) {
      this.#take();
      next.grant("granted");
    }
  }

  #take(): void {
    this.#active += 1;
    this.#maxActiveSeen = Math.max(this.#maxActiveSeen, this.#active);
  }
}
