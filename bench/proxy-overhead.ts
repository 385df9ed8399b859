/**
 * Proxy-overhead benchmark (issue 4): what a PAIR node adds to a streamed chat completion compared
 * with talking to the engine directly, on loopback. Three processes, so none shares an event loop:
 * the engine emulators (child), the PAIR node (child), and the load generator (this process).
 * Every measurement runs against the engine directly (baseline) and through the node, interleaved in
 * the same run; the report gives medians across runs and PASS/MISS per target, and never fails the
 * process on a miss (a benchmark reports; it is not a test).
 *
 *   npx tsx bench/proxy-overhead.ts [--runs 5] [--quick] [--write] [--lockstep] [--bare-proxy]
 *                                   [--profile-node DIR] [--max-seconds 1200]
 *
 * --bare-proxy adds a third target, a bare node:http + undici relay (bare-proxy-child.ts), measured
 * in the same interleaving, as the reference for what any second hop costs on this machine.
 * Must not know: the node's internals (it is measured from outside, over HTTP).
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { checkRunsAndSeconds, guardChildren, startEngines } from "./bench-setup.js";
import { forkChild, type BenchChild, type ResourceSample } from "./child-protocol.js";
import type { BareProxyArg, BareProxyReady } from "./bare-proxy-child.js";
import type { EngineChildReady } from "./engine-child.js";
import { runLoad, type LoadResult, type Target } from "./load-generator.js";
import { loadAverage1m, machineInfo } from "./machine-info.js";
import { chatBody, warnErrors } from "./measure.js";
import type { NodeChildArg, NodeChildReady } from "./node-child.js";
import { cpuMs, nodeUse, streamMetrics, throughput } from "./load-metrics.js";
import { evaluateTargets, renderReport, spliceReport, type RunResult } from "./report.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DOC = resolve(ROOT, "bench/results.md");

const TOKENS = 64;
const TOKEN_DELAY_MS = 5;
const LEVELS = [1, 16, 64] as const;
const CPU_BOUND_CONCURRENCY = 64;
const MODEL_PACED = "bench-5ms";
const MODEL_CPU = "bench-0ms";
/** Slots on each emulator and on each engine of the node: well above the largest load, so nothing queues. */
const SLOTS = 256;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_RUNS = 50;
const BARE_PREFIX_PACED = "paced";
const BARE_PREFIX_CPU = "cpu";

interface Plan {
  readonly runs: number;
  readonly warmupMs: number;
  /** Measured streams per worker at each level (plus one unmeasured ramp-up stream per worker). */
  readonly perWorker: Readonly<Record<(typeof LEVELS)[number], number>>;
  readonly cpuBoundMs: number;
}

const FULL: Omit<Plan, "runs"> = { warmupMs: 2_000, perWorker: { 1: 20, 16: 6, 64: 5 }, cpuBoundMs: 5_000 };
const QUICK: Omit<Plan, "runs"> = { warmupMs: 1_000, perWorker: { 1: 5, 16: 2, 64: 2 }, cpuBoundMs: 2_000 };

/** Runs `load` while a child samples its resource use. */
async function sampled<T>(child: BenchChild, load: () => Promise<T>): Promise<[T, ResourceSample]> {
  await child.sample("sample-start");
  const value = await load();
  return [value, await child.sample("sample-stop")];
}

type Side = "direct" | "bare" | "node";

interface Targets {
  readonly sides: readonly Side[];
  readonly paced: Readonly<Partial<Record<Side, Target>>> & {
    readonly direct: Target;
    readonly node: Target;
  };
  readonly cpu: Readonly<Partial<Record<Side, Target>>> & { readonly direct: Target; readonly node: Target };
}

