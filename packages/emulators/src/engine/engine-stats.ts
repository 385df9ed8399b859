/**
 * Counters of what the emulator did, for tests to assert on. Every inference request (chat,
 * completion, generate, embeddings) ends in exactly one outcome, so at any moment:
 *   requests = completed + cancelled + rejected503 + faulted + invalid + inFlight + queued.
 * Listing routes (/v1/models, /api/tags, /api/version) are not inference requests.
 * Knows nothing of HTTP.
 */

import type { SlotLimiter } from "./slot-limiter.js";

export interface EngineStats {
  /** Inference requests received. */
  readonly requests: number;
  /** Requests holding a slot now (generating, or hung by a fault). */
  readonly inFlight: number;
  readonly maxInFlightSeen: number;
  /** Requests waiting for a slot now. */
  readonly queued: number;
  readonly maxQueuedSeen: number;
  /** Answered in full. */
  readonly completed: number;
  /** The client left (or the emulator closed) before the answer was complete, queued or not. */
  readonly cancelled: number;
  /** Refused with 503 because every slot (and the queue) was full. */
  readonly rejected503: number;
  /** Failed or cut by an injected fault (a hung request ends as cancelled). */
  readonly faulted: number;
  /** Answered with a 4xx: bad JSON, missing or mistyped fields, unknown model, body too large. */
  readonly invalid: number;
  /** Tokens generated, across all requests (a cancelled stream stops adding). */
  readonly tokensGenerated: number;
  /** Seed of the active fault set (print it with a failure to replay). */
  readonly faultSeed: number;
}

export type Outcome = "completed" | "cancelled" | "rejected503" | "faulted" | "invalid";

export class StatsCounters {
  requests = 0;
  tokensGenerated = 0;
  readonly #outcomes: Record<Outcome, number> = {
    completed: 0,
    cancelled: 0,
    rejected503: 0,
    faulted: 0,
    invalid: 0,
  };

  count(outcome: Outcome): void {
    this.#outcomes[outcome] += 1;
  }

  snapshot(limiter: SlotLimiter, faultSeed: number): EngineStats {
    return {
      requests: this.requests,
      inFlight: limiter.active,
      maxInFlightSeen: limiter.maxActiveSeen,
      queued: limiter.queued,
      maxQueuedSeen: limiter.maxQueuedSeen,
      ...this.#outcomes,
      tokensGenerated: this.tokensGenerated,
      faultSeed,
    };
  }
}

/** One inference request's bookkeeping: counted once on arrival, settled with exactly one outcome. */
export class InferenceCall {
  #settled = false;

  constructor(private readonly stats: StatsCounters) {
    stats.requests += 1;
  }

  settle(outcome: Outcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.stats.count(outcome);
  }
}
