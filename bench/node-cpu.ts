/**
 * A quick look at one figure: the PAIR node's CPU time per request under CPU-bound load (64 streams
 * of 64 tokens at 0 ms/token), against a bare node:http + undici relay in the same run. Faster and
 * steadier than the full proxy-overhead benchmark, for measuring a change to the node's request path
 * before and after; it does not replace that benchmark (no latencies, no report).
 *
 *   npx tsx bench/node-cpu.ts [--rounds 3] [--seconds 3] [--profile DIR] [--history-thread]
 *                             [--node-flags=--max-semi-space-size=2] [--base DIR] [--token-ms 5]
 *                             [--env MALLOC_ARENA_MAX=2] [--base-node-flags=--heap-growing-percent=50]
 *
 * --token-ms N: paced instead of CPU-bound (64 streams of 64 tokens, N ms apart, workers' first
 * streams spread over one stream's duration, for about --seconds): the CPU per stream is then mostly
 * per chunk (one read from the engine, one write to the client, per token).
 *
 * --profile DIR: V8 CPU profiles of the node (DIR/node) and of the bare relay (DIR/bare), to compare
 * with `bench/summarize-cpu-profile.ts`.
 *
 * --base DIR: a second node, started from another checkout of this repository (e.g. a `git worktree`
 * of the commit before a change, with its node_modules), loaded in the same rounds right before or
 * after this one (the order alternates): on a machine shared with other work, before and after are
 * compared within each round, not across runs minutes apart.
 *
 * --env NAME=VALUE[,NAME=VALUE]: environment variables for the measured node only (not the base):
 * with `--base` set to this same checkout, the same code with and without them, in the same rounds.
 *
 * --base-node-flags: flags for the base node only, after --node-flags (V8 takes a flag's last value):
 * with `--base` set to this same checkout, the same code under two V8 settings, in the same rounds.
 *
 * Each round loads the engine directly, the bare relay, then the node, one after the other, and
 * prints requests/s and CPU per request of the relay and the node. Three processes, as in
 * proxy-overhead: the emulator, the node and the relay are children; the load is this process.
 * Must not know: the node's internals (it is measured from outside, over HTTP).
 */

import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { BareProxyArg, BareProxyReady } from "./bare-proxy-child.js";
import { forkChild, parseNodeFlags, type BenchChild } from "./child-protocol.js";
import type { EngineChildArg, EngineChildReady } from "./engine-child.js";
import { runLoad, type Target } from "./load-generator.js";
import { cpuMs } from "./load-metrics.js";
import { loadAverage1m } from "./machine-info.js";
import type { NodeChildArg, NodeChildReady } from "./node-child.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const TOKENS = 64;
const CONCURRENCY = 64;
const SLOTS = 256;

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "3" },
    profile: { type: "string" },
    /** The node's history written on its worker thread instead of the event loop. */
    "history-thread": { type: "boolean", default: false },
    /** Extra flags for the node's process, e.g. `--node-flags=--max-semi-space-size=2`. */
    "node-flags": { type: "string", default: "" },
    /** Another checkout's root: its node is measured in the same rounds as "base". */
    base: { type: "string" },
    "token-ms": { type: "string", default: "0" },
    /** Environment variables for the measured node only, e.g. `--env MALLOC_ARENA_MAX=2`. */
    env: { type: "string", default: "" },
    /** Extra flags for the base node only, after --node-flags. */
    "base-node-flags": { type: "string", default: "" },
  },
  strict: true,
});
const rounds = Number(values.rounds);
const nodeFlags = parseNodeFlags("node-flags", values["node-flags"]);
const baseNodeFlags = parseNodeFlags("base-node-flags", values["base-node-flags"]);
if (baseNodeFlags.length > 0 && values.base === undefined)
  throw new RangeError("--base-node-flags needs --base (e.g. --base . for this checkout)");