function targetsFor(engines: EngineChildReady, nodeUrl: string, bareUrl: string | undefined): Targets {
  const at = (url: string) => {
    const u = new URL(url);
    return { host: u.hostname, port: Number(u.port) };
  };
  const direct = (model: string): Target => {
    const e = engines.engines.find((x) => x.model === model);
    if (!e) throw new Error(`no engine for ${model}`);
    return { label: "direct", ...at(e.url), chatPath: "/v1/chat/completions", warmPath: "/v1/models" };
  };
  const node: Target = {
    label: "node",
    ...at(nodeUrl),
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
    mustHaveHeader: "x-pair-served-by",
  };
  const bare = (prefix: string): Target | undefined =>
    bareUrl === undefined
      ? undefined
      : {
          label: "bare",
          ...at(bareUrl),
          chatPath: `/${prefix}/v1/chat/completions`,
          warmPath: `/${prefix}/v1/models`,
        };
  const pacedBare = bare(BARE_PREFIX_PACED);
  const cpuBare = bare(BARE_PREFIX_CPU);
  return {
    sides: bareUrl === undefined ? ["direct", "node"] : ["direct", "bare", "node"],
    paced: { direct: direct(MODEL_PACED), node, ...(pacedBare ? { bare: pacedBare } : {}) },
    cpu: { direct: direct(MODEL_CPU), node, ...(cpuBare ? { bare: cpuBare } : {}) },
  };
}

/** Requests sent through the node so far: each leaves one row in its workload history. */
let nodeRequests = 0;

async function counted(target: Target, load: Promise<LoadResult>): Promise<LoadResult> {
  const result = await load;
  if (target.label === "node") nodeRequests += result.sent;
  return result;
}

async function streamingLoad(target: Target, concurrency: number, perWorker: number, lockstep: boolean) {
  return counted(
    target,
    runLoad({
      target,
      body: chatBody(MODEL_PACED, TOKENS),
      concurrency,
      requestsPerWorker: perWorker,
      rampRequestsPerWorker: 1,
      staggerMs: lockstep ? 0 : TOKENS * TOKEN_DELAY_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    }),
  );
}

async function cpuBoundLoad(target: Target, durationMs: number) {
  return counted(
    target,
    runLoad({
      target,
      body: chatBody(MODEL_CPU, TOKENS),
      concurrency: CPU_BOUND_CONCURRENCY,
      durationMs,
      rampRequestsPerWorker: 1,
      staggerMs: 0,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    }),
  );
}

async function warmUp(t: Targets, plan: Plan, lockstep: boolean): Promise<void> {
  for (const side of t.sides) {
    await cpuBoundLoad(t.cpu[side]!, plan.warmupMs);
    await streamingLoad(t.paced[side]!, 64, 1, lockstep);
  }
}

interface Processes {
  readonly engine: BenchChild;
  readonly node: BenchChild;
  readonly bare: BenchChild | undefined;
}

