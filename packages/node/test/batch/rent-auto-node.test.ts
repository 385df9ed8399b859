// `--rent auto` end to end through a real sponsor node with no local engine, the Hugging Face Jobs
// emulator (virtual time), the real ledger and hosting contract: a batch created with the official
// client (`metadata.pair_rent: "auto"`) whose deadline the cluster cannot meet rents a Job through
// `pair rented create`'s path (the window as its hard timeout, the ledger's price and the batch's cap),
// its lines wait while the Job starts and then all run on it, the batch completes, and the rental is
// stopped for good: the Job is CANCELED (the evidence), the ledger holds what the meter billed, nothing
// bills after — no request runs a job on the node again, nor after a restart. `pair batch plan` then
// prices that GPU at the rate the rental measured. Also the test of stages/batch-rental-wiring.ts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/cli-harness.js";
import { chatLines } from "../support/batch-submit.js";
import { chat } from "../rented/job-harness.js";
import { allowedLedgerMicroUsd } from "../rented/meter-bound.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { advanceUntil, createWorld, type CreateWorld } from "../rented/create-harness.js";

const MODEL = "Qwen/Qwen3-0.6B";
const NS = "alice";
const LINES = 200;
const worlds = keyringWorlds<CreateWorld>();

/** 200 lines of 1,000 output tokens: 1,250 s for a cluster at the assumed rate, were one serving it. */
function input(): string {
  return chatLines(MODEL, LINES, (i) => `n${i}`, 1_000);
}

interface Rent {
  state: string;
  node: string;
  flavor: string;
  gpu: string;
  usd_per_hour: number;
  stop_reason: string | null;
  spent_usd: number;
  measured_tokens_per_s: number | null;
}
type Batch = OpenAI.Batches.Batch & { pair: { rent: Rent; events: { state: string; reason: string }[] } };

