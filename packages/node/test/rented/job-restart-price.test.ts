// A restarted sponsor whose running Hugging Face Job bills on while its first pass waits for the Jobs
// hardware list (the flavor's price; a pass slowed by load): the ledger keeps the price it had and
// bills every minute of the job, at or above the emulator's meter. The bug this guards against: the
// node opened its reservation "at 0 until the price is known", which after a restart set the running
// job's price to 0 until the first pass read the list, so the minutes that started meanwhile were
// entered at nothing (the Jobs crash tests under load: one billed minute under the meter;
// docs/reliability.md). Real keyring, virtual time (the emulator's clock): no real load, no sleeps.
import { describe, expect, it } from "vitest";
import { jobWorld, MIN, NODE, NS, startServed, type JobWorld } from "./job-harness.js";
import { until } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const worlds = keyringWorlds<JobWorld>();

const HARDWARE = { method: "GET", path: /^\/api\/jobs\/hardware$/ } as const;

/** A sponsor (window 15 min, no pause at exit) whose job a first request brought up; that job. */
async function servedJob() {
  const w = worlds.add(
    await jobWorld(worlds.ca, {
      windowMin: 15,
      lines: ["    lifecycle: { pause_on_sponsor_exit: false, exit_timeout_s: 5 }"],
    }),
  );
  await startServed(w);
  const [job] = w.hf.jobs.list(NS);
  return { w, job };
}

function ledgerMicroUsd(w: JobWorld): number {
  return Math.round((w.node.jobs.node(NODE)?.view().spend_usd?.total ?? 0) * 1e6);
}

describe("managed Hugging Face Jobs node: the price across a restart", () => {
  it("a restart whose first pass waits 5 min for the hardware list bills the running job at its price, not 0: ledger ≥ meter", async () => {
    const { w, job } = await servedJob();
    expect(job?.stage).toBe("RUNNING");
    await w.node.close(200); // a crash: the job runs on
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("RUNNING");

    // The restarted sponsor's first pass waits 5 virtual minutes for the hardware list (a pass slowed
    // by load); the job bills on meanwhile.
    const readsBefore = w.hf.jobs.faults.arrived(HARDWARE);
    w.hf.jobs.faults.holdNext(1, HARDWARE);
    const starting = w.start(); // its first pass reads the hardware list
    await until(() => w.hf.jobs.faults.arrived(HARDWARE) > readsBefore, 2_000); // the first pass asks for the hardware list
    w.hf.advance(5 * MIN);
    expect(w.hf.jobs.faults.releaseHeld("apply")).toBe(1);
    await starting;
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("RUNNING");
    expect(ledgerMicroUsd(w), "ledger after the slow pass").toBeGreaterThanOrEqual(
      w.hf.jobs.meter.totalMicroUsd(NS),
    );

    // The window's end cancels the job; its end closes the obligation and the ledger's episode.
    await w.advance(15 * MIN, 10_000);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("CANCELED");
    expect(w.node.jobs.node(NODE)?.view().open_obligations).toBe(0);
    const meter = w.hf.jobs.meter.totalMicroUsd(NS);
    const ledger = ledgerMicroUsd(w);
    expect(meter).toBeGreaterThan(0);
    expect(ledger, `ledger ${ledger} µUSD ≥ meter ${meter} µUSD`).toBeGreaterThanOrEqual(meter);
    // Over by at most the cautious start (the create's intent) and the crash's outage: two minutes.
    expect(ledger).toBeLessThanOrEqual(meter + 2 * 13_501);
  });

  it("a restart whose hardware list keeps failing still reconciles and cancels at the window's end, billing at the kept price", async () => {
    const { w, job } = await servedJob();
    await w.node.close(200); // a crash: the job runs on

    w.hf.jobs.faults.failNext(100_000, 403, HARDWARE); // the price list is refused from now on (not retried)
    await w.start();
    await w.advance(20 * MIN, 10_000);
    expect(w.hf.jobs.get(job!.id)?.stage, "the window's end cancelled it").toBe("CANCELED");
    expect(w.node.jobs.node(NODE)?.view().last_error ?? "").toContain("hardware list");
    expect(w.node.jobs.node(NODE)?.view().open_obligations).toBe(0);
    const meter = w.hf.jobs.meter.totalMicroUsd(NS);
    const ledger = ledgerMicroUsd(w);
    expect(ledger, `ledger ${ledger} µUSD ≥ meter ${meter} µUSD`).toBeGreaterThanOrEqual(meter);
  });
});