async function oneRun(
  t: Targets,
  plan: Plan,
  { engine, node, bare: bareChild }: Processes,
  lockstep: boolean,
  log: (line: string) => void,
): Promise<RunResult> {
  await sleep(300);
  const nodeRssIdleBytes = Number(await node.call("rss"));
  const streaming: RunResult["streaming"][number][] = [];
  for (const c of LEVELS) {
    // Interleaved in the order direct, (bare,) node; the node's resource use is sampled around its load.
    const direct = await streamingLoad(t.paced.direct, c, plan.perWorker[c], lockstep);
    warnErrors(`direct, ${c} streams`, direct);
    const pacedBare = t.paced.bare;
    const [bare, bareUse] =
      pacedBare && bareChild
        ? await sampled(bareChild, () => streamingLoad(pacedBare, c, plan.perWorker[c], lockstep))
        : [undefined, undefined];
    if (bare) warnErrors(`bare proxy, ${c} streams`, bare);
    const [viaNode, use] = await sampled(node, () =>
      streamingLoad(t.paced.node, c, plan.perWorker[c], lockstep),
    );
    warnErrors(`node, ${c} streams`, viaNode);
    const d = streamMetrics(direct);
    const n = streamMetrics(viaNode);
    streaming.push({
      concurrency: c,
      direct: d,
      node: n,
      // The window's CPU also paid for the unmeasured ramp-up streams, one per worker.
      nodeUse: nodeUse(use, n.streams + c),
      ...(bare && bareUse
        ? { bare: streamMetrics(bare), bareUse: nodeUse(bareUse, bare.samples.length + c) }
        : {}),
    });
    log(
      `  ${String(c).padStart(2)} streams: first chunk p50 ${d.firstP50.toFixed(2)} → ${n.firstP50.toFixed(2)} ms, ` +
        `p99 ${d.firstP99.toFixed(2)} → ${n.firstP99.toFixed(2)} ms; total p50 ${d.totalP50.toFixed(1)} → ` +
        `${n.totalP50.toFixed(1)} ms; node loop delay p99 ${use.loopDelayP99Ms.toFixed(1)} max ${use.loopDelayMaxMs.toFixed(1)} ms`,
    );
  }
  const [direct, engineDirect] = await sampled(engine, () => cpuBoundLoad(t.cpu.direct, plan.cpuBoundMs));
  warnErrors("direct, CPU-bound", direct);
  const cpuBare = t.cpu.bare;
  const [bare, bareUse] =
    cpuBare && bareChild
      ? await sampled(bareChild, () => cpuBoundLoad(cpuBare, plan.cpuBoundMs))
      : [undefined, undefined];
  if (bare) warnErrors("bare proxy, CPU-bound", bare);
  await engine.sample("sample-start");
  const [viaNode, nodeSample] = await sampled(node, () => cpuBoundLoad(t.cpu.node, plan.cpuBoundMs));
  const engineViaNode = await engine.sample("sample-stop");
  warnErrors("node, CPU-bound", viaNode);
  const rps = (r: LoadResult) => throughput(r).rps;
  const cpuBound = {
    direct: throughput(direct),
    node: throughput(viaNode),
    ...(bare && bareUse
      ? { bare: throughput(bare), bareUse: nodeUse(bareUse, bare.samples.length + CPU_BOUND_CONCURRENCY) }
      : {}),
    // The window's CPU also paid for the unmeasured ramp-up streams, one per worker.
    engineCpuMsPerStreamDirect: cpuMs(engineDirect) / (direct.samples.length + CPU_BOUND_CONCURRENCY),
    engineCpuMsPerStreamViaNode: cpuMs(engineViaNode) / (viaNode.samples.length + CPU_BOUND_CONCURRENCY),
    nodeUse: nodeUse(nodeSample, viaNode.samples.length + CPU_BOUND_CONCURRENCY),
  };
  log(
    `  CPU-bound: ${cpuBound.direct.rps.toFixed(0)} req/s direct, ` +
      (bare ? `${rps(bare).toFixed(0)} via bare proxy, ` : "") +
      `${cpuBound.node.rps.toFixed(0)} req/s via node (${(cpuBound.node.rps / cpuBound.direct.rps).toFixed(2)}×); ` +
      `node loop delay p99 ${nodeSample.loopDelayP99Ms.toFixed(1)} max ${nodeSample.loopDelayMaxMs.toFixed(1)} ms`,
  );
  return { streaming, cpuBound, nodeRssIdleBytes };
}

function readArgs() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" },
      quick: { type: "boolean", default: false },
      write: { type: "boolean", default: false },
      lockstep: { type: "boolean", default: false },
      "bare-proxy": { type: "boolean", default: false },
      "profile-node": { type: "string" },
      "max-seconds": { type: "string", default: "1200" },
    },
    strict: true,
  });
  const { runs, maxSeconds } = checkRunsAndSeconds(values, MAX_RUNS);
  const plan: Plan = { runs, ...(values.quick ? QUICK : FULL) };
  return { plan, values, maxSeconds };
}

