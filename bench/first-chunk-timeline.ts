/**
 * Where the slow first chunks lose their time (issue 13): paced streams (64 tokens at 5 ms/token)
 * through a node started with `PAIR_TIMELINE_FILE`, each request carrying `x-pair-trace`, then every
 * stream's client times joined with the node's timeline of the same request (one machine, one wall
 * clock). Prints, for the median stream and for the slowest 2 % by time to first chunk, how long each
 * step took: client write → node handler, body read, validation, history, slot, upstream request →
 * headers → first chunk read, first chunk written → flushed → client's first read.
 *
 *   npx tsx bench/first-chunk-timeline.ts [--streams 64] [--per-worker 3] [--rented] [--keep FILE]
 *
 * `--rented`: through the node's rented route (HTTPS + bearer to an emulator) instead of its local one.
 * Three processes: the emulators and the node (children), the load (this one). Loopback only.
 * Must not know: the node's internals beyond the timeline's step names.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestCa } from "@pair/testkit";
import { startEngineChild, startNodeChild } from "./bench-setup.js";
import type { BenchChild } from "./child-protocol.js";
import { runLoad, type StreamSample } from "./load-generator.js";
import { cpuMs } from "./load-metrics.js";
import { loadAverage1m } from "./machine-info.js";
import { chatBody } from "./measure.js";
import { median, percentile } from "./stats.js";

const TOKENS = 64;
const DELAY_MS = 5;
const SLOTS = 512;

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "64" },
    "per-worker": { type: "string", default: "3" },
    rented: { type: "boolean", default: false },
    keep: { type: "string" },
    /** Also list the N slowest streams one by one: when each was sent (ms into the run) and its steps. */
    slowest: { type: "string", default: "0" },
    /** Leave the node idle this many seconds between the warm-up and the measured load. */
    "idle-before": { type: "string", default: "0" },
    /** Start the node without its idle collector (packages/node/src/memory/). */
    "no-idle-collect": { type: "boolean", default: false },
  },
  strict: true,
});
const streams = Number(values.streams);
const perWorker = Number(values["per-worker"]);
if (!Number.isInteger(streams) || streams < 1 || streams > 256) throw new RangeError("--streams: 1..256");
if (!Number.isInteger(perWorker) || perWorker < 1 || perWorker > 50)
  throw new RangeError("--per-worker: 1..50");

interface NodeTimeline {
  readonly trace?: string;
  readonly t0: number;
  readonly outcome: string;
  readonly marks: Partial<Record<string, number>>;
}

/** The steps, in order, as (label, from, to) over one joined stream's absolute times. */
const STEPS: readonly (readonly [string, string, string])[] = [
  ["client write → node handler", "sent", "t0"],
  ["body read", "t0", "bodyRead"],
  ["validation", "bodyRead", "validated"],
  ["history begin", "validated", "historyBegun"],
  ["routing + slot", "historyBegun", "slot"],
  ["plan, request built", "slot", "upstreamSent"],
  ["upstream headers", "upstreamSent", "upstreamHeaders"],
  ["upstream first chunk", "upstreamHeaders", "firstRead"],
  ["first chunk written", "firstRead", "firstWritten"],
  ["written → flushed (next tick)", "firstWritten", "firstFlushed"],
  ["flushed → client's first read", "firstFlushed", "clientFirst"],
];

