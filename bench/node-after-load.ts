/**
 * Does the node's memory return to its baseline after load (issue 12), and what it costs at 256
 * streams (issue 13)? One PAIR node (`bench/node-child.ts`, from its bundle as `pair` runs, or from
 * its sources) over the engine emulator; its RSS is read from outside (/proc/PID/status VmRSS) at
 * idle after a warm-up, at its peak while `--streams` paced streams run (64 tokens at 5 ms/token,
 * each worker twice), optionally at its peak during a CPU-bound load (64 streams at 0 ms/token for
 * `--cpu-seconds`, as `npm run bench` warms up; `--cpu-streams 256` as its 256-stream cell), then
 * once a second while the node idles for `--idle-seconds`. `--env` and `--node-flags` change how the
 * node's process starts (allocator variables, V8 flags; a value may be a path, as in
 * `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2`), to measure what gives memory back.
 *
 *   npx tsx bench/node-after-load.ts [--streams 256] [--cpu-seconds 0] [--cpu-streams 64]
 *        [--idle-seconds 30] [--from bundle|sources] [--env "MALLOC_ARENA_MAX=2"]
 *        [--node-flags "--flag=value"]
 *
 * Prints one markdown table row (MiB) and the RSS series after the load.
 * Must not know: the node's internals (it is measured from outside, over HTTP and /proc).
 */

import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startEngineChild, startNodeChild } from "./bench-setup.js";
import { parseNodeFlags, type BenchChild, type NodeCodeFrom } from "./child-protocol.js";
import { runLoad } from "./load-generator.js";
import { loadAverage1m } from "./machine-info.js";
import { chatBody, rssBytes, withPeakRss } from "./measure.js";

const MIB = 1024 * 1024;
const TOKENS = 64;

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "256" },
    "cpu-seconds": { type: "string", default: "0" },
    "cpu-streams": { type: "string", default: "64" },
    "idle-seconds": { type: "string", default: "30" },
    from: { type: "string", default: "bundle" },
    /** Environment of the node's process, `K=V K2=V2`. */
    env: { type: "string", default: "" },
    /** Extra flags for the node's process (space-separated). */
    "node-flags": { type: "string", default: "" },
  },
  strict: true,
});
const streams = Number(values.streams);
if (!Number.isInteger(streams) || streams < 1 || streams > 1024) throw new RangeError("--streams: 1..1024");
const cpuSeconds = Number(values["cpu-seconds"]);
if (!(cpuSeconds >= 0 && cpuSeconds <= 60)) throw new RangeError("--cpu-seconds: 0..60");
const cpuStreams = Number(values["cpu-streams"]);
if (!Number.isInteger(cpuStreams) || cpuStreams < 1 || cpuStreams > 1024)
  throw new RangeError("--cpu-streams: 1..1024");
const idleSeconds = Number(values["idle-seconds"]);
if (!Number.isInteger(idleSeconds) || idleSeconds < 1 || idleSeconds > 300)
  throw new RangeError("--idle-seconds: 1..300");
if (values.from !== "bundle" && values.from !== "sources") throw new RangeError("--from: bundle or sources");
const from: NodeCodeFrom = values.from;
const env = Object.fromEntries(
  values.env
    .split(" ")
    .filter((e) => e !== "")
    .map((e) => {
      const m = /^([A-Z_][A-Z0-9_]*)=([\w.:=,/-]*)$/.exec(e);
      if (m === null) throw new RangeError(`--env: K=V …, not ${e}`);
      return [m[1]!, m[2]!];
    }),
);
const nodeFlags = parseNodeFlags("node-flags", values["node-flags"]);

