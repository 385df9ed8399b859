// OpenAI's Files and Batch APIs on a real node over engine emulators, through the official client.
import OpenAI, { toFile } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/eventually.js";
import { startCluster, type Cluster } from "./node-harness.js";

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

function chatLine(id: string, model = "m1", words = "hello"): string {
  return JSON.stringify({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model, messages: [{ role: "user", content: words }] },
  });
}

function client(cluster: Cluster): OpenAI {
  return new OpenAI({ baseURL: `${cluster.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
}

async function finished(openai: OpenAI, id: string, withinMs = 20_000): Promise<OpenAI.Batches.Batch> {
  let batch: OpenAI.Batches.Batch | undefined;
  await until(async () => {
    batch = await openai.batches.retrieve(id);
    return ["completed", "failed", "cancelled", "expired"].includes(batch.status);
  }, withinMs);
  return batch!;
}

function jsonl(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("the Batch API", () => {
  it("runs every line once, writes the answers and the invalid lines' errors, and tags history", async () => {
    c = await startCluster([{ name: "e1", api: "openai", models: ["m1"], maxConcurrent: 4 }]);
    const openai = client(c);
    const lines = Array.from({ length: 30 }, (_, i) => chatLine(`r${i}`));
    // A body that is not a valid chat request: that line's error, the batch goes on.
    lines.push(
      JSON.stringify({
        custom_id: "bad",
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "m1" },
      }),
    );
    // A model nobody serves: answered 404 by the routing, so it goes to the error file with the reply.
    lines.push(chatLine("nobody", "no-such-model"));
    const file = await openai.files.create({
      file: await toFile(Buffer.from(lines.join("\n") + "\n"), "input.jsonl"),
      purpose: "batch",
    });
    expect(file).toMatchObject({ object: "file", purpose: "batch", filename: "input.jsonl" });
    expect((await openai.files.retrieve(file.id)).bytes).toBe(file.bytes);
    const created = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { job: "nightly" },
    });
    expect(created).toMatchObject({ object: "batch", status: "in_progress", metadata: { job: "nightly" } });
    const done = await finished(openai, created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 32, completed: 30, failed: 2 });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);

    const output = jsonl(await (await openai.files.content(done.output_file_id!)).text());
    expect(output.map((l) => l["custom_id"]).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => `r${i}`).sort(),
    );
    const first = output[0] as {
      response: { status_code: number; body: { choices: unknown[] } };
      error: null;
    };
    expect(first.response.status_code).toBe(200);
    expect(first.response.body.choices.length).toBe(1);
    expect(first.error).toBeNull();

    const errors = jsonl(await (await openai.files.content(done.error_file_id!)).text());
    expect(errors.map((l) => l["custom_id"]).sort()).toEqual(["bad", "nobody"]);
    const bad = errors.find((l) => l["custom_id"] === "bad") as { error: { code: string }; response: null };
    expect(bad).toMatchObject({ response: null, error: { code: "invalid_request" } });
    const nobody = errors.find((l) => l["custom_id"] === "nobody") as {
      response: { status_code: number };
      error: { code: string };
    };
    expect(nobody).toMatchObject({ response: { status_code: 404 }, error: { code: "model_not_found" } });

    // Every line that ran is a workload in history, its requester the batch.
    const rows = c.node.history.history({ limit: 100 }).filter((w) => w.requester === `batch:${created.id}`);
    expect(rows.length).toBe(31);
    // The batch says which node served its 30 completed lines, as history does.
    const servedBy = new Map<string, number>();
    for (const w of rows.filter((r) => r.status === "completed"))
      servedBy.set(String(w.servingNode), (servedBy.get(String(w.servingNode)) ?? 0) + 1);
    const pair = (done as unknown as { pair: { by_node: Record<string, number> } }).pair;
    expect(pair.by_node).toEqual(Object.fromEntries(servedBy));
    expect(Object.values(pair.by_node).reduce((a, b) => a + b, 0)).toBe(30);
    // Listed, newest first, with OpenAI's cursor fields.
    const page = await openai.batches.list({ limit: 10 });
    expect(page.data.map((b) => b.id)).toEqual([created.id]);
    expect((await openai.files.list()).data.map((f) => f.purpose).sort()).toEqual([
      "batch",
      "batch_output",
      "batch_output",
    ]);
  });

  it("fails a batch whose file is unusable as a whole, with the lines named", async () => {
    c = await startCluster([{ name: "e1", api: "openai", models: ["m1"] }]);
    const openai = client(c);
    const text = [
      chatLine("a"),
      "not json",
      chatLine("a"),
      chatLine("x").replace("/v1/chat/completions", "/v1/embeddings"),
    ].join("\n");
    const file = await openai.files.create({
      file: await toFile(Buffer.from(text), "bad.jsonl"),
      purpose: "batch",
    });
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(batch.status).toBe("failed");
    expect(batch.errors?.data?.map((e) => [e.code, e.line])).toEqual([
      ["invalid_json_line", 2],
      ["duplicate_custom_id", 3],
      ["mismatched_endpoint", 4],
    ]);
    // Unknown ids and files are 404s the client raises as such.
    await expect(openai.batches.retrieve("batch_nope")).rejects.toMatchObject({ status: 404 });
    await expect(
      openai.batches.create({
        input_file_id: "file-nope",
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      }),
    ).rejects.toMatchObject({ status: 404, code: "file_not_found" });
    expect((await openai.files.delete(file.id)).deleted).toBe(true);
    await expect(openai.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it("refuses a file over the node's limit with file_too_large", async () => {
    c = await startCluster([{ name: "e1", api: "openai", models: ["m1"] }], {
      overrides: { batchMaxFileBytes: 1024 },
    });
    const openai = client(c);
    const big = Buffer.from(Array.from({ length: 50 }, (_, i) => chatLine(`r${i}`)).join("\n"));
    await expect(
      openai.files.create({ file: await toFile(big, "big.jsonl"), purpose: "batch" }),
    ).rejects.toMatchObject({ status: 413, code: "file_too_large" });
    expect((await openai.files.list()).data).toEqual([]);
  });

  it("cancels mid-way: lines not run end as batch_cancelled, each custom_id once", async () => {
    c = await startCluster(
      [{ name: "e1", api: "openai", models: ["m1"], maxConcurrent: 2, tokenDelayMs: 40 }],
      {
        overrides: { batchLines: 2 },
      },
    );
    const openai = client(c);
    const lines = Array.from({ length: 40 }, (_, i) => chatLine(`r${i}`));
    const file = await openai.files.create({
      file: await toFile(Buffer.from(lines.join("\n")), "in.jsonl"),
      purpose: "batch",
    });
    const batch = await openai.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await until(async () => (await openai.batches.retrieve(batch.id)).request_counts!.completed >= 2, 10_000);
    const cancelling = await openai.batches.cancel(batch.id);
    expect(["cancelling", "cancelled"]).toContain(cancelling.status);
    const done = await finished(openai, batch.id);
    expect(done.status).toBe("cancelled");
    const output = !done.output_file_id
      ? []
      : jsonl(await (await openai.files.content(done.output_file_id)).text());
    const errors = jsonl(await (await openai.files.content(done.error_file_id!)).text());
    const ids = [...output, ...errors].map((l) => l["custom_id"]);
    expect(ids.length).toBe(40);
    expect(new Set(ids).size).toBe(40);
    expect(errors.length).toBeGreaterThan(20);
    expect(errors.every((l) => (l["error"] as { code: string }).code === "batch_cancelled")).toBe(true);
    expect(done.request_counts).toEqual({ total: 40, completed: output.length, failed: errors.length });
  });
});
