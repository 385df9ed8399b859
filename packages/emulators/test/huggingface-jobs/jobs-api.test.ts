// The Hugging Face Jobs emulator over HTTPS (test CA, virtual time): create/list/inspect/cancel/
// labels/logs/hardware, stages with timeout enforcement, the token-protected exposed port, the
// billing meter (started minutes × flavor price + exposed-port surcharge), secrets kept out of every
// answer, and the faults (429 + retry-after, 5xx, lost answer, held requests, a partial listing, slow
// scheduling, job error), with the requests received.
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, BOB, READER, startHarness, type Harness } from "../huggingface/hf-harness.js";

const open: Harness[] = [];
async function harness(): Promise<Harness> {
  const h = await startHarness({ jobs: { timings: { schedulingMs: 20_000, loadMs: 90_000 }, pageSize: 2 } });
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const SECRET = "hf_container_only_secret_value";
const MIN = 60_000;

function jobBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    dockerImage: "vllm/vllm-openai:v0.23.0",
    command: ["vllm", "serve", "Qwen/Qwen3-0.6B", "--host", "0.0.0.0", "--port", "8000"],
    arguments: [],
    environment: { PAIR_OWNER_TAG: "owner-1" },
    secrets: { HF_TOKEN: SECRET },
    flavor: "l4x1",
    timeoutSeconds: 3600,
    labels: { name: "batch", "pair-owner": "owner-1" },
    expose: { ports: [8000] },
    ...extra,
  };
}