const children: BenchChild[] = [];
const dir = mkdtempSync(join(tmpdir(), "pair-timeline-"));
const file = values.keep ?? join(dir, "timeline.jsonl");
process.on("exit", () => {
  children.forEach((c) => c.kill());
  rmSync(dir, { recursive: true, force: true });
});
let samples: readonly StreamSample[] = [];
let cpuPerStream = 0;
try {
  const ca = await createTestCa();
  const leaf = await ca.issue();
  const token = randomBytes(24).toString("base64url");
  const [local, rented] = await startEngineChild(
    [
      { model: "local-5ms", tokenDelayMs: DELAY_MS, maxTokens: TOKENS, maxConcurrent: SLOTS },
      {
        model: "rent-5ms",
        tokenDelayMs: DELAY_MS,
        maxTokens: TOKENS,
        maxConcurrent: SLOTS,
        tls: { key: leaf.keyPem, cert: leaf.certPem },
        apiKey: token,
      },
    ],
    children,
  );
  const { node, target } = await startNodeChild(
    {
      ...(values["no-idle-collect"] ? { idleCollect: false } : {}),
      engines: [{ name: "emu", model: "local-5ms", baseUrl: `${local!.url}/v1`, maxConcurrent: SLOTS }],
      ...(values.rented
        ? {
            rented: {
              baseUrl: `${rented!.url}/v1`,
              caPem: ca.certPem,
              token,
              models: ["rent-5ms"],
              maxConcurrent: SLOTS,
            },
          }
        : {}),
    },
    { env: { PAIR_TIMELINE_FILE: file } },
    children,
  );
  const model = values.rented ? "rent-5ms" : "local-5ms";
  const run = (n: number, trace: boolean) =>
    runLoad({
      target,
      body: chatBody(model, TOKENS),
      concurrency: streams,
      requestsPerWorker: n,
      rampRequestsPerWorker: 1,
      staggerMs: TOKENS * DELAY_MS,
      requestTimeoutMs: 30_000,
      trace,
    });
  console.error(`load average ${loadAverage1m().toFixed(2)}; warm-up`);
  await run(1, false);
  const idleS = Number(values["idle-before"]);
  if (idleS > 0) {
    console.error(`node idle for ${idleS} s`);
    await sleep(idleS * 1000);
  }
  await node.sample("sample-start");
  const result = await run(perWorker, true);
  cpuPerStream = cpuMs(await node.sample("sample-stop")) / result.sent;
  if (result.errors > 0) console.error(`  ! ${result.errors} errors: ${result.firstError}`);
  samples = result.samples;
  console.error(`load average ${loadAverage1m().toFixed(2)}`);
} finally {
  for (const c of [...children].reverse()) await c.stop();
}

const timelines = new Map<string, NodeTimeline>();
for (const line of readFileSync(file, "utf8").split("\n"))
  if (line !== "") {
    const t = JSON.parse(line) as NodeTimeline;
    if (t.trace !== undefined) timelines.set(t.trace, t);
  }
const joined = samples.flatMap((s) => {
  const t = s.trace === undefined ? undefined : timelines.get(s.trace);
  if (t === undefined || s.sentWallMs === undefined) return [];
  const at: Record<string, number> = {
    sent: s.sentWallMs,
    t0: t.t0,
    clientFirst: s.sentWallMs + s.firstChunkMs,
  };
  for (const [k, v] of Object.entries(t.marks)) if (v !== undefined) at[k] = t.t0 + v;
  return [{ firstChunkMs: s.firstChunkMs, at }];
});
joined.sort((a, b) => a.firstChunkMs - b.firstChunkMs);
const firstChunks = joined.map((j) => j.firstChunkMs);
const slowFrom = Math.floor(joined.length * 0.98);
const slow = joined.slice(slowFrom);
const middle = joined.slice(Math.floor(joined.length * 0.4), Math.ceil(joined.length * 0.6));
const stepMs = (group: typeof joined, from: string, to: string) =>
  median(
    group.flatMap((j) => (j.at[from] === undefined || j.at[to] === undefined ? [] : [j.at[to] - j.at[from]])),
  );
console.log(
  `${values.rented ? "rented" : "local"} route, ${streams} streams × ${perWorker}: ${joined.length} streams joined; ` +
    `first chunk p50 ${percentile(firstChunks, 50).toFixed(2)} ms, p99 ${percentile(firstChunks, 99).toFixed(2)} ms; ` +
    `node CPU/stream ${cpuPerStream.toFixed(3)} ms`,
);
console.log(
  `| step | median of the middle 20 % (ms) | median of the slowest 2 % (ms) |\n| --- | --: | --: |`,
);
for (const [label, from, to] of STEPS)
  console.log(`| ${label} | ${stepMs(middle, from, to).toFixed(3)} | ${stepMs(slow, from, to).toFixed(3)} |`);
console.log(
  `| **time to first chunk** | ${median(middle.map((j) => j.firstChunkMs)).toFixed(3)} | ${median(slow.map((j) => j.firstChunkMs)).toFixed(3)} |`,
);
const listed = Number(values.slowest);
if (listed > 0 && joined.length > 0) {
  const start = Math.min(...joined.map((j) => j.at["sent"]!));
  console.log(`\n| sent at (ms into the run) | first chunk | ${STEPS.map(([l]) => l).join(" | ")} |`);
  console.log(`| --: | --: |${STEPS.map(() => " --: |").join("")}`);
  const bySent = joined.slice(-listed).sort((a, b) => a.at["sent"]! - b.at["sent"]!);
  for (const j of bySent) {
    const steps = STEPS.map(([, f, t]) =>
      j.at[f] === undefined || j.at[t] === undefined ? "–" : (j.at[t] - j.at[f]).toFixed(2),
    );
    console.log(
      `| ${(j.at["sent"]! - start).toFixed(1)} | ${j.firstChunkMs.toFixed(2)} | ${steps.join(" | ")} |`,
    );
  }
}
process.exit(0);
