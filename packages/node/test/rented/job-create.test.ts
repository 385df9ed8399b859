// `pair rented create NAME --provider huggingface-job` against the Hugging Face emulator (Jobs over
// HTTPS), with the real keyring and virtual time: the CLI creates the node and follows it
// scheduling → running → "model … is in the cluster inventory"; the job has the window as its timeout,
// a token-protected exposed port and the secret as a Job secret; the node is persisted with references
// only; it is `prefer` during its window and `never` after it (an explicit policy still wins, resume
// opens a new window). No authorization → nothing is created; a bad window or flavor is refused with
// the flag or the valid flavors named; a lost create answer is reconciled, never sent again.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HfToken, HttpsJobsTransport } from "@pair/huggingface";
import { liveRecords, openObligations } from "@pair/provision";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../cli/cli-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { createWorld, MIN, TOKEN, type CreateWorld } from "./create-harness.js";
import { chatReply } from "../support/chat.js";

const MODEL = "Qwen/Qwen3-0.6B";
const ENV = { PAIR_RENTED_POLL_MS: "20" };
const worlds = keyringWorlds<CreateWorld>();

async function world(): Promise<CreateWorld> {
  const w = worlds.add(await createWorld(worlds.ca));
  await w.start();
  return w;
}

function cli(w: CreateWorld, args: readonly string[]) {
  return runCli([...args, "--config", w.configFile], { env: ENV });
}

/** Move virtual time in the background (5 s per 20 ms) until `done` settles. */
async function whileAdvancing<T>(w: CreateWorld, done: Promise<T>): Promise<T> {
  let finished = false;
  void done.finally(() => (finished = true));
  for (let i = 0; i < 1_000 && !finished; i += 1) {
    w.hf.advance(5_000);
    await new Promise((r) => setTimeout(r, 20));
  }
  return done;
}

/** Move virtual time in steps, with a pass of the job nodes after each. */
async function advance(w: CreateWorld, ms: number, stepMs = 60_000): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    w.hf.advance(Math.min(stepMs, ms - t));
    await w.node.jobs.tick();
  }
}

async function rentedRow(w: CreateWorld, name: string): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name) ?? {};
}

