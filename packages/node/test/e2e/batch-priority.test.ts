// A batch never starves a user's chat. The engine has 2 slots; every batch line takes about 20 s
// (2,000 tokens 10 ms apart) and the batch would run 8 at once. A user's chat (2 tokens) is
// answered while the batch's first lines are still running, and the batch held only one slot —
// with first-come-first-served slots, the chat would wait behind the batch's queued lines.
import OpenAI, { toFile } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/eventually.js";
import { startCluster, type Cluster } from "./node-harness.js";

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe("batch lines and users' requests", () => {
  it("answers a chat while batch lines hold the engine, the batch using one slot of two", async () => {
    c = await startCluster(
      [
        {
          name: "e1",
          api: "openai",
          models: [{ name: "m1", maxTokens: 2_000 }],
          maxConcurrent: 2,
          tokenDelayMs: 10,
        },
      ],
      { overrides: { batchLines: 8 } },
    );
    const engine = c.engines.get("e1")!;
    const openai = new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        custom_id: `long-${i}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "m1", messages: [{ role: "user", content: "write a long story" }] },
      }),
    );
    const file = await openai.files.create({
      file: await toFile(Buffer.from(lines.join("\n")), "long.jsonl"),
      purpose: "batch",
    });
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await until(() => engine.stats().inFlight >= 1);

    const chats = [];
    for (let i = 0; i < 3; i++) {
      const reply = await openai.chat.completions.create({
        model: "m1",
        max_tokens: 2,
        messages: [{ role: "user", content: "hi" }],
      });
      chats.push(reply.choices[0]?.finish_reason);
    }
    expect(chats).toEqual(["length", "length", "length"]);
    // The chats were answered while the batch's first line still ran: nothing of it has ended.
    const during = await openai.batches.retrieve(batch.id);
    expect(during.request_counts).toMatchObject({ completed: 0, failed: 0 });
    // The batch never held more than one of the engine's two slots (the chat had the other).
    expect(engine.stats().maxInFlightSeen).toBe(2);
    expect(engine.stats().inFlight).toBe(1);
    // The other lines wait in the node's queue, behind any user who comes.
    expect(c.node.history.running().filter((w) => w.requester === `batch:${batch.id}`).length).toBe(8);

    const cancelled = await openai.batches.cancel(batch.id);
    expect(["cancelling", "cancelled"]).toContain(cancelled.status);
    await until(async () => (await openai.batches.retrieve(batch.id)).status === "cancelled", 10_000);
  });
});
