// The node end to end over engine emulators, driven by the official openai and ollama clients and
// by raw HTTP: both dialects, streamed and not, translation both ways, errors, failover, history.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";

let c: Cluster;
beforeAll(async () => {
  c = await startCluster([
    { name: "ollama-1", api: "ollama", models: ["llama3.2:latest", "shared:latest"] },
    { name: "vllm-1", api: "openai", models: ["qwen-7b", "shared:latest"] },
  ]);
});
afterAll(async () => c.close());

const openai = () => new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
const ollama = () => new Ollama({ host: c.node.url });

describe("OpenAI dialect", () => {
  it("lists every model of every engine", async () => {
    const models = await openai().models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(["llama3.2:latest", "qwen-7b", "shared:latest"]);
  });

  it.each(["qwen-7b", "llama3.2:latest"])("chats with %s, not streamed, with usage", async (model) => {
    const r = await openai().chat.completions.create({
      model,
      messages: [{ role: "user", content: "hello there" }],
    });
    expect(r.choices[0]?.message.content).toMatch(/hello there/);
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it.each(["qwen-7b", "llama3.2:latest"])("streams from %s", async (model) => {
    const stream = await openai().chat.completions.create({
      model,
      messages: [{ role: "user", content: "count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/count/);
    expect(usage?.completion_tokens).toBe(8);
  });

  it("embeds through an Ollama engine", async () => {
    const r = await openai().embeddings.create({ model: "llama3.2:latest", input: "abc" });
    expect(r.data[0]?.embedding.length).toBeGreaterThan(0);
  });

  it("answers model_not_found in OpenAI's envelope", async () => {
    const res = await fetch(`${c.node.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "nope", messages: [{ role: "user", content: "x" }] }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      error: { code: "model_not_found", type: "invalid_request_error" },
    });
  });
});

describe("Ollama dialect", () => {
  it("lists tags", async () => {
    const tags = await ollama().list();
    expect(tags.models.map((m) => m.name)).toContain("qwen-7b");
  });

  it.each(["llama3.2:latest", "qwen-7b"])("chats with %s, not streamed", async (model) => {
    const r = await ollama().chat({ model, messages: [{ role: "user", content: "hi you" }], stream: false });
    expect(r.message.content).toMatch(/hi you/);
    expect(r.eval_count).toBe(8);
    expect(r.done).toBe(true);
  });

  it.each(["llama3.2:latest", "qwen-7b"])("streams a chat from %s", async (model) => {
    const stream = await ollama().chat({
      model,
      messages: [{ role: "user", content: "stream me" }],
      stream: true,
    });
    let text = "";
    let final: { done: boolean; eval_count?: number } | undefined;
    for await (const part of stream) {
      text += part.message.content;
      if (part.done) final = part;
    }
    expect(text).toMatch(/stream me/);
    expect(final?.eval_count).toBe(8);
  });

  it.each(["llama3.2:latest", "qwen-7b"])("generates with %s", async (model) => {
    const r = await ollama().generate({ model, prompt: "say", stream: false });
    expect(r.response).toMatch(/say/);
  });

  it("embeds through an OpenAI engine", async () => {
    const r = await ollama().embed({ model: "qwen-7b", input: ["a", "b"] });
    expect(r.embeddings).toHaveLength(2);
  });

  it("answers model_not_found in Ollama's shape", async () => {
    const res = await fetch(`${c.node.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "nope", messages: [] }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect([400, 404]).toContain(res.status);
    expect(typeof body.error).toBe("string");
  });
});

describe("bad input", () => {
  it("refuses bad JSON, wrong types and huge bodies with 4xx, and keeps serving", async () => {
    const post = (body: string | Buffer, path = "/v1/chat/completions") =>
      fetch(`${c.node.url}${path}`, { method: "POST", body });
    const bad = await post("{not json");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_request" } });
    const wrong = await post(JSON.stringify({ model: 7, messages: "x" }));
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toMatch(/model|messages/);
    const huge = await post(Buffer.alloc(17 * 1024 * 1024, 0x20));
    expect(huge.status).toBe(413);
    const ok = await openai().chat.completions.create({
      model: "qwen-7b",
      messages: [{ role: "user", content: "still" }],
    });
    expect(ok.choices[0]?.message.content).toMatch(/still/);
  });
});

describe("routing and history", () => {
  it("marks every routed response with x-pair-served-by", async () => {
    const res = await fetch(`${c.node.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen-7b", messages: [{ role: "user", content: "x" }] }),
    });
    expect(res.headers.get("x-pair-served-by")).toBe("node-a");
    await res.text();
  });

  it("records workloads without their text", async () => {
    const marker = "a-secret-prompt-marker";
    await openai().chat.completions.create({
      model: "qwen-7b",
      messages: [{ role: "user", content: marker }],
    });
    const rows = c.node.history.history({ limit: 1000 });
    expect(rows.length).toBeGreaterThan(0);
    const last = rows.find((r) => r.model === "qwen-7b")!;
    expect(last).toMatchObject({
      status: "completed",
      servingNode: "node-a",
      engine: "vllm-1",
      originNode: "node-a",
    });
    expect(JSON.stringify(rows)).not.toContain(marker);
    const admin = await fetch(`${c.node.url}/pair/v1/history`, {
      headers: { authorization: `Bearer ${c.node.adminToken}` },
    });
    expect(admin.status).toBe(200);
    const unauth = await fetch(`${c.node.url}/pair/v1/history`);
    expect(unauth.status).toBe(401);
  });

  it("serves metrics in Prometheus text format", async () => {
    const text = await (await fetch(`${c.node.url}/metrics`)).text();
    expect(text).toMatch(/# TYPE pair_requests_total counter/);
    expect(text).toMatch(/pair_engine_up\{engine="vllm-1"\} 1/);
    expect(text).toMatch(
      /pair_requests_total\{engine="vllm-1",model="qwen-7b",outcome="completed",route="\/v1\/chat\/completions"\} \d+/,
    );
    expect(text).toMatch(
      /pair_first_byte_seconds_bucket\{engine="vllm-1",model="qwen-7b",route="\/v1\/chat\/completions",le="0.005"\}/,
    );
    expect(text).not.toMatch(/model="nope"/);
  });
});

describe("token counts", () => {
  it("reads them from pass-through streams of both dialects", async () => {
    const oa = await openai().chat.completions.create({
      model: "qwen-7b",
      messages: [{ role: "user", content: "count-openai" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of oa) void _;
    const ol = await ollama().chat({
      model: "llama3.2:latest",
      messages: [{ role: "user", content: "count-ollama" }],
      stream: true,
    });
    for await (const _ of ol) void _;
    const rows = c.node.history.history({ limit: 5 });
    const byEngine = (engine: string) => rows.find((r) => r.engine === engine);
    expect(byEngine("vllm-1")).toMatchObject({ tokensOut: 8 });
    expect(byEngine("ollama-1")).toMatchObject({ tokensOut: 8 });
  });
});

describe("ollama run support", () => {
  it("answers /api/show for a served model and 404 for another", async () => {
    const ok = await fetch(`${c.node.url}/api/show`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen-7b" }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ capabilities: ["completion"] });
    const missing = await fetch(`${c.node.url}/api/show`, {
      method: "POST",
      body: JSON.stringify({ model: "nope" }),
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "model_not_found" });
  });
});
