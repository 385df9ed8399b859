// `--rent auto` through a real node with no local engine and the Jobs emulator, whose first Job goes
// to ERROR as it comes up (the emulator's fault) while the batch's lines wait for it: they do not
// wait until the deadline — the Jobs node runs a new job for the next line that asks (the hosting
// contract, the ledger's reservation again), the lines run on it, and the rental is stopped for
// good when the batch is done. (A node that reports its failure and runs no new job is stopped at
// once, its lines sent on: rental-failure.test.ts.)
import OpenAI, { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { advanceUntil, createWorld, type CreateWorld } from "../rented/create-harness.js";
import { chatLines } from "../support/batch-submit.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const MODEL = "Qwen/Qwen3-0.6B";
const NS = "alice";
const worlds = keyringWorlds<CreateWorld>();

type Batch = OpenAI.Batches.Batch & {
  pair: { rent: { state: string; stop_reason: string | null }; events: { state: string }[] };
};

/** A world whose next `failures` Jobs go to ERROR, and a `--rent auto` batch of `lines` lines on it. */
async function failingWorld(failures: number, lines: number) {
  const w = worlds.add(await createWorld(worlds.ca));
  await w.start();
  for (let i = 0; i < failures; i++) w.hf.jobs.faults.failNextJob("CUDA out of memory");
  const openai = new OpenAI({ baseURL: `${w.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const file = await openai.files.create({
    file: await toFile(Buffer.from(chatLines(MODEL, lines, (i) => `e${i}`, 1_000)), "fail.jsonl"),
    purpose: "batch",
  });
  const { id, created_at } = await openai.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
    metadata: { pair_rent: "auto", pair_deadline: "30m", pair_credential: w.credential },
  });
  const batch = async () => (await openai.batches.retrieve(id)) as Batch;
  return { w, batch, created_at };
}

describe("--rent auto when the rented Job fails as it comes up", () => {
  it("runs the waiting lines on the job the node runs next, long before the deadline", async () => {
    const { w, batch, created_at } = await failingWorld(1, 50);
    await advanceUntil(w, async () => (await batch()).pair.rent.state === "stopped");
    const done = await batch();
    expect(done.request_counts).toEqual({ total: 50, completed: 50, failed: 0 });
    expect((done.completed_at ?? Infinity) - created_at).toBeLessThan(10 * 60);
    expect(done.pair.rent.stop_reason).toBe("the batch finished");
    expect(w.hf.jobs.list(NS).map((j) => j.stage)).toEqual(["ERROR", "CANCELED"]);
  }, 120_000);

  it("stops renting after two jobs in a row fail: two jobs billed, the lines end long before the deadline", async () => {
    const { w, batch, created_at } = await failingWorld(5, 20);
    await advanceUntil(w, async () => (await batch()).status === "completed");
    const done = await batch();
    // No node serves the model without the rented one: every line ends in the error file.
    expect(done.request_counts).toEqual({ total: 20, completed: 0, failed: 20 });
    expect((done.completed_at ?? Infinity) - created_at).toBeLessThan(15 * 60);
    expect(w.hf.jobs.list(NS).map((j) => j.stage)).toEqual(["ERROR", "ERROR"]);
  }, 120_000);
});
