/**
 * Peer-hop benchmark (issue 5): what forwarding through a paired node adds to a streamed chat
 * completion. Node B serves the models from its engine; node A has no engine and is paired with B by
 * PIN, so A forwards to B over the cluster's mTLS. Four processes, so none shares an event loop: the
 * engine emulators, node B, node A (children) and the load generator (this process). Every load runs
 * straight to B (the baseline: client → B → engine) and through A (client → A → B → engine),
 * interleaved in the same run, the order alternating between runs; every reply must say it was served
 * by B. The report gives medians across runs and PASS/MISS against the target, and never fails the
 * process on a miss (a benchmark reports; it is not a test).
 *
 *   npx tsx bench/peer-hop.ts [--runs 5] [--quick] [--write] [--lockstep] [--bare-proxy]
 *                             [--profile-nodes DIR] [--max-seconds 1200]
 *
 * --bare-proxy adds a third side, client → bare node:http + undici relay → B (bare-proxy-child.ts,
 * plain HTTP), measured between the other two: what any extra process in the path costs here.
 *
 * Must not know: the nodes' internals (they are driven from outside, over HTTP, as a user would).
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { checkRunsAndSeconds, guardChildren, startEngines } from "./bench-setup.js";
import { forkChild, type BenchChild, type ResourceSample } from "./child-protocol.js";
import type { BareProxyArg, BareProxyReady } from "./bare-proxy-child.js";
import { runLoad, type LoadResult, type Target } from "./load-generator.js";
import { nodeUse, streamMetrics, throughput } from "./load-metrics.js";
import { loadAverage1m, machineInfo } from "./machine-info.js";
import { chatBody, warnErrors } from "./measure.js";
import type { NodeChildArg, NodeChildReady } from "./node-child.js";
import {
  evaluatePeerHopTargets,
  renderPeerHopReport,
  splicePeerHopReport,
  type PeerHopLevel,
  type PeerHopRun,
} from "./peer-hop-report.js";
import { pairNodes, waitUntilSees } from "./peer-pairing.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DOC = resolve(ROOT, "bench/results.md");

const TOKENS = 64;
const TOKEN_DELAY_MS = 5;
const LEVELS = [1, 16, 64] as const;
const CPU_BOUND_CONCURRENCY = 64;
const MODEL_PACED = "bench-5ms";
const MODEL_CPU = "bench-0ms";
const NODE_A = "bench-a";
const NODE_B = "bench-b";
/** A's membership refresh: the node's default, stated so the report can say it. */
const MEMBERSHIP_REFRESH_MS = 5_000;
/** Longest wait, after the join, for A to list B's models. */
const SEES_WITHIN_MS = 3 * MEMBERSHIP_REFRESH_MS;
/** Slots on each emulator and on B's engines: well above the largest load, so nothing queues. */
const SLOTS = 256;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_RUNS = 50;

interface Plan {
  readonly runs: number;
  readonly warmupMs: number;
  /** Measured streams per worker at each level (plus one unmeasured ramp-up stream per worker). */
  readonly perWorker: Readonly<Record<(typeof LEVELS)[number], number>>;
  readonly cpuBoundMs: number;
}

const FULL: Omit<Plan, "runs"> = { warmupMs: 2_000, perWorker: { 1: 20, 16: 6, 64: 5 }, cpuBoundMs: 5_000 };
const QUICK: Omit<Plan, "runs"> = { warmupMs: 1_000, perWorker: { 1: 5, 16: 2, 64: 2 }, cpuBoundMs: 2_000 };

type Side = "direct" | "bare" | "viaPeer";
/** The bare relay's route prefix to B. */
const BARE_PREFIX = "b";

/** Client → B, client → A (→ B) and, with a bare relay, client → relay (→ B): all served by B. */
type Targets = Partial<Record<Side, Target>> & Record<"direct" | "viaPeer", Target>;