async function create(h: Harness, extra: Record<string, unknown> = {}) {
  const reply = await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice`, {
    token: ALICE,
    body: jobBody(extra),
  });
  expect(reply.status, reply.text).toBe(200);
  return { id: reply.json["id"] as string, reply };
}

describe("Jobs API", () => {
  it("creates a SCHEDULING job that shows secret names only, and inspects it", async () => {
    const h = await harness();
    const { id, reply } = await create(h);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(reply.text).not.toContain(SECRET);
    expect(reply.json["secrets"]).toEqual(["HF_TOKEN"]);
    expect((reply.json["status"] as unknown as { stage: string }).stage).toBe("SCHEDULING");
    expect((reply.json["status"] as unknown as { exposeUrls: string[] }).exposeUrls).toEqual([
      h.emu.jobs.exposeUrl(id, 8000),
    ]);
    expect(h.emu.jobs.containerEnv(id)?.["HF_TOKEN"]).toBe(SECRET);
    expect(h.emu.jobs.containerEnv(id)?.["JOB_ID"]).toBe(id);
    const got = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice/${id}`, { token: ALICE });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(SECRET);
    expect((await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice/${id}`, { token: BOB })).status).toBe(401);
    expect(
      (await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice`, { token: READER, body: jobBody() })).status,
    ).toBe(403);
    expect((await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`, { token: ALICE })).json["name"]).toBe(
      "alice",
    );
  });

  it("refuses bad bodies, unknown and unavailable flavors, and bad labels with 400", async () => {
    const h = await harness();
    const post = (body: unknown) =>
      h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice`, { token: ALICE, body });
    expect((await post(jobBody({ flavor: "no-such" }))).json.error).toMatch(/Invalid flavor/);
    expect((await post(jobBody({ flavor: "h200x8" }))).json.error).toMatch(/no capacity/);
    expect((await post(jobBody({ labels: { "bad key": "x" } }))).status).toBe(400);
    expect((await post(jobBody({ command: [] }))).status).toBe(400);
    expect(h.emu.jobs.list("alice")).toEqual([]);
  });

  it("lists with stage and label filters, paginated by Link rel=next", async () => {
    const h = await harness();
    const a = await create(h);
    const b = await create(h, { labels: { name: "other" } });
    const c = await create(h);
    await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice/${b.id}/cancel`, { token: ALICE });
    const first = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice`, { token: ALICE });
    const page1 = first.json as unknown as { id: string }[];
    expect(page1.map((j) => j.id)).toEqual([a.id, b.id]);
    const link = String(first.headers["link"]);
    const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    expect(next).toBeDefined();
    const second = await h.call("GET", next ?? "", { token: ALICE });
    expect((second.json as unknown as { id: string }[]).map((j) => j.id)).toEqual([c.id]);
    expect(second.headers["link"]).toBeUndefined();
    const filtered = await h.call(
      "GET",
      `${h.emu.hubApiUrl}/api/jobs/alice?stage=SCHEDULING&label=pair-owner=owner-1`,
      {
        token: ALICE,
      },
    );
    expect((filtered.json as unknown as { id: string }[]).map((j) => j.id)).toEqual([a.id, c.id]);
    const relabel = await h.call("PUT", `${h.emu.hubApiUrl}/api/jobs/alice/${a.id}/labels`, {
      token: ALICE,
      body: { labels: { name: "renamed" } },
    });
    expect(relabel.json["labels"]).toEqual({ name: "renamed" });
  });

  it("runs, serves the exposed port only with a token of the namespace, bills per started minute + surcharge, cancels", async () => {
    const h = await harness();
    const { id } = await create(h);
    const url = `${h.emu.jobs.exposeUrl(id, 8000)}/v1/models`;
    expect((await h.call("GET", url, { token: ALICE })).status).toBe(503);
    h.emu.advance(20_000);
    expect(h.emu.jobs.get(id)?.stage).toBe("RUNNING");
    expect(h.emu.jobs.meter.billedMinutes("alice", id)).toBe(0);
    h.emu.advance(1);
    expect(h.emu.jobs.meter.billedMinutes("alice", id)).toBe(1);
    expect((await h.call("GET", url, { token: ALICE })).status).toBe(503); // model still loading
    h.emu.advance(90_000);
    expect((await h.call("GET", url)).status).toBe(401);
    expect((await h.call("GET", url, { token: "hf_unknown_token_1" })).status).toBe(401);
    expect((await h.call("GET", url, { token: BOB })).status).toBe(403);
    const served = await h.call("GET", url, { token: READER });
    expect(served.status).toBe(200);
    expect(served.text).toContain("Qwen/Qwen3-0.6B");
    h.emu.advance(4 * MIN); // 5.5 min running
    const canceled = await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice/${id}/cancel`, { token: ALICE });
    expect((canceled.json["status"] as unknown as { stage: string }).stage).toBe("CANCELED");
    h.emu.advance(60 * MIN);
    expect(h.emu.jobs.meter.billedMinutes("alice", id)).toBe(6);
    // l4x1 0.80 $/h + exposed port 0.01 $/h, per minute.
    expect(h.emu.jobs.meter.totalMicroUsd("alice", id)).toBe(Math.round((6 * 810_000) / 60));
    expect((await h.call("GET", url, { token: ALICE })).status).toBe(404);
  });

  it("enforces timeoutSeconds from the start of RUNNING: ERROR with a message, billing ends", async () => {
    const h = await harness();
    const { id } = await create(h, { timeoutSeconds: 300, expose: undefined });
    h.emu.advance(20_000 + 300_000 - 1);
    expect(h.emu.jobs.get(id)?.stage).toBe("RUNNING");
    h.emu.advance(1);
    expect(h.emu.jobs.get(id)?.stage).toBe("ERROR");
    expect(h.emu.jobs.get(id)?.message).toBe("Job timed out after 300 seconds");
    h.emu.advance(30 * MIN);
    expect(h.emu.jobs.meter.billedMinutes("alice", id)).toBe(5);
    expect(h.emu.jobs.meter.totalMicroUsd("alice", id)).toBe(Math.round((5 * 800_000) / 60));
  });

  it("streams logs as SSE: history, then ends once the job has ended", async () => {
    const h = await harness();
    const { id } = await create(h);
    h.emu.advance(20_000 + 90_000);
    await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice/${id}/cancel`, { token: ALICE });
    const logs = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice/${id}/logs`, { token: ALICE });
    expect(logs.headers["content-type"]).toBe("text/event-stream");
    const lines = logs.text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => (JSON.parse(l.slice(6)) as { data: string }).data);
    expect(lines[0]).toMatch(/^===== Job started at /);
    expect(lines).toContain("INFO:     Application startup complete.");
    expect(lines.at(-1)).toBe("Canceled by alice");
    const tail = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice/${id}/logs?tail=1`, { token: ALICE });
    expect(tail.text.match(/^data: /gm)).toHaveLength(1);
  });

  it("lists hardware with per-minute prices", async () => {
    const h = await harness();
    const hw = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/hardware`);
    const l4 = (hw.json as unknown as { name: string; unitCostMicroUSD: number; unitLabel: string }[]).find(
      (f) => f.name === "l4x1",
    );
    expect(l4).toMatchObject({ unitCostMicroUSD: 13_333, unitLabel: "minute" });
  });
});

describe("Jobs faults", () => {
  it("429 with retry-after and 5xx change nothing; a lost answer still creates the job", async () => {
    const h = await harness();
    const url = `${h.emu.hubApiUrl}/api/jobs/alice`;
    h.emu.jobs.faults.rateLimitNext(1, 7, { method: "POST" });
    const limited = await h.call("POST", url, { token: ALICE, body: jobBody() });
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("7");
    h.emu.jobs.faults.failNext(1, 503, { method: "POST" });
    expect((await h.call("POST", url, { token: ALICE, body: jobBody() })).status).toBe(503);
    expect(h.emu.jobs.list("alice")).toHaveLength(0);
    h.emu.jobs.faults.loseAnswers(1, { method: "POST" });
    await expect(h.call("POST", url, { token: ALICE, body: jobBody() })).rejects.toThrow();
    expect(h.emu.jobs.list("alice")).toHaveLength(1);
  });

  it("slow scheduling delays RUNNING; a job error ends the job with its message before the port answers", async () => {
    const h = await harness();
    h.emu.jobs.faults.slowScheduling(5 * MIN);
    h.emu.jobs.faults.failNextJob("CUDA out of memory while loading the model");
    const { id } = await create(h);
    h.emu.advance(20_000 + 5 * MIN - 1);
    expect(h.emu.jobs.get(id)?.stage).toBe("SCHEDULING");
    h.emu.advance(1 + 90_000);
    expect(h.emu.jobs.get(id)).toMatchObject({
      stage: "ERROR",
      message: "CUDA out of memory while loading the model",
    });
    expect(h.emu.jobs.meter.billedMinutes("alice", id)).toBe(2);
  });

  it("a slow cancel keeps the job RUNNING (and billing) until it takes effect; DELETED outside the API ends billing", async () => {
    const h = await harness();
    const { id } = await create(h);
    h.emu.advance(20_000);
    h.emu.jobs.faults.slowStateChanges(MIN);
    const reply = await h.call("POST", `${h.emu.hubApiUrl}/api/jobs/alice/${id}/cancel`, { token: ALICE });
    expect((reply.json["status"] as unknown as { stage: string }).stage).toBe("RUNNING");
    h.emu.advance(MIN);
    expect(h.emu.jobs.get(id)?.stage).toBe("CANCELED");
    const other = await create(h);
    h.emu.advance(20_000 + 30_000);
    expect(h.emu.jobs.markDeleted(other.id)).toBe(true);
    h.emu.advance(10 * MIN);
    expect(h.emu.jobs.get(other.id)?.stage).toBe("DELETED");
    expect(h.emu.jobs.meter.billedMinutes("alice", other.id)).toBe(1);
  });

  it("holds a create: carried out before the answer, on release, or dropped unapplied", async () => {
    const h = await harness();
    const url = `${h.emu.hubApiUrl}/api/jobs/alice`;
    const faults = h.emu.jobs.faults;
    // before-answer: the job exists while the answer is held.
    faults.holdNext(1, { method: "POST" }, "before-answer");
    const early = h.call("POST", url, { token: ALICE, body: jobBody() });
    await faults.whenHeld();
    expect(h.emu.jobs.list("alice")).toHaveLength(1);
    expect(faults.releaseHeld("apply")).toBe(1);
    expect((await early).status).toBe(200);
    // on-release: nothing until released; "apply" creates it and answers.
    faults.holdNext(1, { method: "POST" }, "on-release");
    const late = h.call("POST", url, { token: ALICE, body: jobBody() });
    await faults.whenHeld();
    expect(h.emu.jobs.list("alice")).toHaveLength(1);
    faults.releaseHeld("apply");
    expect((await late).status).toBe(200);
    expect(h.emu.jobs.list("alice")).toHaveLength(2);
    // on-release, dropped: the connection is cut and nothing is created.
    faults.holdNext(1, { method: "POST" }, "on-release");
    const dropped = h.call("POST", url, { token: ALICE, body: jobBody() });
    await faults.whenHeld();
    faults.releaseHeld("drop");
    await expect(dropped).rejects.toThrow();
    expect(h.emu.jobs.list("alice")).toHaveLength(2);
    expect(faults.arrived({ method: "POST" })).toBe(3);
  });

  it("a partial listing leaves a live job out of the next listings (as complete) while its own GET finds it", async () => {
    const h = await harness(); // pageSize 2
    const a = await create(h);
    const b = await create(h);
    h.emu.jobs.faults.hideJobFromListing(a.id, 2);
    const ids = async () => {
      const reply = await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice`, { token: ALICE });
      return { ids: reply.json as unknown as { id: string }[], link: reply.headers["link"] };
    };
    for (let i = 0; i < 2; i++) {
      const page = await ids();
      expect(page.ids.map((j) => j.id)).toEqual([b.id]);
      expect(page.link).toBeUndefined(); // answers as a whole listing
    }
    expect((await h.call("GET", `${h.emu.hubApiUrl}/api/jobs/alice/${a.id}`, { token: ALICE })).status).toBe(
      200,
    );
    expect((await ids()).ids.map((j) => j.id)).toEqual([a.id, b.id]);
  });

  it("records every Jobs API request with its virtual and real arrival time and the fault applied", async () => {
    const h = await harness();
    h.emu.jobs.faults.rateLimitNext(1, 3, { method: "GET" });
    const url = `${h.emu.hubApiUrl}/api/jobs/alice`;
    expect((await h.call("GET", url, { token: ALICE })).status).toBe(429);
    h.emu.advance(5_000);
    expect((await h.call("GET", url, { token: ALICE })).status).toBe(200);
    const seen = h.emu.jobs.requests();
    expect(seen.map((r) => [r.method, r.path, r.fault])).toEqual([
      ["GET", "/api/jobs/alice", "rate-limit"],
      ["GET", "/api/jobs/alice", "none"],
    ]);
    expect(seen[1]!.atMs - seen[0]!.atMs).toBe(5_000);
    expect(seen[1]!.atRealMs).toBeGreaterThanOrEqual(seen[0]!.atRealMs);
  });
});
