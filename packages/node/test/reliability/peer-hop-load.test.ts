// Load through a peer hop, on loopback and bounded in time: 256 concurrent streaming requests
// client → laptop → mTLS → pc-3090 → engine emulator complete with 0 errors, each stream whole and
// in order (the emulator echoes each request's own words, so a stream's text is its prompt), all
// 256 really at once on the engine (not queued behind a connection limit of the peer link), the
// test process's RSS bounded while they run and back near its baseline after, and both Jobs lists
// empty after. RSS is the whole test process (client, both nodes and the engine share it).
// Numbers are printed for docs/reliability.md.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { admin, joinWith, showPin, startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";
import { until } from "../support/eventually.js";

const MODEL = "qwen:32b";
const CONCURRENT = 256;
/** Words per prompt = tokens per answer (the emulator echoes the prompt, `max_tokens` long). */
const WORDS = 8;
/**
 * Each stream lasts WORDS × this (8 s): longer than it takes this machine to open 256 mTLS
 * connections (about 7 s under the test runner), so the streams overlap whole.
 */
const TOKEN_DELAY_MS = 1_000;
const MB = 1024 * 1024;

/** A full garbage collection (V8's `gc`, exposed at run time), so heap numbers compare like for like. */
const gc = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

let laptop: TestNode;
let desktop: TestNode;
const agent = new Agent({ connections: CONCURRENT + 10, pipelining: 0 });

beforeAll(async () => {
  [laptop, desktop] = await Promise.all([
    startTestNodeWith("laptop", {}),
    startTestNodeWith("pc-3090", {
      models: [MODEL],
      maxConcurrent: CONCURRENT,
      tokenDelayMs: TOKEN_DELAY_MS,
    }),
  ]);
  expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
  await until(async () => {
    const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
    return rows.some((r) => r.model === MODEL && r.nodes.includes("pc-3090"));
  });
}, 30_000);

afterAll(async () => {
  await laptop?.close();
  await desktop?.close();
  await agent.close();
});

function prompt(i: number): string {
  return [`stream-${i}`, ...Array.from({ length: WORDS - 1 }, (_, k) => `w${i}x${k}`)].join(" ");
}

/** One streamed chat through the laptop; the text its SSE deltas add up to. */
async function stream(
  i: number,
  tokens = WORDS,
): Promise<{ status: number; servedBy: unknown; content: string; done: boolean }> {
  const res = await request(`${laptop.node.url}/v1/chat/completions`, {
    method: "POST",
    dispatcher: agent,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      stream: true,
      max_tokens: tokens,
      messages: [{ role: "user", content: prompt(i) }],
    }),
    signal: AbortSignal.timeout(45_000),
  });
  const text = await res.body.text();
  const events = text.split("\n\n").filter((e) => e.startsWith("data: "));
  const content = events
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] })
    .map((e) => e.choices[0]?.delta.content ?? "")
    .join("");
  return {
    status: res.statusCode,
    servedBy: res.headers["x-pair-served-by"],
    content,
    done: events.at(-1) === "data: [DONE]",
  };
}

async function jobs(n: TestNode): Promise<WorkloadJson[]> {
  return (await admin(n, "/pair/v1/jobs")).json as WorkloadJson[];
}

describe("load through a peer hop", () => {
  it(`${CONCURRENT} concurrent streams client → laptop → mTLS → pc-3090 → engine: 0 errors, whole and in order, RSS bounded and back near baseline, no ghosts`, async () => {
    // Warm up (JIT, the peer link) with a one-token answer: its first word.
    expect(await stream(-1, 1)).toMatchObject({ status: 200, content: "stream--1", done: true });
    const engine = desktop.engine!;
    gc();
    const baseline = process.memoryUsage().rss;
    const heapBaseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => stream(i).catch((e: unknown) => ({ error: String(e) }))),
    );
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    const errors = results.flatMap((r, i) =>
      "error" in r
        ? [`#${i}: ${r.error}`]
        : r.status !== 200 || !r.done || r.content !== prompt(i) || r.servedBy !== "pc-3090"
          ? [`#${i}: ${r.status} ${String(r.servedBy)} done=${r.done} "${r.content.slice(0, 80)}"`]
          : [],
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const after = process.memoryUsage().rss;
    gc();
    const heapAfter = process.memoryUsage().heapUsed;
    const stats = engine.stats();
    console.log(
      `peer hop: ${CONCURRENT} streams in ${Math.round(elapsedMs)} ms, ${errors.length} errors, ` +
        `${stats.maxInFlightSeen} at once on the engine; RSS baseline ${Math.round(baseline / MB)} MB, ` +
        `peak ${Math.round(peak / MB)} MB, after ${Math.round(after / MB)} MB; heap after a full GC ` +
        `${Math.round(heapBaseline / MB)} MB before, ${Math.round(heapAfter / MB)} MB after`,
    );
    expect(errors.slice(0, 5)).toEqual([]);
    // Through the hop at once, not queued behind a cap of the peer link (it was 128 connections):
    // nearly all 256 streams overlap on the engine (the first may end before the last connects).
    expect(stats.maxInFlightSeen).toBeGreaterThan((CONCURRENT * 3) / 4);
    expect(peak - baseline).toBeLessThan(300 * MB);
    expect(after - baseline).toBeLessThan(100 * MB);
    // What the streams held is released: the live heap is back near where it started.
    expect(heapAfter - heapBaseline).toBeLessThan(20 * MB);
    await until(async () => (await jobs(laptop)).length === 0 && (await jobs(desktop)).length === 0, 3_000);
    expect(laptop.node.history.running()).toHaveLength(0);
    expect(desktop.node.history.running()).toHaveLength(0);
  }, 60_000);
});
