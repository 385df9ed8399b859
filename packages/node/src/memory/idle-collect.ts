/**
 * When a node that has been busy goes idle, give its memory back: the decision, pure. The node looks
 * at its event loop's utilization (the share of time it was not waiting) once per check; a check at
 * or above `busyUtilization` marks it busy, and after `idleForMs` of checks under `idleUtilization`
 * following a busy one, it runs a young-generation collection, and after as long again a full one,
 * after which V8 shrinks the young generation the load grew (16 MiB semi-spaces, tens of MB of RSS
 * that otherwise stay: docs/performance.md, "Settings the measurements decided"). Why two: V8
 * shrinks the young generation at a full collection only when the allocation rate since the previous
 * collection is low (under 1,000 bytes/ms), and without the first one that window would still hold
 * the load's tail (measured: the full collection alone gave memory back in 1 of 3 runs, the pair in
 * 3 of 3).
 * At most one pair per busy period and per `minGapMs`, so a flapping load cannot make it a cost.
 * Must not know: timers, V8, what made the node busy.
 */

export interface IdleCollectPolicy {
  /** A check with at least this utilization (0..1) marks the node busy. */
  readonly busyUtilization: number;
  /** A check under this utilization counts as idle. */
  readonly idleUtilization: number;
  /** Idle this long (ms, monotonic) after a busy check before the minor collection, and as long again before the full one. */
  readonly idleForMs: number;
  /** Least time between two collections, ms. */
  readonly minGapMs: number;
}

export const DEFAULT_IDLE_COLLECT: IdleCollectPolicy = Object.freeze({
  busyUtilization: 0.05,
  idleUtilization: 0.02,
  // 15 s, not less: a node idle 12 s and then loaded again served that load's first second with p50
  // +0.5 ms and p99 +3–8 ms after its young generation was shrunk, and 10–20 % more CPU per stream
  // (26 scavenges in 1.4 s instead of ~10, and an early full GC: docs/performance.md, "Settings").
  // A pause between bursts keeps its warm heap; memory goes back after half a minute of idle.
  idleForMs: 15_000,
  minGapMs: 60_000,
});

/** A young-generation (minor) or full (major) collection. */
export type IdleCollection = "minor" | "major";

export interface IdleCollectState {
  /** Busy since the last full collection. */
  readonly busy: boolean;
  /** When the current idle run's minor collection ran, or undefined. */
  readonly minorAtMs: number | undefined;
  /** When the current idle run began (monotonic ms), or undefined while not idle. */
  readonly idleSinceMs: number | undefined;
  /** When it last ran a full collection, or undefined. */
  readonly lastCollectMs: number | undefined;
}

export const INITIAL_IDLE_COLLECT: IdleCollectState = Object.freeze({
  busy: false,
  minorAtMs: undefined,
  idleSinceMs: undefined,
  lastCollectMs: undefined,
});

/** Checks a policy's bounds; throws a RangeError naming the field. */
export function checkIdleCollectPolicy(p: IdleCollectPolicy): IdleCollectPolicy {
  const unit = (n: number) => Number.isFinite(n) && n > 0 && n <= 1;
  if (!unit(p.busyUtilization)) throw new RangeError("idle collect: busyUtilization must be in (0, 1]");
  if (!unit(p.idleUtilization) || p.idleUtilization > p.busyUtilization)
    throw new RangeError("idle collect: idleUtilization must be in (0, busyUtilization]");
  if (!(Number.isFinite(p.idleForMs) && p.idleForMs >= 0))
    throw new RangeError("idle collect: idleForMs must be ≥ 0");
  if (!(Number.isFinite(p.minGapMs) && p.minGapMs >= 0))
    throw new RangeError("idle collect: minGapMs must be ≥ 0");
  return p;
}

/** One check: the utilization since the previous check, at `nowMs` (monotonic). */
export function decideIdleCollect(
  policy: IdleCollectPolicy,
  state: IdleCollectState,
  utilization: number,
  nowMs: number,
): { readonly state: IdleCollectState; readonly collect: IdleCollection | undefined } {
  if (utilization >= policy.busyUtilization)
    return {
      state: { ...state, busy: true, minorAtMs: undefined, idleSinceMs: undefined },
      collect: undefined,
    };
  if (utilization >= policy.idleUtilization)
    return { state: { ...state, minorAtMs: undefined, idleSinceMs: undefined }, collect: undefined };
  const idleSinceMs = state.idleSinceMs ?? nowMs;
  const gapOk = state.lastCollectMs === undefined || nowMs - state.lastCollectMs >= policy.minGapMs;
  const waiting = { state: { ...state, idleSinceMs }, collect: undefined };
  if (!state.busy || !gapOk) return waiting;
  if (state.minorAtMs === undefined)
    return nowMs - idleSinceMs >= policy.idleForMs
      ? { state: { ...state, minorAtMs: nowMs, idleSinceMs }, collect: "minor" }
      : waiting;
  if (nowMs - state.minorAtMs < policy.idleForMs) return waiting;
  return {
    state: { busy: false, minorAtMs: undefined, idleSinceMs, lastCollectMs: nowMs },
    collect: "major",
  };
}
