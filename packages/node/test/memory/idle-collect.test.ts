// The idle collector: one full GC when a node that was busy has been idle long enough, never while
// it is busy or was never busy, at most once per busy period and per minGapMs; and the timer side
// reads utilization once per check and collects when told (virtual time, a fake interval).
import { describe, expect, it } from "vitest";
import {
  checkIdleCollectPolicy,
  decideIdleCollect,
  DEFAULT_IDLE_COLLECT,
  INITIAL_IDLE_COLLECT,
  startIdleCollector,
  type IdleCollectPolicy,
  type IdleCollectState,
} from "../../src/memory/index.js";

const POLICY: IdleCollectPolicy = {
  busyUtilization: 0.05,
  idleUtilization: 0.02,
  idleForMs: 5_000,
  minGapMs: 60_000,
};

/** Feeds one utilization per second from t = 1 s; returns the times it collected at. */
function run(utilizations: readonly number[], policy = POLICY): number[] {
  let state: IdleCollectState = INITIAL_IDLE_COLLECT;
  const at: number[] = [];
  utilizations.forEach((u, i) => {
    const now = (i + 1) * 1_000;
    const next = decideIdleCollect(policy, state, u, now);
    state = next.state;
    if (next.collect) at.push(now);
  });
  return at;
}

const idle = (n: number) => Array<number>(n).fill(0.001);
const busy = (n: number) => Array<number>(n).fill(0.6);

describe("decideIdleCollect", () => {
  it("never collects a node that was never busy", () => {
    expect(run(idle(120))).toEqual([]);
  });

  it("collects once, idleForMs after the load ended", () => {
    // busy at 1..10 s; idle from 11 s; 11 + 5 = 16 s.
    expect(run([...busy(10), ...idle(60)])).toEqual([16_000]);
  });

  it("never while busy, and a moderately used loop (between the thresholds) restarts the idle wait", () => {
    expect(run(busy(120))).toEqual([]);
    // busy, idle 3 s, 0.03 (neither busy nor idle), idle again from 15 s: 15 + 5 = 20 s.
    expect(run([...busy(10), ...idle(3), 0.03, ...idle(30)])).toEqual([20_000]);
  });

  it("at most once per minGapMs when the load flaps, and once per busy period", () => {
    const flap = [...busy(2), ...idle(8)]; // a burst every 10 s
    const at = run(Array.from({ length: 20 }, () => flap).flat()); // 200 s
    expect(at[0]).toBe(8_000);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(60_000);
    expect(at.length).toBe(4); // 8, 68, 128, 188 s
    expect(run([...busy(5), ...idle(200)])).toHaveLength(1);
  });

  it("refuses a policy out of bounds, naming the field", () => {
    expect(checkIdleCollectPolicy(DEFAULT_IDLE_COLLECT)).toBe(DEFAULT_IDLE_COLLECT);
    expect(() => checkIdleCollectPolicy({ ...POLICY, busyUtilization: 0 })).toThrow(/busyUtilization/);
    expect(() => checkIdleCollectPolicy({ ...POLICY, idleUtilization: 0.5 })).toThrow(/idleUtilization/);
    expect(() => checkIdleCollectPolicy({ ...POLICY, idleForMs: -1 })).toThrow(/idleForMs/);
    expect(() => checkIdleCollectPolicy({ ...POLICY, minGapMs: Number.NaN })).toThrow(/minGapMs/);
  });
});

describe("startIdleCollector", () => {
  it("does nothing without a gc to call (node without --expose-gc)", () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    let registered = 0;
    const started = startIdleCollector({
      intervals: { every: () => ((registered += 1), { cancel: () => undefined }) },
      nowMs: () => 0,
    });
    expect(started).toBeUndefined();
    expect(registered).toBe(0);
  });

  it("reads the utilization once per check and collects when the decision says so", () => {
    let tick: (() => void) | undefined;
    let everyMs = 0;
    let cancelled = false;
    let now = 0;
    const feed = [...busy(3), ...idle(10)];
    let reads = 0;
    const collected: number[] = [];
    const took: number[] = [];
    const c = startIdleCollector({
      policy: POLICY,
      intervals: {
        every: (fn, ms) => {
          tick = fn;
          everyMs = ms;
          return { cancel: () => (cancelled = true) };
        },
      },
      nowMs: () => now,
      utilization: () => feed[reads++]!,
      collect: () => {
        collected.push(now);
        now += 12; // the collection takes 12 ms
      },
      onCollected: (ms) => took.push(ms),
    });
    expect(everyMs).toBe(1_000);
    for (let i = 0; i < feed.length; i++) {
      now = (i + 1) * 1_000;
      tick!();
    }
    expect(reads).toBe(feed.length);
    expect(collected).toEqual([9_000]); // idle from 4 s, 4 + 5
    expect(took).toEqual([12]);
    c!.cancel();
    expect(cancelled).toBe(true);
  });
});
