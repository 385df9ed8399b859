// The node under engine faults: failover before the first byte and never after, client
// disconnects, the queue, engines leaving and rejoining the inventory, cold-start timeouts and a
// graceful shutdown. Every wait is bounded.
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";
import { until } from "../support/eventually.js";
import { fetchChat } from "../support/chat.js";

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const chat = (url: string, model: string, stream = false, content = "hello") =>
  fetchChat(url, { model, stream, content });

describe("failover", () => {
  it("moves to the next engine when one refuses connections", async () => {
    c = await startCluster([
      { name: "a", api: "openai", models: ["m:latest"] },
      { name: "b", api: "ollama", models: ["m:latest"] },
    ]);
    await c.engines.get("a")!.setFaults({ refuseConnections: true });
    for (let i = 0; i < 4; i += 1) {
      const res = await chat(c.node.url, "m:latest");
      expect(res.status).toBe(200);
      await res.text();
    }
    const rows = c.node.history.history();
    expect(rows.every((r) => r.status === "completed" && r.engine === "b")).toBe(true);
  });

  it("moves on after a 500 before the first byte, and reports upstream_error when none is left", async () => {
    c = await startCluster([
      { name: "a", api: "openai", models: ["m"] },
      { name: "b", api: "openai", models: ["m"] },
    ]);
    await c.engines.get("a")!.setFaults({ failBeforeFirstByte: { status: 500 } });
    const ok = await chat(c.node.url, "m", true);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/\[DONE\]/);
    await c.engines.get("b")!.setFaults({ failBeforeFirstByte: { status: 503 } });
    const failed = await chat(c.node.url, "m");
    expect(failed.status).toBe(502);
    expect(failed.headers.get("retry-after")).toBe("2");
    expect(await failed.json()).toMatchObject({ error: { code: "upstream_error", node: "node-a" } });
  });

  it("never fails over after the first byte: a cut stream ends, and is recorded as failed", async () => {
    c = await startCluster([
      { name: "a", api: "openai", models: ["m"], maxConcurrent: 1 },
      { name: "b", api: "openai", models: ["m"], maxConcurrent: 1 },
    ]);
    for (const e of c.engines.values()) await e.setFaults({ cutMidStream: { afterTokens: 3 } });
    const res = await chat(c.node.url, "m", true);
    expect(res.status).toBe(200);
    const text = await res.text().catch(() => "cut");
    expect(text).not.toMatch(/\[DONE\]/);
    await until(() => c!.node.history.running().length === 0);
    const requests = [...c.engines.values()].map((e) => e.stats().requests);
    expect(requests.reduce((a, b) => a + b, 0)).toBe(1);
    expect(c.node.history.history()[0]).toMatchObject({ status: "failed", errorCode: "upstream_error" });
  });

  it("answers cold_start_timeout when no engine sends a first byte in time", async () => {
    c = await startCluster([{ name: "a", api: "openai", models: ["m"], firstByteTimeoutS: 0.3 }]);
    await c.engines.get("a")!.setFaults({ hangBeforeFirstByte: true });
    const started = Date.now();
    const res = await chat(c.node.url, "m");
    expect(res.status).toBe(504);
    expect(res.headers.get("retry-after")).toBe("10");
    expect(await res.json()).toMatchObject({ error: { code: "cold_start_timeout" } });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("client disconnects and the queue", () => {
  it("a client that goes away cancels the upstream request", async () => {
    c = await startCluster([{ name: "a", api: "openai", models: ["m"], tokenDelayMs: 50 }]);
    const abort = new AbortController();
    const res = await fetch(`${c.node.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "m",
        stream: true,
        max_tokens: 200,
        messages: [{ role: "user", content: "x" }],
      }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    const engine = c.engines.get("a")!;
    await until(() => engine.stats().cancelled === 1);
    await until(() => c!.node.history.running().length === 0);
    expect(c.node.history.history()[0]?.status).toBe("cancelled");
  });

  it("queues beyond max_concurrent and serves in order; a full wait ends in a clear error", async () => {
    c = await startCluster(
      [{ name: "a", api: "openai", models: ["m"], maxConcurrent: 1, tokenDelayMs: 30 }],
      {
        overrides: { maxQueueWaitMs: 2_000 },
      },
    );
    const client = new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "x", maxRetries: 0 });
    const replies = await Promise.all(
      [1, 2, 3].map((n) =>
        client.chat.completions.create({ model: "m", messages: [{ role: "user", content: `n${n}` }] }),
      ),
    );
    expect(replies.map((r) => r.choices[0]?.message.content?.split(" ")[0])).toEqual(["n1", "n2", "n3"]);
    expect(c.engines.get("a")!.stats().maxInFlightSeen).toBe(1);
  });

  it("refuses at once when the queue wait is over", async () => {
    c = await startCluster(
      [{ name: "a", api: "openai", models: ["m"], maxConcurrent: 1, tokenDelayMs: 100 }],
      {
        overrides: { maxQueueWaitMs: 100 },
      },
    );
    const slow = chat(c.node.url, "m");
    await until(() => c!.node.history.running().length === 1);
    const refused = await chat(c.node.url, "m");
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/busy/);
    expect((await slow).status).toBe(200);
  });
});

describe("inventory", () => {
  it("an engine that goes down leaves the inventory within one probe interval, and comes back", async () => {
    c = await startCluster([
      { name: "a", api: "openai", models: ["only-a"] },
      { name: "b", api: "ollama", models: ["only-b"] },
    ]);
    const models = async () => {
      const r = await fetch(`${c!.node.url}/v1/models`);
      return ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    };
    expect(await models()).toEqual(["only-a", "only-b:latest"]); // Ollama names an untagged model :latest
    await c.engines.get("a")!.setFaults({ refuseConnections: true });
    await until(async () => !(await models()).includes("only-a"), 1_000);
    const res = await chat(c.node.url, "only-a");
    expect(res.status).toBe(404);
    await c.engines.get("a")!.setFaults({});
    await until(async () => (await models()).includes("only-a"), 1_000);
  });
});

describe("shutdown", () => {
  it("lets a stream in flight finish, then closes", async () => {
    c = await startCluster([{ name: "a", api: "openai", models: ["m"], tokenDelayMs: 40 }]);
    const res = await chat(c.node.url, "m", true);
    const body = res.text();
    await until(() => c!.node.history.running().length === 1);
    const closing = c.node.close(5_000);
    expect(await body).toMatch(/\[DONE\]/);
    await closing;
    await expect(chat(c.node.url, "m")).rejects.toThrow();
  });
});
