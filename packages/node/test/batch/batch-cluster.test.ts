// A 10,000-line batch over two paired nodes and a rented Job: the sponsor (the batch's node, with an
// engine emulator and the Hugging Face Jobs emulator) and a peer with its own engine emulator, both
// at 0 ms a token; `--rent auto` rents a Job for a deadline the cluster alone misses at the assumed
// rate. Virtual time (the Jobs emulator's clock: the deadline, the window, billing) moves only when
// the test moves it, so the lines the cluster runs meanwhile take 0 virtual ms and no measured rate
// stops the rental early. Every custom_id once, each node's share > 0, the Job stopped with evidence
// when the batch is done, billed minutes = the ledger.
import OpenAI, { toFile } from "openai";
import { startEngineEmulator } from "@pair/emulators";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { fastNodes } from "../cluster/node-pair-harness.js";
import { allowedLedgerMicroUsd } from "../rented/meter-bound.js";
import { advanceUntil, createWorld, type CreateWorld } from "../rented/create-harness.js";
import { chatLines } from "../support/batch-submit.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const MODEL = "Qwen/Qwen3-0.6B";
const NS = "alice";
const LINES = 10_000;
const worlds = keyringWorlds<CreateWorld>();
const defer = cleanupAfterEach();
const node = fastNodes(defer);

/**
 * 10,000 lines of 50 output tokens: 3,125 s for the cluster at the assumed 160 tokens/s, past a
 * 30 min deadline; with a T4 (250 tokens/s after 10 min of start-up) about 1,585 s, in time.
 */
function input(): string {
  return chatLines(MODEL, LINES, (i) => `c${i}`, 50);
}

type Batch = OpenAI.Batches.Batch & {
  pair: {
    by_node: Record<string, number>;
    rent: { state: string; node: string; stop_reason: string | null; spent_usd: number };
    events: { state: string; reason: string }[];
  };
};

async function admin(w: CreateWorld, path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${w.node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${w.node.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.body.json();
}

async function customIds(openai: OpenAI, fileId: string | null | undefined): Promise<string[]> {
  if (fileId === null || fileId === undefined) return [];
  const text = (await (await openai.files.content(fileId)).text()).trim();
  return text === "" ? [] : text.split("\n").map((l) => (JSON.parse(l) as { custom_id: string }).custom_id);
}

describe("a 10,000-line batch over two nodes and a rented Job", () => {
  it("runs every line once on all three, and stops the Job with evidence when done", async () => {
    const engine = await startEngineEmulator({
      api: "openai",
      name: "sponsor-vllm",
      models: [MODEL],
      tokenDelayMs: 0,
    });
    defer(() => engine.close());
    const w = worlds.add(await createWorld(worlds.ca, { engineUrl: `${engine.url}/v1` }));
    await w.start();
    const peer = await node("peer", { models: [MODEL], engineApi: "openai" });
    const pin = (await (
      await fetch(`${peer.node.url}/pair/v1/pin`, {
        method: "POST",
        headers: { authorization: `Bearer ${peer.node.adminToken}`, "content-type": "application/json" },
        body: "{}",
      })
    ).json()) as { pin: string };
    await admin(w, "/pair/v1/join", { address: peer.clusterAddress, pin: pin.pin });
    await until(async () => {
      const rows = (await admin(w, "/pair/v1/models")) as { model: string; nodes: string[] }[];
      return rows.some((r) => r.model === MODEL && r.nodes.includes("peer"));
    });

    const openai = new OpenAI({ baseURL: `${w.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(input()), "big.jsonl"),
      purpose: "batch",
    });
    const { id } = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: {
        pair_rent: "auto",
        pair_deadline: "30m",
        pair_budget_usd: "2",
        pair_credential: w.credential,
      },
    });
    const batch = async () => (await openai.batches.retrieve(id)) as Batch;

    // The cluster runs lines while the Job is scheduled; then virtual time brings the Job up.
    await until(async () => (await batch()).request_counts!.completed >= 1_000, 60_000, 500);
    expect((await batch()).pair.rent.state).toBe("renting");
    await advanceUntil(w, async () => (await batch()).pair.rent.state === "serving");
    expect((await batch()).pair.rent.state).toBe("serving");
    await until(async () => (await batch()).status === "completed", 180_000, 1_000);
    await advanceUntil(w, async () => (await batch()).pair.rent.state === "stopped");
    const done = await batch();

    // Every custom_id exactly once over the output and error files; none failed.
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    const ids = [
      ...(await customIds(openai, done.output_file_id)),
      ...(await customIds(openai, done.error_file_id)),
    ];
    expect(ids).toHaveLength(LINES);
    expect(new Set(ids).size).toBe(LINES);

    // Each node's share: the sponsor's engine, the peer, the rented Job.
    const rent = done.pair.rent;
    expect(Object.keys(done.pair.by_node).sort()).toEqual([rent.node, "peer", "sponsor"].sort());
    for (const n of Object.values(done.pair.by_node)) expect(n).toBeGreaterThan(0);
    expect(Object.values(done.pair.by_node).reduce((a, b) => a + b, 0)).toBe(LINES);

    // The log has the batch's start, progress and end, not a line per request line, on either node.
    expect(w.log.filter((l) => l.startsWith("request "))).toEqual([]);
    expect(w.log.filter((l) => l.startsWith(`batch ${id}: `)).length).toBeLessThan(20);
    expect(peer.log.filter((l) => l.startsWith("request "))).toEqual([]);

    // Started, then stopped when done, with the provider's evidence; billed minutes = the ledger.
    expect(rent.state).toBe("stopped");
    // Stopped when the batch ended, or before: once the lines left fit the cluster's measured rate.
    expect(rent.stop_reason).toMatch(/^(the batch finished|the cluster alone now finishes in time)/);
    expect(done.pair.events.map((e) => e.state)).toEqual(
      expect.arrayContaining([
        "rent",
        "rental serving",
        "completed",
        "rental stopped",
        "rental stop confirmed",
      ]),
    );
    const [job] = w.hf.jobs.list(NS);
    expect(w.hf.jobs.list(NS)).toHaveLength(1);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("CANCELED");
    const rows = (await admin(w, "/pair/v1/rented")) as {
      name: string;
      managed: { usd_per_hour: number; open_obligations: number; spend_usd: { total: number } };
    }[];
    const row = rows.find((r) => r.name === rent.node)!;
    expect(row.managed.open_obligations).toBe(0);
    const meterMinutes = w.hf.jobs.meter.billedMinutes(NS, job!.id);
    expect(meterMinutes).toBeGreaterThan(0);
    expect(allowedLedgerMicroUsd([meterMinutes], Math.round(row.managed.usd_per_hour * 1e6))).toContain(
      Math.round(row.managed.spend_usd.total * 1e6),
    );
    expect(rent.spent_usd).toBe(row.managed.spend_usd.total);
  }, 300_000);
});
