// Load on loopback, bounded in time: 1,000 concurrent streaming requests through one node (engine
// emulator with room for all of them) complete with 0 errors, the process's RSS stays bounded while
// they run and comes back near its baseline after; a node whose queue is full answers the extra
// requests at once with the documented error (502 upstream_error, "the queue is full"), not a hang.
// Numbers are printed for docs/reliability.md. RSS is the whole test process (client, node and
// engine emulator share it), so the bound is on all three.
import { request, Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "../e2e/node-harness.js";

const MODEL = "qwen:0.5b";
const CONCURRENT = 1_000;
const MB = 1024 * 1024;

let big: Cluster;
let small: Cluster;
const agent = new Agent({ connections: CONCURRENT + 10, pipelining: 0 });

beforeAll(async () => {
  big = await startCluster([
    { name: "ollama", api: "ollama", models: [MODEL], maxConcurrent: CONCURRENT, tokenDelayMs: 20 },
  ]);
  small = await startCluster(
    [{ name: "ollama", api: "ollama", models: [MODEL], maxConcurrent: 1, tokenDelayMs: 200 }],
    { overrides: { maxQueued: 4, maxQueueWaitMs: 10_000 } },
  );
});

afterAll(async () => {
  await big?.close();
  await small?.close();
  await agent.close();
});

async function stream(url: string): Promise<{ status: number; text: string }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: "POST",
    dispatcher: agent,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

describe("load on loopback", () => {
  it(`${CONCURRENT} concurrent streaming requests through one node: 0 errors, RSS bounded and back near baseline`, async () => {
    await stream(big.node.url); // warm up (JIT, sockets)
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => stream(big.node.url)));
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    const errors = results.filter((r) => r.status !== 200 || !r.text.includes("[DONE]"));
    await new Promise((r) => setTimeout(r, 1_000));
    const after = process.memoryUsage().rss;
    console.log(
      `load: ${CONCURRENT} streams in ${Math.round(elapsedMs)} ms, ${errors.length} errors; RSS baseline ` +
        `${Math.round(baseline / MB)} MB, peak ${Math.round(peak / MB)} MB, after ${Math.round(after / MB)} MB`,
    );
    expect(errors).toHaveLength(0);
    expect(peak - baseline).toBeLessThan(400 * MB);
    expect(after - baseline).toBeLessThan(150 * MB);
    expect(big.node.history.running()).toHaveLength(0); // no ghosts in the Jobs list
  });

  it("a full queue answers the extra requests at once with 502 upstream_error (queue full)", async () => {
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const r = await stream(small.node.url);
        return { ...r, ms: performance.now() - started };
      }),
    );
    const refused = results.filter((r) => r.status === 502);
    const served = results.filter((r) => r.status === 200);
    console.log(
      `queue: 12 requests, 1 slot + 4 queued: ${served.length} served, ${refused.length} refused, ` +
        `slowest refusal ${Math.round(Math.max(...refused.map((r) => r.ms)))} ms`,
    );
    expect(served.length).toBe(5);
    expect(refused.length).toBe(7);
    for (const r of refused) {
      expect(r.text).toContain("upstream_error");
      expect(r.text).toContain("queue is full");
      expect(r.ms).toBeLessThan(1_000); // refused at once, not after the queue wait
    }
    expect(small.node.history.running()).toHaveLength(0);
  });
});