const nodeEnv = Object.fromEntries(
  values.env
    .split(",")
    .filter((kv) => kv !== "")
    .map((kv) => {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(kv);
      if (m === null) throw new RangeError(`--env: NAME=VALUE[,NAME=VALUE], got ${kv}`);
      return [m[1]!, m[2]!];
    }),
);
const durationMs = Number(values.seconds) * 1000;
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new RangeError("--rounds: 1..20");
if (!(durationMs >= 500 && durationMs <= 60_000)) throw new RangeError("--seconds: 0.5..60");
const tokenMs = Number(values["token-ms"]);
if (!Number.isInteger(tokenMs) || tokenMs < 0 || tokenMs > 50) throw new RangeError("--token-ms: 0..50");
const MODEL = `bench-${tokenMs}ms`;
/** Paced: streams per worker for about `ms` of load (one stream lasts TOKENS × tokenMs). */
const streamsPerWorker = (ms: number) => Math.max(1, Math.round(ms / (TOKENS * tokenMs)));

const body = JSON.stringify({
  model: MODEL,
  messages: [{ role: "user", content: "Tell me about proxies." }],
  stream: true,
  max_tokens: TOKENS,
});

const at = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

async function load(target: Target, ms: number, child?: BenchChild) {
  await child?.sample("sample-start");
  const result = await runLoad({
    target,
    body,
    concurrency: CONCURRENCY,
    rampRequestsPerWorker: 1,
    requestTimeoutMs: 30_000,
    ...(tokenMs === 0
      ? { durationMs: ms, staggerMs: 0 }
      : { requestsPerWorker: streamsPerWorker(ms), staggerMs: TOKENS * tokenMs }),
  });
  const use = await child?.sample("sample-stop");
  if (result.errors > 0) console.error(`  ! ${target.label}: ${result.errors} errors: ${result.firstError}`);
  const rps = (result.samples.length * 1000) / result.elapsedMs;
  const perRequest = use === undefined ? undefined : cpuMs(use) / (result.samples.length + CONCURRENCY);
  const rssMb = use === undefined ? undefined : use.rssPeakBytes / 2 ** 20;
  return { rps, perRequest, rssMb };
}

