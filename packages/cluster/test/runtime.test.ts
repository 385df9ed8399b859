// The one time seam: the virtual runtime runs each timer at its own due time, in order, repeating
// ones again, and none after a cancel; sleep ends early on abort; the system runtime's timers do the
// same on real time and never hold the process open.
import { describe, expect, it } from "vitest";
import { SYSTEM_RUNTIME, VirtualRuntime } from "../src/index.js";

describe("VirtualRuntime", () => {
  it("runs one-shots at their due time, earliest first, ties in the order set", () => {
    const rt = new VirtualRuntime({ wallMs: 1_000_000, monoMs: 0 });
    const ran: string[] = [];
    rt.timers.after(() => ran.push(`b@${rt.monoMs}`), 200);
    rt.timers.after(() => ran.push(`a@${rt.monoMs}`), 100);
    rt.timers.after(() => ran.push(`c@${rt.monoMs}`), 200);
    rt.advance(150);
    expect(ran).toEqual(["a@100"]);
    rt.advance(50);
    expect(ran).toEqual(["a@100", "b@200", "c@200"]);
    expect(rt.monoMs).toBe(200);
    expect(rt.wallMs).toBe(1_000_200);
    expect(rt.pending).toBe(0);
  });

  it("runs a timer set by a timer within the same advance when it falls due there", () => {
    const rt = new VirtualRuntime();
    const at: number[] = [];
    const chain = (): void => {
      at.push(rt.monoMs);
      if (at.length < 5) rt.timers.after(chain, 30);
    };
    rt.timers.after(chain, 30);
    rt.advance(100);
    expect(at).toEqual([30, 60, 90]);
    rt.advance(100);
    expect(at).toEqual([30, 60, 90, 120, 150]);
  });

  it("repeats `every` until cancelled, and a cancelled timer never runs", () => {
    const rt = new VirtualRuntime();
    const ticks: number[] = [];
    const every = rt.timers.every(() => ticks.push(rt.monoMs), 40);
    const once = rt.timers.after(() => ticks.push(-1), 50);
    once.cancel();
    rt.advance(130);
    expect(ticks).toEqual([40, 80, 120]);
    every.cancel();
    rt.advance(1_000);
    expect(ticks).toEqual([40, 80, 120]);
    expect(rt.pending).toBe(0);
  });

  it("sleep resolves true at its time, false on abort (at once when aborted before)", async () => {
    const rt = new VirtualRuntime();
    const slept = rt.timers.sleep(500);
    rt.advance(499);
    let done = false;
    void slept.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    rt.advance(1);
    await expect(slept).resolves.toBe(true);
    const abort = new AbortController();
    const cut = rt.timers.sleep(500, abort.signal);
    abort.abort();
    await expect(cut).resolves.toBe(false);
    expect(rt.pending).toBe(0);
    await expect(rt.timers.sleep(10, abort.signal)).resolves.toBe(false);
  });

  it("refuses to move time backwards", () => {
    expect(() => new VirtualRuntime().advance(-1)).toThrow(RangeError);
  });
});

describe("SYSTEM_RUNTIME", () => {
  it("runs after, every and sleep on real time, and cancels", async () => {
    const { timers, clock } = SYSTEM_RUNTIME;
    const start = clock.now().monoMs;
    let ticks = 0;
    const every = timers.every(() => (ticks += 1), 5);
    let cancelled = false;
    timers.after(() => (cancelled = true), 5).cancel();
    await expect(timers.sleep(40)).resolves.toBe(true);
    every.cancel();
    const seen = ticks;
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(clock.now().monoMs - start).toBeGreaterThanOrEqual(35);
    await timers.sleep(20);
    expect(ticks).toBe(seen);
    expect(cancelled).toBe(false);
    const abort = new AbortController();
    const cut = timers.sleep(60_000, abort.signal);
    abort.abort();
    await expect(cut).resolves.toBe(false);
  });
});
