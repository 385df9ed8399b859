// Provider faults against a running sponsor, Hugging Face Jobs: a sponsor with one managed Jobs node
// (`batch`, a job run on demand) over HTTPS to the HF emulator's Jobs API, the token in the real
// keyring, virtual time. The Jobs API misbehaves (a lost create answer, a 5xx storm, a cancel
// accepted while the job runs on) and each test asserts on the emulator's jobs and meter and on the
// sponsor's SQLite (obligations).
import { join } from "node:path";
import { createTestCa, type TestCa } from "@pair/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requireSecretService } from "../credentials/secret-service.js";
import { COLD_START_MS, jobWorld, MIN, NODE, NS, REPO, type JobWorld } from "../rented/job-harness.js";
import { chat, storedHosting } from "./fault-harness.js";

let ca: TestCa;
const worlds: JobWorld[] = [];
beforeEach(async () => {
  await requireSecretService();
  ca ??= await createTestCa();
});
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    w.hf.jobs.faults.clear(); // a failed test must not leave the exit cancel in a storm
    await w.cleanup();
  }
});

async function world(): Promise<JobWorld> {
  const w = await jobWorld(ca, { windowMin: 120 });
  worlds.push(w);
  await w.start();
  return w;
}

const jobs = (w: JobWorld) => w.hf.jobs.list(NS);
const BILLED = ["SCHEDULING", "RUNNING", "UPDATING"];
const openObligations = (w: JobWorld) =>
  Object.values(storedHosting(join(w.dir, "data"), NODE).obligations).filter((o) => o.state === "open");

/** Every job HF bills has exactly one open obligation (by its id), and no job has two. */
function expectCovered(w: JobWorld): void {
  const open = openObligations(w);
  const state = storedHosting(join(w.dir, "data"), NODE);
  const idOf = (o: (typeof open)[number]) => (o.key ?? state.deployments[o.deploymentId]?.key)?.incarnation;
  for (const job of jobs(w).filter((j) => BILLED.includes(j.stage)))
    expect(
      open.filter((o) => idOf(o) === job.id),
      `open obligation for billing job ${job.id}`,
    ).toHaveLength(1);
  expect(new Set(open.map(idOf)).size).toBe(open.length);
}

describe("provider faults: Hugging Face Jobs", () => {
  it("a lost create answer: one job, found by reconciliation, never created twice; the client is served", async () => {
    const w = await world();
    w.hf.jobs.faults.loseAnswers(1, { method: "POST", path: new RegExp(`^/api/jobs/${NS}$`) });
    const answer = await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN);
    expect([200, 502, 503, 504]).toContain(answer.status);
    await w.advance(MIN);
    expect(jobs(w)).toHaveLength(1);
    expectCovered(w);
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    expect(jobs(w)).toHaveLength(1);
  });

  it("5xx storm: the running job keeps serving, stays covered, nothing is created; it converges after", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    w.hf.jobs.faults.failNext(1_000_000, 503);
    await w.advance(MIN);
    expect((await chat(w.node, REPO)).status).toBe(200); // the exposed port is up
    expectCovered(w);
    expect(openObligations(w)).toHaveLength(1);
    w.hf.jobs.faults.clear();
    await w.advance(MIN);
    expect(jobs(w)).toHaveLength(1);
    expectCovered(w);
  });

  it("cancel accepted but still billing: the obligation stays open and the cancel is retried until it ends", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const [job] = jobs(w);
    w.hf.jobs.faults.slowStateChanges(24 * 60 * MIN); // HF answers the cancel and the job runs on
    const paused = await w.node.jobs.node(NODE)!.pause();
    expect(paused).toMatchObject({ ok: false, error: { code: "upstream_error" } });
    for (let t = 0; t < 3 * MIN; t += 10_000) {
      await w.advance(10_000);
      expect(w.hf.jobs.get(job!.id)?.stage).toBe("RUNNING");
      expectCovered(w); // billing: one open obligation at every pass
    }
    expect(String(w.node.jobs.node(NODE)!.view().last_error)).toContain("stop unconfirmed");
    w.hf.jobs.faults.clear();
    await w.advance(2 * MIN);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("CANCELED");
    expect(openObligations(w)).toHaveLength(0);
    expect(String(w.node.jobs.node(NODE)!.view().last_error)).not.toContain("stop unconfirmed");
    expect(jobs(w)).toHaveLength(1);
  });
});
