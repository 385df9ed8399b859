/**
 * What every manager of managed rented nodes (Hugging Face endpoints and Jobs, Runpod pods) runs the
 * same way: the periodic pass over its nodes on the timer seam (one pass at a time, the next one
 * scheduled when it ends), the sleep its nodes wait with (ended early by a caller's signal), and the
 * sponsor-exit close: no more passes, every node's own close (bounded by the node), then the clients
 * and stores the manager opened, newest first.
 * Must not know: which provider the nodes run on, what a node does in a pass, the credential store.
 */

import type { Runtime, Timers } from "@pair/cluster";

/** How a manager's passes and waits are timed, and where it logs (the seams tests replace). */
export interface PassTiming {
  /** The clock and timers (default: the system runtime). */
  readonly runtime?: Runtime;
  /** Time between passes (default 10 s); 0: no automatic pass (tests call `tick()`). */
  readonly tickMs?: number;
  /** How often a waiting request, a wake or an exit looks again (default 1 s). */
  readonly pollMs?: number;
  /** IANA zone budgets count days and months in (default: this machine's). */
  readonly timeZone?: string;
  readonly log?: (line: string) => void;
}

/** A node as its manager's passes drive it. */
export interface PassingNode {
  /** One pass; never throws. */
  tick(): Promise<void>;
  /** Sponsor exit (its stops, bounded); the manager ignores a throw. */
  close(): Promise<unknown>;
}

export class NodePasses {
  /** What the manager opened for its nodes (API clients, probes, stores), closed last, newest first. */
  readonly closers: (() => Promise<void> | void)[] = [];
  readonly #timers: Timers;
  readonly #tickMs: number;
  readonly #nodes: () => Iterable<PassingNode>;
  #timer: { cancel(): void } | undefined;
  #pass: Promise<void> | undefined;
  #stopped = false;

  /** `tickMs`: time between passes (default 10 s); 0: no automatic pass (tests call `tick()`). */
  constructor(timers: Timers, tickMs: number | undefined, nodes: () => Iterable<PassingNode>) {
    this.#timers = timers;
    this.#tickMs = tickMs ?? 10_000;
    this.#nodes = nodes;
  }

  /** `close()` was called: no node is added any more. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Time between automatic passes; 0 when there are none (a test runs each pass itself). */
  get intervalMs(): number {
    return Math.max(0, this.#tickMs);
  }

  /** The periodic pass was scheduled once (it runs until `close()`). */
  get scheduled(): boolean {
    return this.#timer !== undefined;
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    this.#pass ??= Promise.all([...this.#nodes()].map((n) => n.tick())).then(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  /** Run a pass every `tickMs` from now (none when `tickMs` is 0 or after `close()`). */
  schedule(): void {
    if (this.#stopped || this.#tickMs <= 0) return;
    this.#timer = this.#timers.after(() => {
      void this.tick().finally(() => this.schedule());
    }, this.#tickMs);
  }

  /** Resolves true after `ms`, false when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    return this.#timers.sleep(ms, signal);
  }

  /** Sponsor exit: stop the passes, close every node (bounded per node), then clients and stores. */
  async close(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#pass?.catch(() => undefined);
    await Promise.all([...this.#nodes()].map((n) => n.close().catch(() => 1)));
    for (const close of this.closers.splice(0).reverse()) await close();
  }
}