function targetsFor(a: NodeChildReady, b: NodeChildReady, bareUrl: string | undefined): Targets {
  const at = (url: string) => {
    const u = new URL(url);
    return { host: u.hostname, port: Number(u.port) };
  };
  const common = {
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
    mustHaveHeader: "x-pair-served-by",
    mustHaveHeaderValue: b.name,
  } as const;
  return {
    direct: { label: "node", ...at(b.url), ...common },
    viaPeer: { label: "via-peer", ...at(a.url), ...common },
    ...(bareUrl === undefined
      ? {}
      : {
          bare: {
            label: "bare",
            ...at(bareUrl),
            ...common,
            chatPath: `/${BARE_PREFIX}/v1/chat/completions`,
            warmPath: `/${BARE_PREFIX}/v1/models`,
          },
        }),
  };
}

interface Sampled {
  readonly result: LoadResult;
  readonly a: ResourceSample;
  readonly b: ResourceSample;
  /** The bare relay's process, when there is one. */
  readonly bare: ResourceSample | undefined;
}

/** Runs `load` while both nodes (and the bare relay, if any) sample their resource use. */
async function sampled(nodes: Nodes, load: () => Promise<LoadResult>): Promise<Sampled> {
  const all = [nodes.a, nodes.b, ...(nodes.bare ? [nodes.bare] : [])];
  await Promise.all(all.map((c) => c.sample("sample-start")));
  const result = await load();
  const [a, b, bare] = await Promise.all(all.map((c) => c.sample("sample-stop")));
  return { result, a: a!, b: b!, bare };
}

