/**
 * One retry-after window shared by every client of one Hugging Face account in a process (the
 * managed endpoint's, the node probe's, ...): after a 429 with `retry-after`, no client of the gate
 * sends anything until the window ends — the call that was refused waits it out, the others fail at
 * once with `rate_limited` without sending. HF's limits count per account, so one client's 429 holds
 * for all of them.
 * Must not know: HTTP, clocks (the caller gives the time), who shares it.
 */

export class RetryAfterGate {
  #closedUntilMs = 0;

  /** A 429 said: nothing until `untilMs` (epoch ms). A later deadline extends the window, never shortens it. */
  close(untilMs: number): void {
    if (Number.isFinite(untilMs)) this.#closedUntilMs = Math.max(this.#closedUntilMs, untilMs);
  }

  /** How long (ms) the window stays closed after `nowMs`; 0 when open. */
  closedForMs(nowMs: number): number {
    return Math.max(0, this.#closedUntilMs - nowMs);
  }
}
