// The batch window end to end: the HostingController drives HuggingFaceJobsProvider over the Jobs
// emulator; at the window's end `windowObligations` names the job and the controller stops it with
// reason `window-ended` (a cancel) before HF's own timeout (the backstop, `timeoutSeconds` counted
// from RUNNING) would fire; the obligation closes on evidence (CANCELED) and billing ends there.
import { afterEach, describe, expect, it } from "vitest";
import {
  HostingController,
  MemoryHostingStore,
  windowObligations,
  type HostingEvent,
  type RentalWindow,
} from "@pair/provision";
import { CountingIds } from "@pair/testkit";
import { MIN, NS, OWNER, jobSpec, startJobsHarness, type JobsHarness } from "./jobs-harness.js";

const open: JobsHarness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

describe("window-ended through the hosting controller", () => {
  it("cancels the job at the window's end with reason window-ended; billing stops there", async () => {
    const h = await startJobsHarness();
    open.push(h);
    const events: HostingEvent[] = [];
    const c = HostingController.open({
      controllerId: "sponsor-1",
      ownerTag: OWNER,
      account: NS,
      provider: h.provider,
      store: new MemoryHostingStore(),
      clock: h.clock,
      ids: new CountingIds(),
      policy: { maxActiveResources: 2, maxLifetimeMs: 24 * 60 * MIN },
      leaseTtlMs: 30_000,
      busyRequeueMs: 1_000,
      idleRequeueMs: 60_000,
      stopRetryMs: 5_000,
      onEvent: (e) => events.push(e),
    });
    const windowS = 30 * 60;
    const declared = c.declare(jobSpec("batch", { settings: { windowS } }), {
      ledgerId: "l1",
      reservationId: "r1",
    });
    if (!declared.ok) throw new Error(JSON.stringify(declared.error));
    const id = declared.value;
    const startMs = h.clock.now().wallMs;
    const windows = new Map<string, RentalWindow>([[id, { startMs, endMs: startMs + windowS * 1000 }]]);
    await c.start(id);
    const [job] = h.emu.jobs.list(NS);
    expect(job?.timeoutSeconds).toBe(windowS);
    const jobId = job?.id ?? "";

    h.emu.advance(windowS * 1000 - 1);
    await c.reconcileOnce();
    expect(windowObligations(c.state, windows, h.clock.now().wallMs)).toEqual([]);
    expect(h.emu.jobs.get(jobId)?.stage).toBe("RUNNING");

    h.emu.advance(1);
    const due = windowObligations(c.state, windows, h.clock.now().wallMs);
    expect(due).toEqual([{ id, reason: "window-ended" }]);
    for (const o of due) expect((await c.requireStop(o.id, o.reason)).ok).toBe(true);
    await c.reconcileOnce();
    expect(events).toContainEqual(
      expect.objectContaining({ type: "StopRequired", id, reason: "window-ended" }),
    );
    expect(h.emu.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(c.state.deployments[id]?.phase).toBe("Stopped");
    // Scheduling (20 s) is free; 29 min 40 s running → 30 started minutes, and no more afterwards.
    h.emu.advance(60 * MIN);
    expect(h.emu.jobs.meter.billedMinutes(NS, jobId)).toBe(30);
  });
});