function post(w: CreateWorld, body: unknown) {
  return request(`${w.node.url}/pair/v1/rented/create`, {
    method: "POST",
    headers: { authorization: `Bearer ${w.node.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (res) => ({
    status: res.statusCode,
    json: (await res.body.json()) as {
      state?: string;
      error?: { code: string; message: string; param?: string };
    },
  }));
}

const chat = (w: CreateWorld) => chatReply(w.node.url, { model: MODEL, maxTokens: 3 });

const JOB_BODY = (w: CreateWorld, name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: "huggingface-job",
  credential: w.credential,
  repo: MODEL,
  flavor: "l4x1",
  window_min: 60,
  budget: { unlimited: true },
  ...extra,
});

describe("pair rented create --provider huggingface-job", () => {
  it("runs the job through the CLI, shows scheduling → running, serves; prefer in its window, never after it", async () => {
    const w = await world();
    const run = startCli(
      [
        "rented",
        "create",
        "batch",
        "--provider",
        "huggingface-job",
        "--repo",
        MODEL,
        "--flavor",
        "l4x1",
        "--window",
        "2h",
        "--usd-per-day",
        "5",
        "--idle-pause-min",
        "600",
        "--secret",
        `HF_TOKEN=${w.credential}`,
        "--credential",
        w.credential,
        "--config",
        w.configFile,
      ],
      { env: ENV },
    );
    const result = await whileAdvancing(w, run.done);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toBe("creating batch: Qwen/Qwen3-0.6B as a Hugging Face Job on l4x1 for 2h");
    expect(lines.slice(1).map((l) => l.split(" ")[0])).toEqual(["scheduling", "running"]);
    expect(lines.at(-1)).toMatch(
      /^running \(\d+:\d\d, \$\d+\.\d\d\) — model Qwen\/Qwen3-0\.6B is in the cluster inventory$/,
    );

    // HF's side: one job, the window as its hard timeout, an exposed port, the token as a Job secret.
    const jobs = w.hf.jobs.list("alice");
    expect(jobs).toHaveLength(1);
    const job = jobs[0];
    expect(job).toMatchObject({ stage: "RUNNING", flavor: "l4x1", timeoutSeconds: 7_200 });
    expect(job?.exposeUrls).toHaveLength(1);
    expect(job?.secretNames).toEqual(["HF_TOKEN"]);
    expect(JSON.stringify(job?.labels)).not.toContain(TOKEN);
    // The node persists as a managed job node with credential references only.
    const file = readFileSync(join(w.dataDir, "rented-nodes.json"), "utf8");
    expect(file).toContain('"provider": "huggingface-job"');
    expect(file).toContain('"window_min": 120');
    expect(file).toContain(w.credential);
    expect(file).not.toContain(TOKEN);
    const row = await rentedRow(w, "batch");
    expect(row).toMatchObject({
      state: "running",
      provider: "huggingface-job",
      policy: "prefer",
      eligible: true,
      budget: { usd_per_day: 5, usd_per_month: null },
      managed: { managed: true, open_obligations: 1 },
    });
    // l4x1 as listed per minute ($0.013333) × 60 + the exposed port's $0.01/h.
    expect((row["managed"] as { usd_per_hour: number }).usd_per_hour).toBeCloseTo(0.81, 4);
    expect(JSON.stringify(row)).not.toContain("https://");
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect((await chat(w)).status).toBe(200);

    // The window's end: PAIR cancels the job; the node no longer attracts requests. Passes every 5 s
    // near the end, as HF's own timeout follows it by the scheduling time (20 s): PAIR's cancel is first.
    const endsAt = Date.parse(w.node.jobs.node("batch")?.view().window_ends_at ?? "");
    expect(endsAt - w.hf.nowMs()).toBeGreaterThan(100 * MIN);
    await advance(w, endsAt - w.hf.nowMs() - 2 * MIN);
    await advance(w, 4 * MIN, 5_000);
    expect(w.hf.jobs.get(job?.id ?? "")?.stage).toBe("CANCELED");
    expect(w.log.join("\n")).toContain("its window ended");
    const after = await rentedRow(w, "batch");
    expect(after).toMatchObject({ policy: "never", eligible: false, managed: { open_obligations: 0 } });
    expect(String(after["reason"])).toContain("window ended");
    const nodes = JSON.parse((await cli(w, ["nodes", "--json"])).stdout) as Record<string, unknown>[];
    expect(nodes.find((n) => n["name"] === "batch")).toMatchObject({ policy: "never", eligible: false });
    const refused = await chat(w);
    expect(refused.status).not.toBe(200);
    expect(refused.text).toContain("rented_node_ineligible");
    expect(w.hf.jobs.list("alice")).toHaveLength(1);

    // An explicit policy wins; resume opens a new window under the job node's own use.
    expect((await cli(w, ["rented", "policy", "batch", "overflow"])).code).toBe(0);
    expect(await rentedRow(w, "batch")).toMatchObject({ policy: "overflow" });
    expect((await cli(w, ["rented", "resume", "batch"])).code).toBe(0);
    expect(await rentedRow(w, "batch")).toMatchObject({ policy: "overflow" });
    expect(w.node.jobs.node("batch")?.routingUse()).toEqual({ use: "prefer" });
  });

  it("a job that ends in ERROR prints Hugging Face's message and exits 1 (--json: the final view)", async () => {
    const w = await world();
    w.hf.jobs.faults.failNextJob("CUDA out of memory while loading the model");
    const run = startCli(
      [
        "rented",
        "create",
        "oom",
        "--provider",
        "huggingface-job",
        "--repo",
        MODEL,
        "--flavor",
        "l4x1",
        "--window",
        "45m",
        "--unlimited",
        "--credential",
        w.credential,
        "--json",
        "--config",
        w.configFile,
      ],
      { env: ENV },
    );
    const result = await whileAdvancing(w, run.done);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("rented node oom failed: CUDA out of memory while loading the model");
    const final = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(final).toMatchObject({ name: "oom", provider_state: "failed" });
    expect(w.hf.jobs.list("alice")).toHaveLength(1);
    expect(w.hf.jobs.list("alice")[0]?.timeoutSeconds).toBe(45 * 60);
  });

  it("refuses a create the ledger does not authorize: no job, no node", async () => {
    const w = await world();
    // One billed minute at $0.81/h is ~$0.0135: a $0.001 daily cap cannot authorize it.
    const result = await cli(w, [
      "rented",
      "create",
      "broke",
      "--provider",
      "huggingface-job",
      "--repo",
      MODEL,
      "--flavor",
      "l4x1",
      "--window",
      "30m",
      "--usd-per-day",
      "0.001",
      "--credential",
      w.credential,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("budget_exceeded");
    expect(w.hf.jobs.list("alice")).toEqual([]);
    expect(await rentedRow(w, "broke")).toEqual({});
    expect(w.node.jobs.has("broke")).toBe(false);
    const file = join(w.dataDir, "rented-nodes.json");
    expect(existsSync(file) ? readFileSync(file, "utf8") : "").not.toContain("broke");
    const direct = await post(w, JOB_BODY(w, "broke", { budget: { usd_per_day: 0.001 } }));
    expect(direct.status).toBe(429);
    expect(direct.json.error?.code).toBe("budget_exceeded");
    expect(w.hf.jobs.list("alice")).toEqual([]);
  });

  it("refuses a bad --window (naming the flag) and an unknown --flavor (naming the flavors); --help documents it", async () => {
    const w = await world();
    const base = ["rented", "create", "x1", "--provider", "huggingface-job", "--repo", MODEL];
    for (const window of ["25h", "0m", "2 hours", "90s"]) {
      const bad = await cli(w, [
        ...base,
        "--flavor",
        "l4x1",
        "--window",
        window,
        "--credential",
        w.credential,
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--window");
      expect(bad.stderr).toContain("24h");
    }
    const missing = await cli(w, [...base, "--flavor", "l4x1"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("needs --window");
    const flavor = await cli(w, [
      ...base,
      "--flavor",
      "h900x8",
      "--window",
      "1h",
      "--usd-per-day",
      "1",
      "--credential",
      w.credential,
    ]);
    expect(flavor.code).toBe(1);
    expect(flavor.stderr).toContain('flavor: "h900x8" is not a Hugging Face Jobs flavor');
    expect(flavor.stderr).toContain("l4x1 ($0.80/h)");
    const direct = await post(w, JOB_BODY(w, "x1", { window_min: 2_000 }));
    expect(direct.status).toBe(400);
    expect(direct.json.error?.param).toBe("window_min");
    expect(w.hf.jobs.list("alice")).toEqual([]);
    expect(await rentedRow(w, "x1")).toEqual({});
    const help = await cli(w, ["rented", "create", "--help"]);
    expect(help.stdout + help.stderr).toContain(
      "--provider huggingface-job --repo ID --flavor FLAVOR --window 2h",
    );
  });

  it("a lost create answer is Uncertain, reconciled by its request id, never sent again; a restart manages it again", async () => {
    const w = await world();
    w.hf.jobs.faults.loseAnswers(1, { method: "POST", path: /^\/api\/jobs\/alice$/ });
    const created = await post(w, JOB_BODY(w, "lost-job", { lifecycle: { pause_on_sponsor_exit: false } }));
    expect(created.status).toBe(202);
    expect(created.json.state).toBe("starting");
    // A second create would consume this failure; PAIR must not send one.
    w.hf.jobs.faults.failNext(1, 400, { method: "POST", path: /^\/api\/jobs\/alice$/ });
    await advance(w, 3 * MIN, 10_000);
    const node = w.node.jobs.node("lost-job");
    const [live] = liveRecords(node!.controller.state);
    expect(live?.intent?.answer).toBe("lost");
    expect(live?.key?.incarnation).toBe(w.hf.jobs.list("alice")[0]?.id);
    expect(openObligations(node!.controller.state)).toHaveLength(1);
    expect(w.hf.jobs.list("alice")).toHaveLength(1);
    expect((await rentedRow(w, "lost-job"))["state"]).toBe("running");
    expect((await chat(w)).status).toBe(200);
    // The armed 400 is still there (PAIR sent no second create): this POST gets it.
    const jobsApi = new HttpsJobsTransport({
      token: new HfToken(TOKEN),
      hubApi: w.hf.hubApiUrl,
      extraCaPem: worlds.ca.certPem,
    });
    await expect(
      jobsApi.createJob("alice", {
        dockerImage: "busybox",
        command: ["true"],
        environment: {},
        secrets: {},
        flavor: "cpu-basic",
        timeoutSeconds: 60,
        labels: {},
        exposePorts: [],
      }),
    ).rejects.toThrow();
    await jobsApi.close();

    // Restart on the same data dir: the node comes back from rented-nodes.json, its job from SQLite.
    await w.node.close(200);
    await w.start();
    expect(w.node.jobs.has("lost-job")).toBe(true);
    await w.node.jobs.tick();
    expect(w.hf.jobs.list("alice")).toHaveLength(1);
    expect((await rentedRow(w, "lost-job"))["state"]).toBe("running");
    expect((await rentedRow(w, "lost-job"))["created"]).not.toBeNull();
  });
});
