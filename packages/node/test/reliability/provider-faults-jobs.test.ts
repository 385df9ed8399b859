// Provider faults against a running sponsor, Hugging Face Jobs: a sponsor with one managed Jobs node
// (`batch`, a job run on demand) over HTTPS to the HF emulator's Jobs API, the token in the real
// keyring, virtual time. The Jobs API misbehaves (a lost create answer, a 5xx storm, a cancel
// accepted while the job runs on, 429 with retry-after, a partial listing, a job stuck in
// SCHEDULING) and each test asserts on the emulator's jobs, meter and received requests and on the
// sponsor's SQLite (obligations).
import { join } from "node:path";
import { HfToken, HttpsEndpointsTransport } from "@pair/huggingface";
import { describe, expect, it } from "vitest";
import { COLD_START_MS, jobWorld, MIN, NODE, NS, REPO, type JobWorld } from "../rented/job-harness.js";
import { SPEC } from "../rented/managed-harness.js";
import { breathe, chat, storedHosting } from "./fault-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

// A failed test must not leave the exit cancel in a storm.
const worlds = keyringWorlds<JobWorld>((w) => w.hf.jobs.faults.clear());

async function world(options: Parameters<typeof jobWorld>[1] = {}, before?: (w: JobWorld) => Promise<void>) {
  const w = worlds.add(await jobWorld(worlds.ca, { windowMin: 120, ...options }));
  await before?.(w);
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

  it("429 with retry-after: nothing of the sponsor reaches Hugging Face inside the window (Jobs and Endpoints clients alike); the running job keeps serving", async () => {
    // Beside the Jobs node, a managed endpoint (paused) whose probe asks the Endpoints API every 200 ms.
    const w = await world(
      {
        moreNodes: (ref) => [
          "  - name: gpu-hf",
          "    provider: huggingface-endpoint",
          "    endpoint: alice/qwen",
          `    credential: ${ref}`,
          "    budget: { unlimited: true }",
        ],
      },
      async (w) => {
        const api = new HttpsEndpointsTransport({
          token: new HfToken(w.token),
          endpointsApi: w.hf.endpointsApiUrl,
          hubApi: w.hf.hubApiUrl,
          extraCaPem: worlds.ca.certPem,
        });
        await api.createEndpoint(NS, SPEC); // alice/qwen, serving Qwen/Qwen3-0.6B (REPO) too
        await api.pause(NS, "qwen");
        await api.close();
      },
    );
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const [job] = jobs(w);
    const RETRY_AFTER_MS = 2_000;
    w.hf.jobs.faults.rateLimitNext(1, RETRY_AFTER_MS / 1000, { method: "GET", path: `/api/jobs/${NS}` });
    const pass = w.node.jobs.tick(); // its listing is refused; the pass waits the window out
    await breathe(300);
    const during = await chat(w.node, REPO); // inside the window: served by the running job
    await pass;
    expect(during.status).toBe(200);
    const limited = w.hf.jobs.requests().find((r) => r.fault === "rate-limit");
    expect(limited).toBeDefined();
    const t0 = limited!.atRealMs;
    await breathe(500); // the probe asks again after the window
    const endpointsCalls = w.hf.controlRequests().map((r) => r.atRealMs);
    const jobsCalls = w.hf.jobs.requests().map((r) => r.atRealMs);
    // Requests already under way when the 429 arrived may land a few ms after it; none later inside.
    const inside = (at: number) => at > t0 + 100 && at < t0 + RETRY_AFTER_MS - 50;
    expect(endpointsCalls.filter(inside), "Endpoints API calls inside the window").toEqual([]);
    expect(jobsCalls.filter(inside), "Jobs API calls inside the window").toEqual([]);
    expect(
      endpointsCalls.some((at) => at < t0),
      "the probe ran before",
    ).toBe(true);
    expect(
      endpointsCalls.some((at) => at >= t0 + RETRY_AFTER_MS),
      "and after",
    ).toBe(true);
    // The refused listing was sent again, once the window had passed.
    const again = w.hf.jobs.requests().find((r) => r.atRealMs > t0 && r.path === `/api/jobs/${NS}`);
    expect(again!.atRealMs - t0).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 100);
    console.log(
      `jobs 429: listing sent again ${Math.round(again!.atRealMs - t0)} ms after the 429 (retry-after ` +
        `${RETRY_AFTER_MS} ms); calls inside the window: 0; a chat inside it: ${during.status} in ` +
        `${Math.round(during.elapsedMs)} ms`,
    );
    expect(jobs(w)).toHaveLength(1);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("RUNNING");
    expectCovered(w);
    expect(openObligations(w)).toHaveLength(1);
    expect(w.hf.endpoints.get(NS, "qwen")?.state).toBe("paused");
  });

  it("a partial listing: a live job missing from complete listings keeps its obligation and record; it is not created again", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    const [job] = jobs(w);
    const records = () => Object.keys(storedHosting(join(w.dir, "data"), NODE).deployments);
    const before = records();
    w.hf.jobs.faults.hideJobFromListing(job!.id, 6);
    for (let pass = 0; pass < 6; pass++) {
      await w.advance(10_000);
      expectCovered(w);
      expect(openObligations(w)).toHaveLength(1);
    }
    expect(records()).toEqual(before); // the same record: not discharged, not re-adopted
    expect((await chat(w.node, REPO)).status).toBe(200);
    const creates = w.hf.jobs.requests().filter((r) => r.method === "POST" && r.path === `/api/jobs/${NS}`);
    expect(creates).toHaveLength(1);
    expect(jobs(w)).toHaveLength(1);
    // Once it really ends, the obligation closes on that evidence.
    expect((await w.node.jobs.node(NODE)!.pause()).ok).toBe(true);
    await w.advance(10_000);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("CANCELED");
    expect(openObligations(w)).toHaveLength(0);
    const [obligation] = Object.values(storedHosting(join(w.dir, "data"), NODE).obligations);
    expect(obligation?.evidence).toBeDefined();
  });

  it("slow scheduling: a job stuck in SCHEDULING for minutes gives the client cold_start_timeout within its budget, stays covered, is never created twice, and serves once it runs", async () => {
    const COLD_START_S = 3;
    const w = await world({ coldStartS: COLD_START_S });
    w.hf.jobs.faults.slowScheduling(8 * MIN);
    // Virtual time stands still: the job stays SCHEDULING for the whole budget.
    const refused = await chat(w.node, REPO);
    expect(refused.status).toBe(504);
    expect(refused.text).toContain("cold_start_timeout");
    expect(refused.elapsedMs).toBeLessThan(COLD_START_S * 1000 + 1_500);
    console.log(`jobs slow scheduling: cold_start_timeout after ${Math.round(refused.elapsedMs)} ms`);
    expect(jobs(w).map((j) => j.stage)).toEqual(["SCHEDULING"]);
    expect(openObligations(w)).toHaveLength(1); // it may bill soon: covered from the intent on
    await w.advance(4 * MIN);
    expect(jobs(w).map((j) => j.stage)).toEqual(["SCHEDULING"]);
    expect(openObligations(w)).toHaveLength(1);
    const again = await chat(w.node, REPO); // a second client: waits on the same job, no new create
    expect(again.status).toBe(504);
    expect(jobs(w)).toHaveLength(1);
    // It comes up: the same job serves (advanced in 1-minute steps inside the budget).
    const served = await w.advanceUntil(chat(w.node, REPO), 10 * MIN, MIN);
    expect(served.status).toBe(200);
    expect(jobs(w)).toHaveLength(1);
    expect(
      w.hf.jobs.requests().filter((r) => r.method === "POST" && r.path === `/api/jobs/${NS}`),
    ).toHaveLength(1);
    expectCovered(w);
  });
});
