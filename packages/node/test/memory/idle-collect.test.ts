// The idle collector: a minor GC when a node that was busy has been idle long enough, a full one
// after as long again, never while it is busy or was never busy, at most one pair per busy period and
// per minGapMs; and the timer side
// reads utilization once per check and collects when told (virtual time, a fake interval).
import { clockAt, VirtualRuntime } from "@pair/cluster";
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

/** Feeds one utilization per second from t = 1 s; returns the collections, as "minor@16" (seconds). */
function run(utilizations: readonly number[], policy = POLICY): string[] {
  let state: IdleCollectState = INITIAL_IDLE_COLLECT;
  const at: string[] = [];
  utilizations.forEach((u, i) => {
    const now = (i + 1) * 1_000;
    const next = decideIdleCollect(policy, state, u, now);
    state = next.state;
    if (next.collect !== undefined) at.push(`${next.collect}@${now / 1000}`);
  });
  return at;
}

const idle = (n: number) => Array<number>(n).fill(0.001);
const busy = (n: number) => Array<number>(n).fill(0.6);

describe("decideIdleCollect", () => {
  it("never collects a node that was never busy", () => {
    expect(run(idle(120))).toEqual([]);
  });

  it("a minor collection idleForMs after the load ended, a full one idleForMs later, then nothing", () => {
    // busy at 1..10 s; idle from 11 s; 11 + 5 = 16 s, 11 + 10 = 21 s.
    expect(run([...busy(10), ...idle(60)])).toEqual(["minor@16", "major@21"]);
  });

  it("never while busy, and a moderately used loop (between the thresholds) restarts the idle wait", () => {
    expect(run(busy(120))).toEqual([]);
    // busy, idle 3 s, 0.03 (neither busy nor idle), idle again from 15 s: 15 + 5 = 20 s.
    expect(run([...busy(10), ...idle(3), 0.03, ...idle(30)])).toEqual(["minor@20", "major@25"]);
    // Between the two: a busy check starts over (the minor one again, then the full one).
    expect(run([...busy(10), ...idle(7), ...busy(1), ...idle(30)])).toEqual([
      "minor@16",
      "minor@24",
      "major@29",
    ]);
  });

  it("at most one pair per minGapMs when the load flaps, and one per busy period", () => {
    const flap = [...busy(2), ...idle(18)]; // a burst every 20 s
    // The first pair at 8 and 13 s; the next once 60 s have passed (73 s), the full one always idleForMs
    // after the minor; at 138 s the minor ran, the burst at 141 s came before the full one: over at 148 s.
    expect(run(Array.from({ length: 10 }, () => flap).flat())).toEqual([
      ...["minor@8", "major@13", "minor@73", "major@78"],
      ...["minor@138", "minor@148", "major@153"],
    ]);
    expect(run([...busy(5), ...idle(200)])).toEqual(["minor@11", "major@16"]);
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
      timers: { every: () => ((registered += 1), { cancel: () => undefined }) },
      clock: clockAt(() => 0),
    });
    expect(started).toBeUndefined();
    expect(registered).toBe(0);
  });

  it("reads the utilization once per check and collects when the decision says so", () => {
    const runtime = new VirtualRuntime();
    const feed = [...busy(3), ...idle(12)];
    let reads = 0;
    const collected: string[] = [];
    const took: string[] = [];
    const c = startIdleCollector({
      policy: POLICY,
      timers: runtime.timers,
      clock: runtime.clock,
      utilization: () => feed[reads++]!,
      collect: (kind) => {
        collected.push(`${kind}@${runtime.monoMs / 1000}`);
        runtime.clock.advance(12); // the collection takes 12 ms
      },
      onCollected: (kind, ms) => took.push(`${kind} ${ms} ms`),
    });
    // One check a second: none before the first second is out.
    runtime.advance(999);
    expect(reads).toBe(0);
    runtime.advance(feed.length * 1_000 - 999);
    expect(reads).toBe(feed.length);
    expect(collected).toEqual(["minor@9", "major@14"]); // idle from 4 s: 4 + 5, 4 + 10
    expect(took).toEqual(["minor 12 ms", "major 12 ms"]);
    c!.cancel();
    expect(runtime.pending).toBe(0);
  });
});
