/**
 * Where the node's memory goes (issue 13: RSS ≤ 150 MB at 256 streams): one node at a time, in four
 * ways — from the TypeScript sources through tsx (as `pair` runs) or from one esbuild bundle with
 * plain node (no loader thread, no transform), each with the workload history written on its worker
 * thread (the default) or on the event loop. For each: `process.memoryUsage()` after a full GC at
 * idle (after a warm-up) and after the load, and the peak RSS while 256 paced streams (64 tokens at
 * 5 ms/token) run through it.
 *
 *   npx tsx bench/node-memory.ts [--streams 256] [--only tsx|bundle] [--node-flags "--max-semi-space-size=4"]
 *
 * The bundle is dist/bench/node-child.mjs (not committed), built by scripts/build-cli.mjs as
 * `forkChild({ pairNode: true })` does for every benchmark.
 * Must not know: the node's internals (it asks the node's process for its memory over IPC).
 */

import { parseArgs } from "node:util";
import { startEngineChild, startNodeChild } from "./bench-setup.js";
import { parseNodeFlags, type BenchChild } from "./child-protocol.js";
import { runLoad } from "./load-generator.js";
import { loadAverage1m } from "./machine-info.js";
import { chatBody } from "./measure.js";

const MB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "256" },
    /** Extra flags for the node's process, e.g. `--max-semi-space-size=4` (space-separated). */
    "node-flags": { type: "string", default: "" },
    /** Only these ways: `tsx`, `bundle` (default both). */
    only: { type: "string" },
  },
  strict: true,
});
const nodeFlags = parseNodeFlags("node-flags", values["node-flags"]);
const streams = Number(values.streams);
if (!Number.isInteger(streams) || streams < 1 || streams > 512) throw new RangeError("--streams: 1..512");

const children: BenchChild[] = [];
process.on("exit", () => children.forEach((c) => c.kill()));
const mb = (n: number) => (n / MB).toFixed(1);
try {
  const engineUrl = (
    await startEngineChild(
      [{ model: "bench-5ms", tokenDelayMs: 5, maxTokens: 64, maxConcurrent: 1024 }],
      children,
    )
  )[0]!.url;
  console.log(
    `load average ${loadAverage1m().toFixed(2)}; ${streams} streams of 64 tokens at 5 ms/token; node flags: ${nodeFlags.join(" ") || "none"}`,
  );
  console.log(
    "| node | history writes | RSS idle | V8 heap total / used idle | external + arrayBuffers idle | RSS peak under load | RSS after load | V8 heap total after load |",
  );
  console.log("| --- | --- | --: | --: | --: | --: | --: | --: |");
  const ways = values.only === undefined ? [false, true] : [values.only === "bundle"];
  for (const bundled of ways)
    for (const onThread of [true, false]) {
      const { node, target } = await startNodeChild(
        {
          engines: [{ name: "emu", model: "bench-5ms", baseUrl: `${engineUrl}/v1`, maxConcurrent: 1024 }],
          historyOnThread: onThread,
        },
        { from: bundled ? "bundle" : "sources", extraExecArgv: ["--expose-gc", ...nodeFlags] },
        children,
      );
      const load = (n: number) =>
        runLoad({
          target,
          body: chatBody("bench-5ms", 64),
          concurrency: streams,
          requestsPerWorker: n,
          rampRequestsPerWorker: 1,
          staggerMs: 320,
          requestTimeoutMs: 60_000,
        });
      await load(1);
      const idle = (await node.call("memory")) as NodeJS.MemoryUsage;
      await node.sample("sample-start");
      const result = await load(2);
      const use = await node.sample("sample-stop");
      const after = (await node.call("memory")) as NodeJS.MemoryUsage;
      if (result.errors > 0) console.error(`  ! ${result.errors} errors: ${result.firstError}`);
      console.log(
        `| ${bundled ? "bundle, plain node" : "sources, tsx"} | ${onThread ? "worker thread" : "event loop"} | ` +
          `${mb(idle.rss)} | ${mb(idle.heapTotal)} / ${mb(idle.heapUsed)} | ${mb(idle.external + idle.arrayBuffers)} | ` +
          `${mb(use.rssPeakBytes)} | ${mb(after.rss)} | ${mb(after.heapTotal)} |`,
      );
      await node.stop();
      children.pop();
    }
  console.log(`load average ${loadAverage1m().toFixed(2)}`);
} finally {
  for (const c of [...children].reverse()) await c.stop();
}
process.exit(0);
