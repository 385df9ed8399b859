/**
 * The scheduler: concurrency slots per target (a local engine, later a peer or a rented node) and
 * one bounded queue with a bounded wait. `acquire` picks, among the candidates the router names (in
 * its order of preference), the least loaded one with a free slot; when every candidate is full the
 * request waits in FIFO order until a slot of one of its candidates frees, the wait times out, or
 * the client goes away. Batch work is second: it never takes a target's last free slot (when the
 * target has more than one), nor the slots users held at once in the last `INTERACTIVE_PEAK_HOLD_MS`
 * (so the next burst of chats finds them free instead of waiting for a batch line to end); it waits
 * behind every interactive waiter and does not count against the interactive queue's limit, so a batch
 * of thousands of lines never makes a user's chat wait or fail.
 * Must not know: HTTP, dialects, how targets are reached.
 */

import type { Runtime } from "@pair/cluster";

/** What waiting needs of a request's cancellation: an AbortSignal has it (and so may a lighter one). */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface Target {
  /** Stable id, unique among targets (engine name, peer node name, rented node name). */
  readonly id: string;
  /** Most requests in flight at once on this target; checked >= 1. */
  readonly maxConcurrent: number;
}

export interface Slot {
  readonly target: Target;
  /** Give the slot back. Idempotent. */
  release(): void;
}

export type AcquireResult =
  | { readonly ok: true; readonly slot: Slot; readonly queuedMs: number }
  | { readonly ok: false; readonly reason: "queue-full" | "queue-timeout" | "aborted" | "no-candidates" };

export interface SchedulerOptions {
  /** Most requests waiting for a slot at once; beyond it, refuse at once. */
  readonly maxQueued: number;
  /** Longest a request waits for a slot. */
  readonly maxQueueWaitMs: number;
  /** Its monotonic time and its wait timers (tests drive a virtual one). */
  readonly runtime: Runtime;
}

/** Interactive requests (a user waiting) go first; batch lines take what is left over. */
export type Priority = "interactive" | "batch";

/**
 * How long the most interactive requests a target held at once stays reserved from batch work. Long
 * enough to span the pauses of an app that sends bursts; measured by `bench/batch-load.ts`.
 */
export const INTERACTIVE_PEAK_HOLD_MS = 10_000;

/** Users' requests on one target: how many now, and the most at once lately. */
interface UserLoad {
  inFlight: number;
  peak: number;
  /** When `peak` was last reached. */
  peakAtMs: number;
}