async function admin(w: CreateWorld, path: string): Promise<unknown> {
  const res = await request(`${w.node.url}${path}`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  return res.body.json();
}

/** A node's row of `GET /pair/v1/rented`, as far as this test reads it. */
interface RentedRow extends Record<string, unknown> {
  managed: { usd_per_hour: number; spend_usd: { total: number } };
  created: { started_at: string } | null;
}

async function rentedRow(w: CreateWorld, name: string): Promise<RentedRow> {
  const rows = (await admin(w, "/pair/v1/rented")) as RentedRow[];
  const row = rows.find((r) => r["name"] === name);
  if (row === undefined) throw new Error(`no rented node ${name}`);
  return row;
}

describe("--rent auto through a real node and the Jobs emulator", () => {
  it("rents a Job for a deadline, runs every line on it once it serves, stops it for good", async () => {
    const w = worlds.add(await createWorld(worlds.ca));
    await w.start();
    const openai = new OpenAI({ baseURL: `${w.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(input()), "night.jsonl"),
      purpose: "batch",
    });
    const created = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: {
        pair_rent: "auto",
        pair_deadline: "15m",
        pair_budget_usd: "2",
        pair_credential: w.credential,
      },
    });
    const id = created.id;
    const batch = async () => (await openai.batches.retrieve(id)) as Batch;
    expect((await batch()).pair.rent.state).toMatch(/^(watching|renting)$/);

    await advanceUntil(w, async () => (await batch()).pair.rent.state === "stopped");
    const done = await batch();
    // Every line ran, on the rented Job: none failed while it started (they waited for it).
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    expect(done.error_file_id).toBeNull();
    const output = (await (await openai.files.content(done.output_file_id!)).text()).trim().split("\n");
    expect(new Set(output.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).size).toBe(LINES);
    const rent = done.pair.rent;
    // The lines waited for the Job's warm-up without a log line each: the batch logs for them all.
    expect(w.log.filter((l) => l.startsWith("request "))).toEqual([]);
    expect(w.log.filter((l) => l.startsWith(`batch ${id}: started`))).toHaveLength(1);
    const rows = w.node.history.history({ limit: 1_000 }).filter((h) => h.requester === `batch:${id}`);
    expect(rows.filter((h) => h.status === "completed")).toHaveLength(LINES);
    expect(rows.every((h) => h.status !== "completed" || h.servingNode === rent.node)).toBe(true);

    // Rented through the contract's create (wiring: rent): one Job, the window to the deadline as its
    // hard timeout, the plan's flavor; the ledger holds the node to the batch's budget.
    const jobs = w.hf.jobs.list(NS);
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job).toMatchObject({ flavor: rent.flavor, timeoutSeconds: 15 * 60, labels: { name: rent.node } });
    const row = await rentedRow(w, rent.node);
    expect(row).toMatchObject({ provider: "huggingface-job", budget: { usd_per_day: 2 } });
    // Planned with no node of the cluster for the model (wiring: serves), so never stopped early.
    const events = done.pair.events.map((e) => e.state);
    expect(events).toEqual(expect.arrayContaining(["submitted", "rent", "completed", "rental stopped"]));
    expect(events.at(-1)).toBe("rental stop confirmed");
    expect(done.pair.events.find((e) => e.state === "rent")?.reason).toContain(
      `no node of the cluster serves ${MODEL}`,
    );
    expect(rent.stop_reason).toBe("the batch finished");
    // The events are the rented nodes' state history (wiring: record).
    const history = (await admin(w, `/pair/v1/rented/history?name=${id}`)) as { state: string }[];
    expect(history.map((h) => h.state)).toEqual(events);
    // Measured from history (wiring: history): the Job's rate per line × 8 lines at once.
    expect(rent.measured_tokens_per_s).toBeGreaterThan(0);

    // Stopped with evidence: the Job is cancelled, the obligation closed, the node never routed to.
    expect(w.hf.jobs.get(job.id)?.stage).toBe("CANCELED");
    expect(row).toMatchObject({
      state: "paused",
      policy: "never",
      eligible: false,
      managed: { open_obligations: 0 },
    });
    // What the meter billed (started RUNNING minutes) is what the ledger recorded, give or take the
    // one minute of scheduling the ledger counts from the create (docs/ledger.md); the batch says so too.
    const price = row.managed.usd_per_hour;
    const ledgerUsd = row.managed.spend_usd.total;
    const meterMinutes = w.hf.jobs.meter.billedMinutes(NS, job.id);
    expect(meterMinutes).toBeGreaterThan(0);
    expect(allowedLedgerMicroUsd([meterMinutes], Math.round(price * 1e6))).toContain(
      Math.round(ledgerUsd * 1e6),
    );
    expect(w.hf.jobs.meter.totalMicroUsd(NS, job.id) / 1e6).toBeCloseTo((meterMinutes * price) / 60, 4);
    expect(rent.spent_usd).toBe(ledgerUsd);
    expect(rent.usd_per_hour).toBe(price);

    // Nothing bills after: a request for the model runs no job, nor after a restart within the
    // batch's window (the pause alone is in memory: the node's `never` is kept in rented-nodes.json).
    const meter = w.hf.jobs.meter.totalMicroUsd(NS, job.id);
    // Gone from routing, as a node no one serves the model on: not lingering as ineligible.
    const gone = await chat(w);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain("model_not_found");
    await w.node.close(200);
    await w.start();
    expect(Date.parse(row.created?.started_at ?? "") + 15 * 60_000).toBeGreaterThan(w.hf.nowMs());
    expect(await rentedRow(w, rent.node)).toMatchObject({ policy: "never", eligible: false });
    expect((await chat(w)).status).toBe(404);
    w.hf.advance(30 * 60_000);
    expect(w.hf.jobs.list(NS)).toHaveLength(1);
    expect(w.hf.jobs.meter.totalMicroUsd(NS, job.id)).toBe(meter);
    expect((await rentedRow(w, rent.node)).managed.spend_usd.total).toBe(ledgerUsd);

    // `pair batch plan` prices the rented GPU at what this batch measured (history → "(measured)").
    const path = join(w.dataDir, "..", "night.jsonl");
    writeFileSync(path, input());
    const plan = [
      "batch",
      "plan",
      path,
      "--deadline",
      "1m",
      "--credential",
      w.credential,
      "--config",
      w.configFile,
    ];
    const json = await runCli([...plan, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const planned = JSON.parse(json.stdout) as {
      models: { assumed: boolean; measured: Record<string, number> }[];
      rent: { options: Record<string, unknown>[] };
    };
    // The stopped rented node is no part of "the cluster alone": its rate is the GPU's, not the cluster's.
    expect(planned.models[0]).toMatchObject({ assumed: true, measured: {} });
    const options = planned.rent.options;
    expect(options.find((o) => o["flavor"] === rent.flavor)).toMatchObject({
      tokensPerS: rent.measured_tokens_per_s,
      measured: true,
    });
    expect(options.filter((o) => o["measured"] === true)).toHaveLength(1);
    const table = await runCli(plan);
    expect(table.stdout).toMatch(
      new RegExp(
        `${rent.flavor} +${rent.gpu} +\\S+ +${Math.round(rent.measured_tokens_per_s!)} \\(measured\\)`,
      ),
    );
    expect(table.stdout).toMatch(/t4-small +T4 +\S+ +250 \(assumed\)/);
  }, 120_000);
});
