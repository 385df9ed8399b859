/**
 * Fault switches of the Jobs API: those of the Endpoints control plane (lost answers, held requests,
 * 5xx, 429 with retry-after, slow state changes — here: a slow cancel) plus slow scheduling, a job
 * that errors with a message instead of coming up, and a partial listing (a live job left out of the
 * next listings, by id). Deterministic, in arrival order.
 * Must not know: sockets, job records.
 */

import { ControlFaults } from "../huggingface/control-faults.js";

export class JobsFaults extends ControlFaults {
  #extraSchedulingMs = 0;

  /** Jobs created from now on stay SCHEDULING this many more virtual ms. 0 turns it off. */
  slowScheduling(extraMs: number): void {
    if (!Number.isInteger(extraMs) || extraMs < 0 || extraMs > 24 * 3_600_000)
      throw new RangeError(
        `faults.slowScheduling: extraMs must be an integer in [0, 86400000], got ${extraMs}`,
      );
    this.#extraSchedulingMs = extraMs;
  }

  get extraSchedulingMs(): number {
    return this.#extraSchedulingMs;
  }

  /** The next job to come up errors instead (stage ERROR, this message); its port never answers. */
  failNextJob(message: string): void {
    this.failNextDeploy(message);
  }

  /**
   * The next `count` listings of jobs leave out the job `id` while still answering as complete (no
   * `Link: rel="next"` for it); its own `GET /api/jobs/{ns}/{id}` still finds it. A partial page.
   */
  hideJobFromListing(id: string, count: number): void {
    this.hideFromListing(id, count);
  }

  override clear(): void {
    super.clear();
    this.#extraSchedulingMs = 0;
  }
}
