// Rental windows: the verdict flips to `window-ended` exactly at the window's end; the obligations
// name only live deployments past their window (not declared-only, not already stopping); and the
// controller, fed `RequireStop` with that reason, records a StopRequired with it and stops.
import { describe, expect, it } from "vitest";
import {
  HostingController,
  ManualClock,
  MemoryHostingStore,
  STOP_REASONS,
  windowObligations,
  windowVerdict,
  type HostingEvent,
} from "@pair/provision";
import { CountingIds, FakeProvider } from "@pair/testkit";
import { AUTH, OWNER, POLICY, SPEC } from "./fixtures.js";

describe("windowVerdict", () => {
  it("is not ended before endMs, and ended from endMs on", () => {
    const w = { startMs: 1_000, endMs: 61_000 };
    expect(windowVerdict(w, 1_000)).toEqual({ ended: false, remainingMs: 60_000 });
    expect(windowVerdict(w, 60_999)).toEqual({ ended: false, remainingMs: 1 });
    expect(windowVerdict(w, 61_000)).toEqual({ ended: true, reason: "window-ended" });
    expect(windowVerdict(w, 10_000_000)).toEqual({ ended: true, reason: "window-ended" });
  });

  it("refuses a window that ends before it starts", () => {
    expect(() => windowVerdict({ startMs: 5, endMs: 5 }, 0)).toThrow(/endMs: must be after startMs/);
    expect(() => windowVerdict({ startMs: Number.NaN, endMs: 5 }, 0)).toThrow(/startMs/);
  });

  it("window-ended is a stop reason", () => {
    expect(STOP_REASONS).toContain("window-ended");
  });
});

describe("windowObligations through the controller", () => {
  it("names a running deployment at its window's end; RequireStop records the reason and stops it", async () => {
    const clock = new ManualClock();
    const fake = new FakeProvider({ account: "acct", clock });
    const events: HostingEvent[] = [];
    const c = HostingController.open({
      controllerId: "c1",
      ownerTag: OWNER,
      account: "acct",
      provider: fake,
      store: new MemoryHostingStore(),
      clock,
      ids: new CountingIds(),
      policy: POLICY,
      leaseTtlMs: 30_000,
      busyRequeueMs: 1_000,
      idleRequeueMs: 60_000,
      stopRetryMs: 5_000,
      onEvent: (e) => events.push(e),
    });
    const declared = c.declare(SPEC, AUTH);
    if (!declared.ok) throw new Error(JSON.stringify(declared.error));
    const id = declared.value;
    const start = clock.now().wallMs;
    const windows = new Map([[id, { startMs: start, endMs: start + 120_000 }]]);
    expect(windowObligations(c.state, windows, start + 200_000)).toEqual([]); // only declared
    await c.start(id);
    expect(windowObligations(c.state, windows, start + 119_999)).toEqual([]);
    expect(windowObligations(c.state, new Map(), start + 500_000)).toEqual([]);
    clock.advance(120_000);
    const due = windowObligations(c.state, windows, clock.now().wallMs);
    expect(due).toEqual([{ id, reason: "window-ended" }]);
    for (const obligation of due) {
      const stopped = await c.requireStop(obligation.id, obligation.reason);
      expect(stopped.ok).toBe(true);
    }
    expect(events).toContainEqual(
      expect.objectContaining({ type: "StopRequired", id, reason: "window-ended" }),
    );
    expect(windowObligations(c.state, windows, clock.now().wallMs)).toEqual([]);
    expect(fake.billing()).toHaveLength(0);
  });
});
