/**
 * Runs the idle-collect decision (idle-collect.ts) on a timer: once per `checkEveryMs` it reads the
 * event loop's utilization since the last check (`performance.eventLoopUtilization`, a few counters,
 * no heap walk) and, when the decision says so, runs a minor or a full garbage collection. They
 * need V8's `gc` function, which node only gives with `--expose-gc` (PAIR_NODE_FLAGS, on `pair`'s
 * `#!` line): without it this does nothing. Never on the request path: it runs only after the node
 * has been idle for seconds.
 * Must not know: what the node serves.
 */

import { performance, type EventLoopUtilization } from "node:perf_hooks";
import type { Timers } from "@pair/cluster";
import type { Clock } from "@pair/provision";
import {
  checkIdleCollectPolicy,
  decideIdleCollect,
  DEFAULT_IDLE_COLLECT,
  INITIAL_IDLE_COLLECT,
  type IdleCollection,
  type IdleCollectPolicy,
} from "./idle-collect.js";

/** How often the collector looks at the event loop, ms. */
export const IDLE_COLLECT_CHECK_MS = 1_000;

export interface IdleCollectorOptions {
  readonly policy?: IdleCollectPolicy;
  readonly checkEveryMs?: number;
  readonly timers: Pick<Timers, "every">;
  /** The policy and the collection's duration read its monotonic time. */
  readonly clock: Clock;
  /** The event loop's utilization since the previous call (0..1). */
  readonly utilization?: () => number;
  /** The collection (default: V8's `gc` when node exposes it). */
  readonly collect?: (kind: IdleCollection) => void;
  /** Told after each collection, with how long it took (ms). */
  readonly onCollected?: (kind: IdleCollection, tookMs: number) => void;
}

/**
 * V8's `gc()`, present when node runs with `--expose-gc`: `gc({ type: "minor" })`, or the full
 * collection as V8's last resort, which also releases the pooled pages a plain full `gc()` keeps on
 * Node 22+ (Node 24 gave back nothing of a load's growth without it; docs/performance.md).
 */
export function exposedGc(): ((kind: IdleCollection) => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") return undefined;
  const call = gc as (options: { type?: "minor"; execution?: "sync"; flavor?: "last-resort" }) => unknown;
  return (kind) =>
    void (kind === "minor" ? call({ type: "minor" }) : call({ execution: "sync", flavor: "last-resort" }));
}

function eventLoopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return u;
  };
}

/** Starts the collector; `undefined` when there is nothing to collect with (node without --expose-gc). */
export function startIdleCollector(options: IdleCollectorOptions): { cancel(): void } | undefined {
  const collect = options.collect ?? exposedGc();
  if (collect === undefined) return undefined;
  const policy = checkIdleCollectPolicy(options.policy ?? DEFAULT_IDLE_COLLECT);
  const utilization = options.utilization ?? eventLoopUtilization();
  let state = INITIAL_IDLE_COLLECT;
  return options.timers.every(() => {
    const now = options.clock.now().monoMs;
    const next = decideIdleCollect(policy, state, utilization(), now);
    state = next.state;
    if (next.collect === undefined) return;
    collect(next.collect);
    options.onCollected?.(next.collect, options.clock.now().monoMs - now);
  }, options.checkEveryMs ?? IDLE_COLLECT_CHECK_MS);
}