/** The process's user + system CPU time, in clock ticks (10 ms). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

const children: BenchChild[] = [];
process.on("exit", () => children.forEach((c) => c.kill()));
const mib = (bytes: number) => (bytes / MIB).toFixed(1);
try {
  const urls = await startEngineChild(
    [5, 0].map((d) => ({ model: `bench-${d}ms`, tokenDelayMs: d, maxTokens: TOKENS, maxConcurrent: 1024 })),
    children,
  );
  const { node, target } = await startNodeChild(
    {
      engines: urls.map((e) => ({
        name: `emu-${e.model}`,
        model: e.model,
        baseUrl: `${e.url}/v1`,
        maxConcurrent: 1024,
      })),
    },
    { from, env, extraExecArgv: nodeFlags },
    children,
  );
  const started = rssBytes(node.pid);
  const heap = async () => {
    const m = (await node.call("heap")) as NodeJS.MemoryUsage & { newSpace: number };
    return `rss ${mib(m.rss)}, heap total ${mib(m.heapTotal)} (new space ${mib(m.newSpace)}) used ${mib(m.heapUsed)}, external ${mib(m.external)}, array buffers ${mib(m.arrayBuffers)}`;
  };
  const paced = (concurrency: number, perWorker: number) =>
    runLoad({
      target,
      body: chatBody("bench-5ms", TOKENS),
      concurrency,
      requestsPerWorker: perWorker,
      rampRequestsPerWorker: 0,
      staggerMs: TOKENS * 5,
      requestTimeoutMs: 60_000,
    });
  console.log(
    `load average ${loadAverage1m().toFixed(2)}; node from ${from}; env ${values.env || "none"}; flags ${nodeFlags.join(" ") || "none"}`,
  );
  await paced(16, 1);
  await sleep(2_000);
  const idle = rssBytes(node.pid);
  console.log(`idle: ${await heap()}`);
  const [load, [peak]] = await withPeakRss([node.pid], () => paced(streams, 2));
  if (load.errors > 0) console.error(`  ! ${load.errors} errors: ${load.firstError}`);
  let cpuPeak = NaN;
  if (cpuSeconds > 0) {
    const cpu0 = cpuTicks(node.pid);
    const [cpu, [p]] = await withPeakRss([node.pid], () =>
      runLoad({
        target,
        body: chatBody("bench-0ms", TOKENS),
        concurrency: cpuStreams,
        durationMs: cpuSeconds * 1000,
        rampRequestsPerWorker: 0,
        staggerMs: 0,
        requestTimeoutMs: 60_000,
      }),
    );
    if (cpu.errors > 0) console.error(`  ! ${cpu.errors} errors (CPU-bound): ${cpu.firstError}`);
    cpuPeak = p!;
    const ms = (cpuTicks(node.pid) - cpu0) * 10;
    console.log(
      `CPU-bound: ${cpu.samples.length} requests in ${(cpu.elapsedMs / 1000).toFixed(1)} s, ` +
        `${(cpu.samples.length / (cpu.elapsedMs / 1000)).toFixed(0)} req/s, node CPU ${(ms / cpu.samples.length).toFixed(3)} ms per request`,
    );
  }
  const heapAfter = await heap();
  const series: number[] = [];
  for (let s = 1; s <= idleSeconds; s++) {
    await sleep(1_000);
    series.push(rssBytes(node.pid));
  }
  console.log(`right after the load: ${heapAfter}`);
  console.log(`${idleSeconds} s later: ${await heap()}`);
  const at = (s: number) => mib(series[Math.min(s, series.length) - 1]!);
  console.log(
    "| node | env / flags | RSS started | RSS idle | peak, streams | peak, CPU-bound | after 1 s | 5 s | 10 s | 20 s | 30 s | lowest after |",
  );
  console.log("| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
  console.log(
    `| ${from} | ${[values.env, ...nodeFlags].filter((x) => x !== "").join(" ") || "–"} | ${mib(started)} | ${mib(idle)} | ` +
      `${mib(peak!)} (${streams}) | ${Number.isNaN(cpuPeak) ? "–" : mib(cpuPeak)} | ${at(1)} | ${at(5)} | ${at(10)} | ${at(20)} | ${at(30)} | ` +
      `${mib(Math.min(...series))} |`,
  );
  console.log(`after the load, every second: ${series.map(mib).join(" ")}`);
  console.log(`load average ${loadAverage1m().toFixed(2)}`);
} finally {
  for (const c of [...children].reverse()) await c.stop();
}
process.exit(0);
