/**
 * A running node as stages (core → cluster → local → sponsor → serve, node.ts): each is built on
 * the ones before it and hands back what it made and how it stops. Stopping is data: the phases of
 * STOP_PHASES run in order, each through every stage from the last built to the first — so peers
 * hear "leaving" before the client port stops accepting, the providers' resources are released only
 * after the last request, and the history closes only after both ports, so a request cut there is
 * still recorded.
 * Must not know: what any stage holds.
 */

export interface Stage {
  readonly name: string;
  /** Probes, passes, polls; node.ts says when (some stages start together). */
  start?(): Promise<void>;
  /** Stop taking new work and say so: timers, probes, announcements, the listening sockets. */
  quiesce?(): void | Promise<void>;
  /** Let the work in flight finish within `graceMs`, then cut what is left. */
  drain?(graceMs: number): Promise<void>;
  /** Release the outside world: the providers' resources, the ports. */
  close?(): void | Promise<void>;
  /** What the requests cut on `close` may still write to or send through: files, dispatchers. */
  release?(): void | Promise<void>;
}

/** The order of a stop; each phase runs through the stages last-built first. */
export const STOP_PHASES = ["quiesce", "drain", "close", "release"] as const;

/**
 * Stops `stages` (in the order they were built). A failing step does not stop the others: the stop
 * goes on, and what failed is returned, first failure first.
 */
export async function stopStages(stages: readonly Stage[], graceMs: number): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const phase of STOP_PHASES)
    for (const stage of [...stages].reverse()) {
      try {
        if (phase === "drain") await stage.drain?.(graceMs);
        else await stage[phase]?.();
      } catch (cause) {
        failures.push(cause);
      }
    }
  return failures;
}