interface Waiter {
  readonly candidates: readonly Target[];
  readonly priority: Priority;
  readonly enqueuedMs: number;
  readonly resolve: (r: AcquireResult) => void;
  settled: boolean;
}

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #inFlight = new Map<string, number>();
  readonly #users = new Map<string, UserLoad>();
  readonly #queue: Waiter[] = [];
  /** Wakes batch waiters when a held peak lapses (nothing else would: no slot is released then). */
  #lapse: { readonly atMs: number; cancel(): void } | undefined;

  constructor(options: SchedulerOptions) {
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0)
      throw new RangeError("maxQueued: must be an integer >= 0");
    if (!(options.maxQueueWaitMs >= 0)) throw new RangeError("maxQueueWaitMs: must be >= 0");
    this.#o = options;
  }

  #nowMs(): number {
    return this.#o.runtime.clock.now().monoMs;
  }

  inFlight(targetId: string): number {
    return this.#inFlight.get(targetId) ?? 0;
  }

  queued(): number {
    return this.#queue.length;
  }

  /** Try to take a slot now, without queueing. */
  tryAcquire(candidates: readonly Target[], priority: Priority = "interactive"): Slot | undefined {
    let best: Target | undefined;
    let bestLoad = Infinity;
    for (const t of candidates) {
      const used = this.inFlight(t.id);
      if (used >= this.#usableSlots(t, priority)) continue;
      const load = used / t.maxConcurrent;
      if (load < bestLoad) {
        best = t;
        bestLoad = load;
      }
    }
    return best === undefined ? undefined : this.#take(best, priority);
  }

  /**
   * Slots a request of `priority` may fill on `t`. Batch work keeps one slot free, plus room for as
   * many users as held `t` at once lately; on a one-slot target it may use that slot.
   */
  #usableSlots(t: Target, priority: Priority): number {
    if (priority === "interactive" || t.maxConcurrent <= 1) return t.maxConcurrent;
    const users = this.#users.get(t.id);
    if (users === undefined) return t.maxConcurrent - 1;
    const now = this.#nowMs();
    if (users.peak > users.inFlight && now - users.peakAtMs >= INTERACTIVE_PEAK_HOLD_MS) {
      users.peak = users.inFlight;
      users.peakAtMs = now;
    }
    return Math.max(0, t.maxConcurrent - 1 - (users.peak - users.inFlight));
  }

  /** While batch work waits behind a held peak, a timer for when the earliest one lapses. */
  #armLapse(): void {
    if (!this.#queue.some((w) => w.priority === "batch")) return;
    let at = Infinity;
    for (const u of this.#users.values())
      if (u.peak > u.inFlight) at = Math.min(at, u.peakAtMs + INTERACTIVE_PEAK_HOLD_MS);
    if (at === Infinity || (this.#lapse !== undefined && this.#lapse.atMs <= at)) return;
    this.#lapse?.cancel();
    const timer = this.#o.runtime.timers.after(
      () => {
        this.#lapse = undefined;
        this.#wake();
        this.#armLapse();
      },
      Math.max(0, at - this.#nowMs()),
    );
    this.#lapse = { atMs: at, cancel: () => timer.cancel() };
  }

  acquire(
    candidates: readonly Target[],
    signal?: CancelSignal,
    priority: Priority = "interactive",
  ): Promise<AcquireResult> {
    if (candidates.length === 0) return Promise.resolve({ ok: false, reason: "no-candidates" });
    for (const t of candidates)
      if (!Number.isInteger(t.maxConcurrent) || t.maxConcurrent < 1)
        throw new RangeError(`target ${t.id}: maxConcurrent must be an integer >= 1`);
    // Waiters first: a new request does not jump the queue (an interactive one jumps batch waiters).
    const waiting = this.#queue.some(
      (w) =>
        (priority === "batch" || w.priority === "interactive") &&
        w.candidates.some((c) => candidates.some((d) => d.id === c.id)),
    );
    const now = waiting ? undefined : this.tryAcquire(candidates, priority);
    if (now !== undefined) return Promise.resolve({ ok: true, slot: now, queuedMs: 0 });
    if (signal?.aborted === true) return Promise.resolve({ ok: false, reason: "aborted" });
    if (priority === "interactive" && this.#interactiveQueued() >= this.#o.maxQueued)
      return Promise.resolve({ ok: false, reason: "queue-full" });
    return new Promise<AcquireResult>((resolve) => {
      const waiter: Waiter = {
        candidates,
        priority,
        enqueuedMs: this.#nowMs(),
        settled: false,
        resolve: (r) => {
          if (waiter.settled) return;
          waiter.settled = true;
          timer.cancel();
          signal?.removeEventListener("abort", onAbort);
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          resolve(r);
        },
      };
      const onAbort = () => waiter.resolve({ ok: false, reason: "aborted" });
      const timer = this.#o.runtime.timers.after(
        () => waiter.resolve({ ok: false, reason: "queue-timeout" }),
        this.#o.maxQueueWaitMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      // Interactive waiters before every batch waiter, each kind in FIFO order.
      const firstBatch =
        priority === "interactive" ? this.#queue.findIndex((w) => w.priority === "batch") : -1;
      if (firstBatch < 0) this.#queue.push(waiter);
      else this.#queue.splice(firstBatch, 0, waiter);
      if (priority === "batch") this.#armLapse();
    });
  }

  #interactiveQueued(): number {
    let n = 0;
    for (const w of this.#queue) if (w.priority === "interactive") n++;
    return n;
  }

  #take(target: Target, priority: Priority): Slot {
    this.#inFlight.set(target.id, this.inFlight(target.id) + 1);
    const users = priority === "interactive" ? this.#userLoad(target.id) : undefined;
    if (users !== undefined) {
      users.inFlight += 1;
      if (users.inFlight >= users.peak) {
        users.peak = users.inFlight;
        users.peakAtMs = this.#nowMs();
      }
    }
    let released = false;
    return {
      target,
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight.set(target.id, this.inFlight(target.id) - 1);
        if (users !== undefined) users.inFlight -= 1;
        this.#wake();
        this.#armLapse();
      },
    };
  }

  #userLoad(id: string): UserLoad {
    let u = this.#users.get(id);
    if (u === undefined) {
      u = { inFlight: 0, peak: 0, peakAtMs: 0 };
      this.#users.set(id, u);
    }
    return u;
  }

  /** Hand freed slots to waiters in queue order (interactive ones first). */
  #wake(): void {
    for (const waiter of [...this.#queue]) {
      if (waiter.settled) continue;
      const slot = this.tryAcquire(waiter.candidates, waiter.priority);
      if (slot === undefined) continue;
      const queuedMs = this.#nowMs() - waiter.enqueuedMs;
      waiter.resolve({ ok: true, slot, queuedMs });
    }
  }
}
