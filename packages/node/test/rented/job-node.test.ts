// A managed Hugging Face Jobs node (`provider: huggingface-job` with a `job:` section) over HTTPS
// against the Jobs emulator, with the real keyring and virtual time: the first request runs one job
// (concurrent cold requests make exactly one create) and is served through the token-protected port;
// the window's end cancels it with `window-ended` (CANCELED is the evidence, the obligation closes,
// the ledger holds what HF bills); idle and budget cancel; sponsor exit cancels; a restart adopts the
// running job from its store (by its job id, with the listing refused); the node is `prefer` during its
// window and `never` after it, unless `routing.use` is written in the config.
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { chat, COLD_START_MS, jobWorld, type JobWorld, MIN, NODE, NS, rentedRow } from "./job-harness.js";

const worlds = keyringWorlds<JobWorld>();

async function world(options: Parameters<typeof jobWorld>[1] = {}): Promise<JobWorld> {
  const w = worlds.add(await jobWorld(worlds.ca, options));
  await w.start();
  return w;
}

function jobs(w: JobWorld) {
  return w.hf.jobs.list(NS);
}

function view(w: JobWorld) {
  const v = w.node.jobs.node(NODE)?.view();
  if (v === undefined) throw new Error("the job node is not managed");
  return v;
}

/** The ledger's total for the node, in micro-USD. */
function ledgerMicroUsd(w: JobWorld): number {
  return Math.round((view(w).spend_usd?.total ?? 0) * 1e6);
}

