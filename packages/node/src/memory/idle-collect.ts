/**
 * When a node that has been busy goes idle, give its memory back: the decision, pure. The node looks
 * at its event loop's utilization (the share of time it was not waiting) once per check; a check at
 * or above `busyUtilization` marks it busy, and after `idleForMs` of checks under `idleUtilization`
 * following a busy one, it collects once — one full garbage collection while nobody waits, after
 * which V8 shrinks the young generation the load grew (16 MiB semi-spaces, tens of MB of RSS that
 * otherwise stay: docs/benchmarks.md, "Memory, session 5"). At most one collection per busy period
 * and per `minGapMs`, so a flapping load cannot turn it into a cost.
 * Must not know: timers, V8, what made the node busy.
 */

export interface IdleCollectPolicy {
  /** A check with at least this utilization (0..1) marks the node busy. */
  readonly busyUtilization: number;
  /** A check under this utilization counts as idle. */
  readonly idleUtilization: number;
  /** Idle this long (ms, monotonic) after a busy check before collecting. */
  readonly idleForMs: number;
  /** Least time between two collections, ms. */
  readonly minGapMs: number;
}

export const DEFAULT_IDLE_COLLECT: IdleCollectPolicy = Object.freeze({
  busyUtilization: 0.05,
  idleUtilization: 0.02,
  idleForMs: 5_000,
  minGapMs: 60_000,
});

export interface IdleCollectState {
  /** Busy since the last collection. */
  readonly busy: boolean;
  /** When the current idle run began (monotonic ms), or undefined while not idle. */
  readonly idleSinceMs: number | undefined;
  /** When it last collected, or undefined. */
  readonly lastCollectMs: number | undefined;
}

export const INITIAL_IDLE_COLLECT: IdleCollectState = Object.freeze({
  busy: false,
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
): { readonly state: IdleCollectState; readonly collect: boolean } {
  if (utilization >= policy.busyUtilization)
    return { state: { ...state, busy: true, idleSinceMs: undefined }, collect: false };
  if (utilization >= policy.idleUtilization)
    return { state: { ...state, idleSinceMs: undefined }, collect: false };
  const idleSinceMs = state.idleSinceMs ?? nowMs;
  const due =
    state.busy &&
    nowMs - idleSinceMs >= policy.idleForMs &&
    (state.lastCollectMs === undefined || nowMs - state.lastCollectMs >= policy.minGapMs);
  if (!due) return { state: { ...state, idleSinceMs }, collect: false };
  return { state: { busy: false, idleSinceMs, lastCollectMs: nowMs }, collect: true };
}
