// Real nodes on loopback, paired by PIN: a request on one node for a model only a peer serves is
// forwarded over mTLS, streamed back, recorded on both sides, and fails over to the next peer.
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { PEER_ROUTE_PREFIX } from "../../src/cluster-node/index.js";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import {
  admin,
  agentBetween,
  fastNodes,
  joinWith,
  sees,
  showPin,
  type TestNode,
} from "./node-pair-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { postChat } from "../support/chat.js";

const defer = cleanupAfterEach();

const node = fastNodes(defer);

async function pair(a: TestNode, b: TestNode): Promise<void> {
  const joined = await joinWith(a, b, await showPin(b));
  expect(joined.status).toBe(200);
}

async function jobs(n: TestNode): Promise<WorkloadJson[]> {
  return (await admin(n, "/pair/v1/jobs")).json as WorkloadJson[];
}

async function historyOf(n: TestNode): Promise<WorkloadJson[]> {
  return (await admin(n, "/pair/v1/history")).json as WorkloadJson[];
}

const chat = (n: TestNode, model: string, stream: boolean, signal?: AbortSignal) =>
  postChat(n.node.url, { model, stream, signal });

describe("forwarding between paired nodes", () => {
  it("streams a peer's model through this node (SSE and NDJSON), recorded with origin and serving node on both sides", async () => {
    const laptop = await node("laptop");
    const desktop = await node("pc-3090", { models: ["qwen:32b"], maxTokens: 12 });
    await pair(laptop, desktop);
    await sees(laptop, "qwen:32b");

    const res = await chat(laptop, "qwen:32b", true);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/event-stream/);
    expect(res.headers["x-pair-served-by"]).toBe("pc-3090");
    const text = await res.body.text();
    const events = text.split("\n\n").filter((e) => e.startsWith("data: "));
    expect(events.at(-1)).toBe("data: [DONE]");
    const content = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] })
      .map((e) => e.choices[0]?.delta.content ?? "")
      .join("");
    expect(content.length).toBeGreaterThan(0);

    // The Ollama dialect through the same hop.
    const ollama = await request(`${laptop.node.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "qwen:32b", prompt: "hi" }),
    });
    expect(ollama.statusCode).toBe(200);
    const lines = (await ollama.body.text()).trim().split("\n");
    expect(lines.length).toBeGreaterThan(1);
    expect((JSON.parse(lines.at(-1)!) as { done: boolean }).done).toBe(true);

    await until(
      async () => (await historyOf(laptop)).length === 2 && (await historyOf(desktop)).length === 2,
    );
    for (const row of await historyOf(laptop))
      expect(row).toMatchObject({
        origin_node: "laptop",
        serving_node: "pc-3090",
        status: "completed",
        engine: null,
        requester: "local",
        attempts: [{ target: "node pc-3090" }],
      });
    for (const row of await historyOf(desktop))
      expect(row).toMatchObject({
        origin_node: "laptop",
        serving_node: "pc-3090",
        status: "completed",
        engine: "pc-3090-ollama",
        requester: "local",
        attempts: [{ target: "engine pc-3090-ollama" }],
      });
    const served = (await historyOf(desktop)).find((r) => r.route === "/v1/chat/completions");
    expect(served?.tokens_out).toBe(12);
  });

  it("shows a forwarded request in both Jobs lists while it runs; a client that leaves aborts the whole chain", async () => {
    const laptop = await node("laptop");
    const desktop = await node("pc-3090", { models: ["qwen:32b"], maxTokens: 400, tokenDelayMs: 20 });
    await pair(laptop, desktop);
    await sees(laptop, "qwen:32b");

    const gone = new AbortController();
    const res = await chat(laptop, "qwen:32b", true, gone.signal);
    expect(res.statusCode).toBe(200);
    const reader = res.body[Symbol.asyncIterator]();
    await reader.next(); // the stream has started

    const [a] = await jobs(laptop);
    const [b] = await jobs(desktop);
    expect(a).toMatchObject({ status: "running", origin_node: "laptop", serving_node: "pc-3090" });
    expect(b).toMatchObject({ status: "running", origin_node: "laptop", serving_node: "pc-3090" });

    gone.abort();
    // Laptop → desktop → engine: every link lets go, well before the 8 s the answer would take.
    await until(() => desktop.engine!.stats().cancelled === 1, 3_000);
    await until(async () => (await jobs(laptop)).length === 0 && (await jobs(desktop)).length === 0, 3_000);
    expect((await historyOf(laptop))[0]?.status).toBe("cancelled");
    expect((await historyOf(desktop))[0]?.status).toBe("cancelled");
    expect(desktop.engine!.stats().completed).toBe(0);
  });

  it("never forwards a forwarded request again: a peer's request is served locally or refused", async () => {
    const laptop = await node("laptop", { models: ["llama3:8b"] });
    const desktop = await node("pc-3090", { models: ["qwen:32b"] });
    await pair(laptop, desktop);
    await sees(desktop, "llama3:8b");
    await sees(laptop, "qwen:32b");

    // As the laptop, ask the desktop (over mTLS, on its peer route) for the laptop's own model.
    const agent = agentBetween(laptop, desktop);
    try {
      const res = await request(
        `https://127.0.0.1:${desktop.node.cluster.port}${PEER_ROUTE_PREFIX}/v1/chat/completions`,
        {
          method: "POST",
          dispatcher: agent,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "llama3:8b", messages: [{ role: "user", content: "hi" }] }),
        },
      );
      expect(res.statusCode).toBe(404);
      expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    } finally {
      await agent.close();
    }
    // The laptop's engine never saw it, and the laptop recorded nothing.
    expect(laptop.engine!.stats().requests).toBe(0);
    expect(await historyOf(laptop)).toEqual([]);
    const [refused] = await historyOf(desktop);
    expect(refused).toMatchObject({ origin_node: "laptop", status: "failed", error_code: "model_not_found" });
  });

  it("fails over to the next peer when the chosen one fails before the first byte, and records both attempts", async () => {
    const laptop = await node("laptop");
    const first = await node("pc-a", { models: ["qwen:32b"] });
    const second = await node("pc-b", { models: ["qwen:32b"] });
    await pair(laptop, first);
    await pair(laptop, second);
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
      return rows.find((r) => r.model === "qwen:32b")?.nodes.length === 2;
    });
    await first.engine!.setFaults({ failBeforeFirstByte: { status: 500 } });

    const res = await chat(laptop, "qwen:32b", false);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("pc-b");
    await res.body.json();

    await until(async () => (await historyOf(laptop)).length === 1);
    const [row] = await historyOf(laptop);
    expect(row).toMatchObject({
      status: "completed",
      serving_node: "pc-b",
      attempts: [{ target: "node pc-a", error: "upstream_error" }, { target: "node pc-b" }],
    });
    // The failed node recorded its own failure; the other served it.
    await until(async () => (await historyOf(first)).length === 1);
    expect((await historyOf(first))[0]).toMatchObject({ origin_node: "laptop", status: "failed" });
    expect((await historyOf(second))[0]).toMatchObject({ origin_node: "laptop", status: "completed" });
  });

  it("prefers this node's own engine over a peer serving the same model", async () => {
    const laptop = await node("laptop", { models: ["qwen:32b"] });
    const desktop = await node("pc-3090", { models: ["qwen:32b"] });
    await pair(laptop, desktop);
    await sees(laptop, "qwen:32b");
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
      return rows.find((r) => r.model === "qwen:32b")?.nodes.length === 2;
    });
    for (let i = 0; i < 3; i++) {
      const res = await chat(laptop, "qwen:32b", false);
      expect(res.headers["x-pair-served-by"]).toBe("laptop");
      await res.body.dump();
    }
    expect(desktop.engine!.stats().requests).toBe(0);
  });

  it("a peer that shuts down tells its peers, which stop routing to it at once; on restart it is back", async () => {
    const laptop = await node("laptop", { refreshMs: 60_000, timeoutMs: 400 });
    const desktop = await node("pc-3090", { models: ["qwen:32b"], refreshMs: 60_000 });
    await pair(laptop, desktop);
    // With a one-minute poll, only pairing itself (which asks the new peer at once) and the
    // desktop's own notices (sent at start and on change) can make the laptop see it this fast.
    await sees(laptop, "qwen:32b");

    await desktop.stop();
    const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string }[];
    expect(rows.map((r) => r.model)).not.toContain("qwen:32b");

    const again = await desktop.restart();
    defer(() => again.close());
    await sees(laptop, "qwen:32b");
    const res = await chat(laptop, "qwen:32b", false);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });
});