async function main(): Promise<void> {
  const { plan, values, maxSeconds } = readArgs();
  const started = performance.now();
  const loadAtStart = loadAverage1m();
  const log = (line: string) => console.error(line);
  // Bounded in time, and never leaves a child behind (bench-setup.ts).
  const { children, disarm } = guardChildren("proxy-overhead", maxSeconds, log);

  try {
    const { child: engine, ready: engines } = await startEngines(
      {
        benchDir: HERE,
        root: ROOT,
        paced: { model: MODEL_PACED, tokenDelayMs: TOKEN_DELAY_MS },
        cpuModel: MODEL_CPU,
        tokens: TOKENS,
        slots: SLOTS,
      },
      children,
    );
    const profileDir = values["profile-node"];
    if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
    const nodeArg: NodeChildArg = {
      engines: engines.engines.map((e) => ({
        name: `emu-${e.model}`,
        model: e.model,
        baseUrl: `${e.url}/v1`,
        maxConcurrent: SLOTS,
      })),
    };
    const node = await forkChild({
      name: "pair-node",
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: nodeArg,
      cwd: ROOT,
      extraExecArgv: profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", resolve(profileDir)],
    });
    children.push(node);
    let bareUrl: string | undefined;
    let bare: BenchChild | undefined;
    if (values["bare-proxy"]) {
      const url = (model: string) => engines.engines.find((e) => e.model === model)?.url ?? "";
      const bareArg: BareProxyArg = {
        routes: { [BARE_PREFIX_PACED]: url(MODEL_PACED), [BARE_PREFIX_CPU]: url(MODEL_CPU) },
      };
      bare = await forkChild({
        name: "bare-proxy",
        script: resolve(HERE, "bare-proxy-child.ts"),
        arg: bareArg,
        cwd: ROOT,
      });
      children.push(bare);
      bareUrl = (bare.ready as BareProxyReady).url;
      log(`bare proxy pid ${bare.pid} at ${bareUrl}`);
    }
    const t = targetsFor(engines, (node.ready as NodeChildReady).url, bareUrl);
    log(`engine emulator pid ${engine.pid}, node pid ${node.pid} at ${(node.ready as NodeChildReady).url}`);

    log(`warm-up (${plan.warmupMs} ms CPU-bound and one round of 64 paced streams, per target)`);
    await warmUp(t, plan, values.lockstep);
    const runs: RunResult[] = [];
    for (let i = 0; i < plan.runs; i++) {
      log(`run ${i + 1}/${plan.runs} (node history rows so far: ${nodeRequests})`);
      runs.push(await oneRun(t, plan, { engine, node, bare }, values.lockstep, log));
    }
    for (const child of [...children].reverse()) await child.stop();

    const args = process.argv.slice(2).filter((a) => a !== "--write");
    const block = renderReport(runs, {
      command: ["npx tsx bench/proxy-overhead.ts", ...args].join(" "),
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      machine: machineInfo(),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAverage1m(),
      wallSeconds: (performance.now() - started) / 1000,
      runs: plan.runs,
      tokens: TOKENS,
      tokenDelayMs: TOKEN_DELAY_MS,
      cpuBoundSeconds: plan.cpuBoundMs / 1000,
      cpuBoundConcurrency: CPU_BOUND_CONCURRENCY,
      requestsPerLevel: LEVELS.map((c) => ({ concurrency: c, streams: c * plan.perWorker[c] })),
      lockstep: values.lockstep,
      nodeHistoryRows: nodeRequests,
    });
    console.log(block);
    console.log("");
    for (const target of evaluateTargets(runs))
      console.log(
        `${target.met ? "PASS" : "MISS"}  ${target.name}: ${target.measured} (goal ${target.goal})`,
      );
    if (values.write) {
      const doc = existsSync(DOC) ? readFileSync(DOC, "utf8") : undefined;
      writeFileSync(DOC, spliceReport(doc, block));
      log(`wrote ${DOC}`);
    }
    if (profileDir !== undefined) log(`node CPU profile(s) in ${resolve(profileDir)}`);
  } finally {
    disarm();
    await Promise.all(children.map((c) => c.stop()));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