describe("managed Hugging Face Jobs node", () => {
  it("runs one job for concurrent first requests and serves them through the exposed port", async () => {
    const w = await world();
    expect(w.node.jobs.has(NODE)).toBe(true);
    expect(jobs(w)).toEqual([]);
    const first = chat(w);
    const second = chat(w);
    const [a, b] = await w.advanceUntil(Promise.all([first, second]), COLD_START_MS + 5 * MIN);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const list = jobs(w);
    expect(list).toHaveLength(1);
    const job = list[0];
    expect(job?.stage).toBe("RUNNING");
    expect(job?.timeoutSeconds).toBe(30 * 60);
    expect(job?.flavor).toBe("l4x1");
    // The HF token reached the job as a Job secret, never as plain environment.
    expect(job?.secretNames).toEqual(["HF_TOKEN"]);
    expect(JSON.stringify(job?.labels)).not.toContain(w.token);
    expect(view(w).job_state).toBe("running");
    // The flavor the job reports, named as HF's hardware list names its GPU (1 × L4).
    expect((await rentedRow(w))["gpu"]).toBe("L4 ×1");
    // l4x1 at $0.80/h as listed per minute (0.013333 USD) + the exposed-port surcharge $0.01/h.
    expect(view(w).usd_per_hour).toBeCloseTo(0.81, 4);
    expect(JSON.stringify(view(w))).not.toContain(w.token);
    expect(w.log.join("\n")).not.toContain(w.token);
  });

  it("cancels the job at its window's end (window-ended); the obligation closes; ledger holds the meter", async () => {
    const w = await world({ windowMin: 10 });
    const served = await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN);
    expect(served.status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    // Keep it busy so idleness never stops it first: requests every few minutes.
    for (let i = 0; i < 3; i++) {
      await w.advance(2 * MIN);
      expect((await chat(w)).status).toBe(200);
    }
    expect(await rentedRow(w)).toMatchObject({ policy: "prefer", eligible: true });
    await w.advance(10 * MIN, 5_000);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(w.log.join("\n")).toContain("window ended");
    // Outside its window the node attracts no request: no new job is run for one.
    const row = await rentedRow(w);
    expect(row).toMatchObject({ policy: "never", eligible: false });
    expect(String(row["reason"])).toContain("window ended");
    const refused = await chat(w);
    expect(refused.status).not.toBe(200);
    expect(refused.text).toContain("rented_node_ineligible");
    expect(jobs(w)).toHaveLength(1);
    expect(view(w).open_obligations).toBe(0);
    expect(view(w).job_state).toBe("cold");
    // HF bills RUNNING started minutes; the ledger counts SCHEDULING too (cautious) and the listing's
    // per-minute rounding (0.013333 USD/min for $0.80/h, counted as up to 0.5 µ$/min more): never less.
    const meter = w.hf.jobs.meter.totalMicroUsd(NS, jobId);
    expect(meter).toBeGreaterThan(0);
    const ledger = ledgerMicroUsd(w);
    expect(ledger).toBeGreaterThanOrEqual(meter);
    expect(ledger - meter).toBeLessThanOrEqual(Math.ceil((0.81 * 1e6 * 2) / 60));
    // Billing ended: more time costs nothing more.
    await w.advance(30 * MIN, 60_000);
    expect(w.hf.jobs.meter.totalMicroUsd(NS, jobId)).toBe(meter);
    expect(ledgerMicroUsd(w)).toBe(ledger);
  });

  it("cancels the job after idle_pause_min without a request (idle); the next request runs a new one", async () => {
    const w = await world({
      windowMin: 120,
      lines: ["    lifecycle: { idle_pause_min: 10, exit_timeout_s: 5 }"],
    });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    await w.advance(9 * MIN);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("RUNNING");
    await w.advance(2 * MIN);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(w.log.join("\n")).toContain("idle for 10 min");
    expect(view(w).open_obligations).toBe(0);
    // The next request runs a new job (a new window).
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    expect(jobs(w).filter((j) => j.stage === "RUNNING")).toHaveLength(1);
    expect(jobs(w)).toHaveLength(2);
  });

  it("cancels the job when the budget cap is reached and refuses with budget_exceeded", async () => {
    // $0.81/h: a $0.05 daily cap lasts about 3.7 minutes.
    const w = await world({
      windowMin: 120,
      lines: ["    lifecycle: { exit_timeout_s: 5 }", "    budget: { usd_per_day: 0.05 }"],
    });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    await w.advance(5 * MIN, 5_000);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(view(w).budget_exceeded).toBe(true);
    expect(w.log.join("\n")).toContain("budget reached: cancelling its job");
    const refused = await chat(w);
    expect(refused.status).not.toBe(200);
    expect(refused.text).toContain("budget_exceeded");
    expect(jobs(w)).toHaveLength(1);
    // The cap held: spend stops at about the cap (one pass of 5 s late at most, per started minute).
    expect(ledgerMicroUsd(w)).toBeLessThanOrEqual(50_000 + Math.ceil(810_000 / 60));
  });

  it("cancels the job at sponsor exit and waits for the evidence (CANCELED)", async () => {
    const w = await world({ windowMin: 60 });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    expect(w.hf.jobs.get(jobId)?.stage).toBe("RUNNING");
    await w.node.close(200);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(w.log.join("\n")).toContain("its job is cancelled at sponsor exit");
  });

  it("a routing.use written in the config holds outside the window too", async () => {
    const w = await world({
      windowMin: 10,
      lines: ["    lifecycle: { exit_timeout_s: 5 }", "    routing: { use: overflow }"],
    });
    expect(await rentedRow(w)).toMatchObject({ policy: "overflow" });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    await w.advance(12 * MIN, 5_000); // in steps shorter than the gap between the window end and HF's own timeout
    expect(jobs(w)[0]?.stage).toBe("CANCELED");
    expect(await rentedRow(w)).toMatchObject({ policy: "overflow" });
  });

  it("a crashed sponsor's job is found again by its SQLite record (job id), not the listing: one job, one obligation, the window still ends it", async () => {
    const w = await world({
      windowMin: 60,
      lines: ["    lifecycle: { pause_on_sponsor_exit: false, exit_timeout_s: 5 }"],
    });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    // The crash: the sponsor goes without cancelling its job.
    await w.node.close(200);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("RUNNING");
    // The restarted sponsor cannot list jobs (so no label can lead it to the job): only its record can.
    w.hf.jobs.faults.failNext(100_000, 400, { method: "GET", path: /^\/api\/jobs\/alice$/ });
    await w.start();
    await w.node.jobs.tick();
    expect(view(w).open_obligations).toBe(1);
    expect((await w.advanceUntil(chat(w), 2 * MIN)).status).toBe(200);
    expect(jobs(w)).toHaveLength(1);
    expect(view(w).job_state).toBe("running");
    expect(view(w).open_obligations).toBe(1);
    // Its window counts from the first create and still ends it, listing or not.
    await w.advance(60 * MIN, 60_000);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
    expect(jobs(w)).toHaveLength(1);
    // The evidence closes the obligation once the listing answers again.
    w.hf.jobs.faults.clear();
    await w.advance(20_000);
    expect(view(w).open_obligations).toBe(0);
  });

  it("a restarted sponsor adopts its running job (same id) and serves from it", async () => {
    const w = await world({
      windowMin: 60,
      lines: ["    lifecycle: { pause_on_sponsor_exit: false, exit_timeout_s: 5 }"],
    });
    expect((await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const jobId = jobs(w)[0]?.id ?? "";
    await w.node.close(200);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("RUNNING");
    await w.start();
    expect((await w.advanceUntil(chat(w), 2 * MIN)).status).toBe(200);
    expect(jobs(w)).toHaveLength(1);
    expect(view(w).job_state).toBe("running");
    // Its window still counts from the first create: it ends 60 min after, not after the restart.
    await w.advance(60 * MIN, 60_000);
    expect(w.hf.jobs.get(jobId)?.stage).toBe("CANCELED");
  });
});
