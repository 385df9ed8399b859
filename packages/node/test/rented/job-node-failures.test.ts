// A managed Jobs node whose jobs keep failing as they come up (the emulator's ERROR fault): one
// failure is retried by the next request, two in a row stop the node from running any more until
// `pair rented resume` — each new job would bill its start-up minutes and fail the same way. The
// view says so (ineligible, with Hugging Face's message), and the refusal outlives a sponsor restart.
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { chat, COLD_START_MS, jobWorld, type JobWorld, MIN, NODE, NS, rentedRow } from "./job-harness.js";

const worlds = keyringWorlds<JobWorld>();

async function world(): Promise<JobWorld> {
  const w = worlds.add(await jobWorld(worlds.ca));
  await w.start();
  return w;
}

const stages = (w: JobWorld) => w.hf.jobs.list(NS).map((j) => j.stage);

describe("a Jobs node whose jobs fail as they come up", () => {
  it("retries one failure, runs no third job after two, and runs again after resume", async () => {
    const w = await world();
    w.hf.jobs.faults.failNextJob("CUDA out of memory");
    w.hf.jobs.faults.failNextJob("CUDA out of memory");
    const first = await w.advanceUntil(chat(w), COLD_START_MS + 10 * MIN);
    expect(first.status).toBe(409);
    expect(first.text).toContain("rented_node_ineligible");
    expect(first.text).toContain("ended in ERROR (CUDA out of memory)");
    expect(stages(w)).toEqual(["ERROR", "ERROR"]);

    // No request, pass or minute runs a third job: the node is out of routing, and says why.
    const again = await w.advanceUntil(chat(w), 5 * MIN);
    expect(again.status).toBeGreaterThanOrEqual(400);
    await w.advance(10 * MIN);
    expect(stages(w)).toEqual(["ERROR", "ERROR"]);
    const row = await rentedRow(w);
    expect(row).toMatchObject({ policy: "never", eligible: false });
    expect(String(row["reason"])).toContain(`pair rented resume ${NODE}`);

    // A restart reads the failures from SQLite: still no job.
    await w.node.close();
    await w.start();
    await w.advanceUntil(chat(w), 5 * MIN);
    expect(stages(w)).toEqual(["ERROR", "ERROR"]);

    // The user's resume: the next request runs a job, which serves.
    expect(w.node.jobs.node(NODE)?.resume()).toEqual({ ok: true });
    const served = await w.advanceUntil(chat(w), COLD_START_MS + 5 * MIN);
    expect(served.status).toBe(200);
    expect(stages(w)).toEqual(["ERROR", "ERROR", "RUNNING"]);
  });
});