const children: BenchChild[] = [];
process.on("exit", () => children.forEach((c) => c.kill()));
try {
  const engineArg: EngineChildArg = {
    engines: [{ model: MODEL, tokenDelayMs: tokenMs, maxTokens: TOKENS, maxConcurrent: SLOTS }],
  };
  const engine = await forkChild({
    name: "engine",
    script: resolve(HERE, "engine-child.ts"),
    arg: engineArg,
    cwd: ROOT,
  });
  children.push(engine);
  const engineUrl = (engine.ready as EngineChildReady).engines[0]!.url;
  const profileDir = values.profile;
  const profiled = (name: string): string[] => {
    if (profileDir === undefined) return [];
    mkdirSync(resolve(profileDir, name), { recursive: true });
    return ["--cpu-prof", "--cpu-prof-dir", resolve(profileDir, name)];
  };
  const nodeArg: NodeChildArg = {
    engines: [{ name: "emu", model: MODEL, baseUrl: `${engineUrl}/v1`, maxConcurrent: SLOTS }],
    historyOnThread: values["history-thread"],
  };
  const node = await forkChild({
    name: "node",
    script: resolve(HERE, "node-child.ts"),
    pairNode: true,
    arg: nodeArg,
    cwd: ROOT,
    env: nodeEnv,
    extraExecArgv: [...profiled("node"), ...nodeFlags],
  });
  children.push(node);
  const baseRoot = values.base === undefined ? undefined : resolve(values.base);
  const base =
    baseRoot === undefined
      ? undefined
      : await forkChild({
          name: "base",
          script: resolve(baseRoot, "bench", "node-child.ts"),
          pairNode: true,
          arg: nodeArg,
          cwd: baseRoot,
          extraExecArgv: [...nodeFlags, ...baseNodeFlags],
        });
  if (base !== undefined) children.push(base);
  const bareArg: BareProxyArg = { routes: { cpu: engineUrl } };
  const bare = await forkChild({
    name: "bare",
    script: resolve(HERE, "bare-proxy-child.ts"),
    arg: bareArg,
    cwd: ROOT,
    extraExecArgv: profiled("bare"),
  });
  children.push(bare);
  const direct: Target = {
    label: "direct",
    ...at(engineUrl),
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
  };
  const viaBare: Target = {
    label: "bare",
    ...at((bare.ready as BareProxyReady).url),
    chatPath: "/cpu/v1/chat/completions",
    warmPath: "/cpu/v1/models",
  };
  const viaNode: Target = {
    label: "node",
    ...at((node.ready as NodeChildReady).url),
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
    mustHaveHeader: "x-pair-served-by",
  };
  const viaBase: Target | undefined =
    base === undefined
      ? undefined
      : {
          label: "node",
          ...at((base.ready as NodeChildReady).url),
          chatPath: "/v1/chat/completions",
          warmPath: "/v1/models",
          mustHaveHeader: "x-pair-served-by",
        };
  console.error(`load average ${loadAverage1m().toFixed(2)}; warm-up`);
  for (const t of [direct, viaBare, viaNode, ...(viaBase === undefined ? [] : [viaBase])])
    await load(t, 1_500);
  const nodeCpu: number[] = [];
  const ratios = { node: [] as number[], base: [] as number[], rps: [] as number[], baseRps: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    const d = await load(direct, durationMs);
    const b = await load(viaBare, durationMs, bare);
    // With a base, the two nodes take turns going first.
    const baseFirst = base !== undefined && i % 2 === 1;
    const o = baseFirst && viaBase !== undefined ? await load(viaBase, durationMs, base) : undefined;
    const n = await load(viaNode, durationMs, node);
    const other =
      o ?? (base !== undefined && viaBase !== undefined ? await load(viaBase, durationMs, base) : undefined);
    nodeCpu.push(n.perRequest!);
    ratios.node.push(n.perRequest! / b.perRequest!);
    ratios.rps.push(n.rps / d.rps);
    if (other !== undefined) {
      ratios.base.push(other.perRequest! / b.perRequest!);
      ratios.baseRps.push(other.rps / d.rps);
    }
    console.log(
      `round ${i + 1}: req/s direct ${d.rps.toFixed(0)}, bare ${b.rps.toFixed(0)} (${(b.rps / d.rps).toFixed(2)}×), ` +
        `node ${n.rps.toFixed(0)} (${(n.rps / d.rps).toFixed(2)}×); CPU/request bare ${b.perRequest!.toFixed(3)} ms, ` +
        `node ${n.perRequest!.toFixed(3)} ms, RSS peak ${n.rssMb!.toFixed(1)} MiB` +
        (other === undefined
          ? ""
          : `; base node ${other.rps.toFixed(0)} req/s (${(other.rps / d.rps).toFixed(2)}×), ` +
            `${other.perRequest!.toFixed(3)} ms/request, RSS peak ${other.rssMb!.toFixed(1)} MiB`),
    );
  }
  const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const sorted = [...nodeCpu].sort((a, b) => a - b);
  console.log(
    `node CPU/request median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)} ms, min ${sorted[0]!.toFixed(3)} ms; ` +
      `node ÷ bare median ${median(ratios.node).toFixed(2)}×, req/s ÷ direct median ${median(ratios.rps).toFixed(2)}×` +
      (ratios.base.length === 0
        ? ""
        : `; base ÷ bare median ${median(ratios.base).toFixed(2)}×, base req/s ÷ direct median ` +
          `${median(ratios.baseRps).toFixed(2)}×`) +
      `; load average ${loadAverage1m().toFixed(2)}`,
  );
} finally {
  for (const c of [...children].reverse()) await c.stop();
}
process.exit(0);
