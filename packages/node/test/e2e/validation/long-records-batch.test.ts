// Seed 001's second reason to rent: a context too long for the local GPU. A batch of 100 records,
// 3 of them too long for the local engines' 2,048-token window, submitted on the sponsor A (its own
// Ollama, a paired peer B with another, and the rented gpu-hf with a large window): the short records
// stay on the LAN, the long ones go to the rented node, and no record is cut — each answer's
// prompt_tokens is the whole record, where an Ollama over its num_ctx would have dropped the start.
import OpenAI, { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { until } from "../../support/eventually.js";
import { keyringWorlds } from "../../support/keyring-worlds.js";
import { MODEL, validationWorld, type ValidationWorld } from "./validation-world.js";

const worlds = keyringWorlds<ValidationWorld>();
const LOCAL_WINDOW = 2_048;
const LOCAL = "qwen3:0.6b";
const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(" ");

describe("a batch with a few records too long for the local GPUs", () => {
  it("keeps short records on the LAN, sends the 3 long ones to the rented node, and cuts none", async () => {
    const w = worlds.add(
      await validationWorld(worlds.ca, {
        // The local Ollamas call it by its tag, Hugging Face by its repo id: one model by an alias.
        localModels: [LOCAL],
        bModels: [LOCAL],
        localContextTokens: LOCAL_WINDOW,
        topLevel: ["model_aliases:", `  qwen3: ["${LOCAL}", ${MODEL}]`],
      }),
    );
    await w.a.managed.tick();
    // Every upstream up with its window read (A's engine, B through its inventory, gpu-hf's probe).
    await until(async () => {
      const res = await fetch(`${w.a.url}/pair/v1/models`, {
        headers: { authorization: `Bearer ${w.a.adminToken}` },
      });
      const rows = (await res.json()) as { model: string; nodes: string[] }[];
      const nodes = rows.filter((r) => r.model === MODEL || r.model === LOCAL).flatMap((r) => r.nodes);
      return ["node-a", "node-b", "gpu-hf"].every((n) => nodes.includes(n));
    }, 10_000);

    const long = new Set(["r17", "r50", "r83"]);
    const sizes = new Map<string, number>();
    const lines = Array.from({ length: 100 }, (_, i) => {
      const id = `r${i}`;
      const size = long.has(id) ? 3_000 : 40;
      sizes.set(id, size);
      return JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: MODEL, max_tokens: 4, messages: [{ role: "user", content: words(size, id) }] },
      });
    });
    const openai = new OpenAI({ baseURL: `${w.a.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(lines.join("\n") + "\n"), "records.jsonl"),
      purpose: "batch",
    });
    const created = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    let batch = created;
    await until(async () => {
      batch = await openai.batches.retrieve(created.id);
      return ["completed", "failed", "cancelled", "expired"].includes(batch.status);
    }, 60_000);
    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: 100, completed: 100, failed: 0 });

    // Where each record ran: the rented endpoint's engine saw exactly the long ones.
    const rented = w.hf.endpoints.get("alice", "qwen")?.engine;
    expect(rented?.requests).toBe(3);
    const lan = (w.local?.stats().requests ?? 0) + (w.b.engine?.stats().requests ?? 0);
    expect(lan).toBe(97);
    // B's window is as small as A's, so no long record went there either (A, having a free slot, ran
    // the short ones itself: which LAN node takes a short record is the scheduler's business).

    // None cut: every answer counted its whole record (plus the chat template's few tokens).
    const output = (await (await openai.files.content(batch.output_file_id ?? "")).text())
      .split("\n")
      .filter((l) => l !== "")
      .map(
        (l) =>
          JSON.parse(l) as {
            custom_id: string;
            response: { status_code: number; body: { usage: { prompt_tokens: number } } };
          },
      );
    expect(output).toHaveLength(100);
    for (const line of output) {
      expect(line.response.status_code).toBe(200);
      expect(line.response.body.usage.prompt_tokens).toBeGreaterThanOrEqual(
        sizes.get(line.custom_id) ?? Infinity,
      );
    }
  });
});