function streamingLoad(target: Target, concurrency: number, perWorker: number, lockstep: boolean) {
  return runLoad({
    target,
    body: chatBody(MODEL_PACED, TOKENS),
    concurrency,
    requestsPerWorker: perWorker,
    rampRequestsPerWorker: 1,
    staggerMs: lockstep ? 0 : TOKENS * TOKEN_DELAY_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
}

function cpuBoundLoad(target: Target, durationMs: number) {
  return runLoad({
    target,
    body: chatBody(MODEL_CPU, TOKENS),
    concurrency: CPU_BOUND_CONCURRENCY,
    durationMs,
    rampRequestsPerWorker: 1,
    staggerMs: 0,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
}

interface Nodes {
  readonly a: BenchChild;
  readonly b: BenchChild;
  readonly bare: BenchChild | undefined;
}

type BySide = Partial<Record<Side, Sampled>> & Record<"direct" | "viaPeer", Sampled>;

/** One load on each side, in `order`, each sampled on the nodes. */
async function everySide(order: readonly Side[], nodes: Nodes, load: (side: Side) => Promise<LoadResult>) {
  const out: Partial<Record<Side, Sampled>> = {};
  for (const side of order) out[side] = await sampled(nodes, () => load(side));
  return out as BySide;
}

async function oneRun(
  t: Targets,
  plan: Plan,
  nodes: Nodes,
  index: number,
  lockstep: boolean,
  log: (line: string) => void,
): Promise<PeerHopRun> {
  await sleep(300);
  // B first in even runs, A first in odd ones; the bare relay, if any, in between.
  const sides: Side[] = t.bare === undefined ? ["direct", "viaPeer"] : ["direct", "bare", "viaPeer"];
  const order = index % 2 === 0 ? sides : [...sides].reverse();
  const target = (side: Side): Target => {
    const found = t[side];
    if (found === undefined) throw new Error(`peer-hop: no target for side ${side}`);
    return found;
  };
  const streaming: PeerHopLevel[] = [];
  for (const c of LEVELS) {
    const r = await everySide(order, nodes, (side) =>
      streamingLoad(target(side), c, plan.perWorker[c], lockstep),
    );
    warnErrors(`B, ${c} streams`, r.direct.result);
    warnErrors(`A → B, ${c} streams`, r.viaPeer.result);
    if (r.bare) warnErrors(`bare relay → B, ${c} streams`, r.bare.result);
    const d = streamMetrics(r.direct.result);
    const v = streamMetrics(r.viaPeer.result);
    const aVia = r.viaPeer.a;
    const bare = r.bare;
    // Each window's CPU also paid for the unmeasured ramp-up streams, one per worker.
    streaming.push({
      concurrency: c,
      direct: d,
      viaPeer: v,
      aUse: nodeUse(aVia, v.streams + c),
      bUseDirect: nodeUse(r.direct.b, d.streams + c),
      bUseViaPeer: nodeUse(r.viaPeer.b, v.streams + c),
      ...(bare?.bare === undefined
        ? {}
        : {
            bare: streamMetrics(bare.result),
            bareUse: nodeUse(bare.bare, bare.result.samples.length + c),
          }),
    });
    log(
      `  ${String(c).padStart(2)} streams: first chunk p50 ${d.firstP50.toFixed(2)} → ${v.firstP50.toFixed(2)} ms, ` +
        `p99 ${d.firstP99.toFixed(2)} → ${v.firstP99.toFixed(2)} ms; total p50 ${d.totalP50.toFixed(1)} → ` +
        `${v.totalP50.toFixed(1)} ms; A loop delay p99 ${aVia.loopDelayP99Ms.toFixed(1)} max ${aVia.loopDelayMaxMs.toFixed(1)} ms`,
    );
  }
  const r = await everySide(order, nodes, (side) => cpuBoundLoad(target(side), plan.cpuBoundMs));
  warnErrors("B, CPU-bound", r.direct.result);
  warnErrors("A → B, CPU-bound", r.viaPeer.result);
  if (r.bare) warnErrors("bare relay → B, CPU-bound", r.bare.result);
  // Each window's CPU also paid for the unmeasured ramp-up streams, one per worker.
  const per = (result: LoadResult) => result.samples.length + CPU_BOUND_CONCURRENCY;
  const aVia = r.viaPeer.a;
  const bare = r.bare;
  const cpuBound: PeerHopRun["cpuBound"] = {
    direct: throughput(r.direct.result),
    viaPeer: throughput(r.viaPeer.result),
    aUse: nodeUse(aVia, per(r.viaPeer.result)),
    bUseDirect: nodeUse(r.direct.b, per(r.direct.result)),
    bUseViaPeer: nodeUse(r.viaPeer.b, per(r.viaPeer.result)),
    ...(bare?.bare === undefined
      ? {}
      : { bare: throughput(bare.result), bareUse: nodeUse(bare.bare, per(bare.result)) }),
  };
  log(
    `  CPU-bound: ${cpuBound.direct.rps.toFixed(0)} req/s to B, ` +
      (cpuBound.bare ? `${cpuBound.bare.rps.toFixed(0)} through the bare relay, ` : "") +
      `${cpuBound.viaPeer.rps.toFixed(0)} through A (${(cpuBound.viaPeer.rps / cpuBound.direct.rps).toFixed(2)}×); ` +
      `A loop delay p99 ${aVia.loopDelayP99Ms.toFixed(1)} max ${aVia.loopDelayMaxMs.toFixed(1)} ms`,
  );
  return { order: order[0] === "direct" ? "direct-first" : "peer-first", streaming, cpuBound };
}

function readArgs() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" },
      quick: { type: "boolean", default: false },
      write: { type: "boolean", default: false },
      lockstep: { type: "boolean", default: false },
      "bare-proxy": { type: "boolean", default: false },
      "profile-nodes": { type: "string" },
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
  const { children, disarm } = guardChildren("peer-hop", maxSeconds, log);

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
    const profileDir = values["profile-nodes"];
    const profileArgs = (name: string): string[] => {
      if (profileDir === undefined) return [];
      const dir = join(resolve(profileDir), name);
      mkdirSync(dir, { recursive: true });
      return ["--cpu-prof", "--cpu-prof-dir", dir];
    };
    const bArg: NodeChildArg = {
      name: NODE_B,
      membershipRefreshMs: MEMBERSHIP_REFRESH_MS,
      engines: engines.engines.map((e) => ({
        name: `emu-${e.model}`,
        model: e.model,
        baseUrl: `${e.url}/v1`,
        maxConcurrent: SLOTS,
      })),
    };
    const b = await forkChild({
      name: NODE_B,
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: bArg,
      cwd: ROOT,
      extraExecArgv: profileArgs(NODE_B),
    });
    children.push(b);
    const aArg: NodeChildArg = { name: NODE_A, membershipRefreshMs: MEMBERSHIP_REFRESH_MS, engines: [] };
    const a = await forkChild({
      name: NODE_A,
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: aArg,
      cwd: ROOT,
      extraExecArgv: profileArgs(NODE_A),
    });
    children.push(a);
    const aReady = a.ready as NodeChildReady;
    const bReady = b.ready as NodeChildReady;
    let bare: BenchChild | undefined;
    if (values["bare-proxy"]) {
      const bareArg: BareProxyArg = { routes: { [BARE_PREFIX]: bReady.url } };
      bare = await forkChild({
        name: "bare-proxy",
        script: resolve(HERE, "bare-proxy-child.ts"),
        arg: bareArg,
        cwd: ROOT,
      });
      children.push(bare);
      log(`bare relay pid ${bare.pid} at ${(bare.ready as BareProxyReady).url}, in front of ${NODE_B}`);
    }
    log(
      `engine emulator pid ${engine.pid}; ${NODE_B} pid ${b.pid} at ${bReady.url}; ${NODE_A} pid ${a.pid} at ${aReady.url}`,
    );

    await pairNodes(aReady, bReady);
    const pairedToServingMs = await waitUntilSees(
      aReady,
      bReady.name,
      [MODEL_PACED, MODEL_CPU],
      SEES_WITHIN_MS,
    );
    log(
      `${NODE_A} paired with ${NODE_B}; it listed ${NODE_B}'s models after ${Math.round(pairedToServingMs)} ms`,
    );

    const bareUrl = bare === undefined ? undefined : (bare.ready as BareProxyReady).url;
    const t = targetsFor(aReady, bReady, bareUrl);
    log(`warm-up (${plan.warmupMs} ms CPU-bound and one round of 64 paced streams, per side)`);
    for (const target of [t.direct, t.bare, t.viaPeer]) {
      if (target === undefined) continue;
      warnErrors(`warm-up ${target.label}`, await cpuBoundLoad(target, plan.warmupMs));
      warnErrors(`warm-up ${target.label}`, await streamingLoad(target, 64, 1, values.lockstep));
    }
    const runs: PeerHopRun[] = [];
    for (let i = 0; i < plan.runs; i++) {
      log(`run ${i + 1}/${plan.runs}`);
      runs.push(await oneRun(t, plan, { a, b, bare }, i, values.lockstep, log));
    }
    for (const child of [...children].reverse()) await child.stop();

    const args = process.argv.slice(2).filter((x) => x !== "--write");
    const block = renderPeerHopReport(runs, {
      command: ["npx tsx bench/peer-hop.ts", ...args].join(" "),
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
      nodeA: NODE_A,
      nodeB: NODE_B,
      pairedToServingMs,
      membershipRefreshMs: MEMBERSHIP_REFRESH_MS,
    });
    console.log(block);
    console.log("");
    for (const target of evaluatePeerHopTargets(runs))
      console.log(
        `${target.met ? "PASS" : "MISS"}  ${target.name}: ${target.measured} (goal ${target.goal})`,
      );
    if (values.write) {
      const doc = existsSync(DOC) ? readFileSync(DOC, "utf8") : undefined;
      writeFileSync(DOC, splicePeerHopReport(doc, block));
      log(`wrote ${DOC}`);
    }
    if (profileDir !== undefined) log(`node CPU profiles in ${resolve(profileDir)}/{${NODE_A},${NODE_B}}`);
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
