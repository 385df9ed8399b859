/**
 * The comparison benchmark, `npm run bench`: a streamed chat completion against the engine emulator
 * directly (the limit), through nginx (`proxy_buffering off`), and through PAIR — local route, peer hop
 * (node A → node B over mTLS) and rented route (node → HTTPS + bearer to an emulator attached as an
 * openai-compatible rented node) — each beside its baseline, the same hops done by bare relays
 * (bare-baselines.ts), at 1, 16, 64 and 256 concurrent streams with 5 ms and 0 ms per token, in
 * interleaved rounds.
 * Each process runs alone (engines, the local route's node, node B, node A, bare relays, nginx, load
 * generator); all listen on 127.0.0.1 and are stopped at the end, on a signal, or by the watchdog.
 *
 *   npm run bench -- [--quick] [--rounds 3] [--write] [--no-nginx] [--max-seconds 1500]
 *                    [--levels 1,16,64,256] [--delays 5,0] [--no-idle-collect] [--history-thread]
 *
 * Reports; never fails on a missed target (exit 0), only when the benchmark itself failed.
 * Must not know: the node's internals (it is measured from outside, over HTTP).
 */

import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createTestCa } from "@pair/testkit";
import { checkRunsAndSeconds, guardChildren } from "./bench-setup.js";
import { forkChild, type BenchChild } from "./child-protocol.js";
import { bareUrl, startBareBaselines } from "./bare-baselines.js";
import {
  evaluateCompare,
  renderCompare,
  spliceCompare,
  TARGET_NAMES,
  type Cell,
  type TargetName,
} from "./compare-report.js";
import type { EngineChildArg, EngineChildReady } from "./engine-child.js";
import { runLoad, type Target } from "./load-generator.js";
import { loadAverage1m, machineInfo } from "./machine-info.js";
import {
  chatBody,
  loadFigures,
  medianFigures,
  warnErrors,
  withPeakRss,
  type LoadFigures,
} from "./measure.js";
import { findNginx, NGINX_MISSING, startNginx, type RunningNginx } from "./nginx.js";
import type { NodeChildArg, NodeChildReady } from "./node-child.js";
import { pairNodes, waitUntilSees } from "./peer-pairing.js";
import { median } from "./stats.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DOC = resolve(ROOT, "docs/performance.md");

const TOKENS = 64;
const DELAYS = [5, 0] as const;
const LEVELS = [1, 16, 64, 256] as const;
/** Slots everywhere above the largest load, so nothing queues. */
const SLOTS = 512;
const REQUEST_TIMEOUT_MS = 60_000;
const MEMBERSHIP_REFRESH_MS = 5_000;
const NODE_A = "bench-a";
const NODE_B = "bench-b";
const NODE_LOCAL = "bench-local";
const MAX_ROUNDS = 20;

type Level = (typeof LEVELS)[number];
interface Plan {
  readonly rounds: number;
  /** Paced (5 ms) load: measured streams per worker at each level (plus one unmeasured ramp-up). */
  readonly perWorker: Readonly<Record<Level, number>>;
  /** CPU-bound (0 ms) load: how long each cell runs. */
  readonly cpuMs: number;
  readonly warmupMs: number;
}
const FULL: Omit<Plan, "rounds"> = {
  // 64 streams: 4 each (256 samples a round), so a round's p99 is its 3rd-slowest stream, not its 2nd.
  perWorker: { 1: 12, 16: 4, 64: 4, 256: 1 },
  cpuMs: 2_000,
  warmupMs: 1_500,
};
const QUICK: Omit<Plan, "rounds"> = { perWorker: { 1: 3, 16: 1, 64: 1, 256: 1 }, cpuMs: 600, warmupMs: 500 };

const model = (delayMs: number, rented: boolean) => `${rented ? "rent" : "bench"}-${delayMs}ms`;

interface Measured {
  readonly target: Target;
  readonly body: (delayMs: number) => string;
  readonly path: (delayMs: number) => string;
  /** The processes whose RSS is sampled; the first is the one reported. */
  readonly pids: readonly number[];
}

function readArgs() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string" },
      quick: { type: "boolean", default: false },
      write: { type: "boolean", default: false },
      "no-nginx": { type: "boolean", default: false },
      "max-seconds": { type: "string", default: "1500" },
      levels: { type: "string" },
      delays: { type: "string" },
      "no-idle-collect": { type: "boolean", default: false },
      "history-thread": { type: "boolean", default: false },
    },
    strict: true,
  });
  const { runs, maxSeconds } = checkRunsAndSeconds(
    {
      ...(values.rounds === undefined ? { runs: values.quick ? "1" : "3" } : { runs: values.rounds }),
      ...values,
    },
    MAX_ROUNDS,
  );
  const levels = subset("--levels", values.levels, LEVELS);
  const delays = subset("--delays", values.delays, DELAYS);
  return {
    plan: { rounds: runs, ...(values.quick ? QUICK : FULL) } as Plan,
    values,
    maxSeconds,
    levels,
    delays,
  };
}

/** A comma-separated subset of `all` (all of it when absent), in `all`'s order. @throws RangeError naming the flag */
function subset<T extends number>(flag: string, value: string | undefined, all: readonly T[]): readonly T[] {
  if (value === undefined) return all;
  const picked = value.split(",").map((x) => Number(x.trim()));
  const bad = picked.find((x) => !all.includes(x as T));
  if (bad !== undefined || picked.length === 0)
    throw new RangeError(`${flag}: a comma-separated subset of ${all.join(",")}, got ${value}`);
  return all.filter((x) => picked.includes(x));
}

function at(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

async function main(): Promise<void> {
  const { plan, values, maxSeconds, levels, delays } = readArgs();
  // Tuning every PAIR node of the run gets (a before/after of one switch, in separate runs).
  const tuning = {
    ...(values["no-idle-collect"] ? { idleCollect: false as const } : {}),
    ...(values["history-thread"] ? { historyOnThread: true } : {}),
  };
  const started = performance.now();
  const loadAtStart = loadAverage1m();
  const log = (line: string) => console.error(line);
  const nginxBinary = values["no-nginx"] ? undefined : findNginx();
  if (!values["no-nginx"] && nginxBinary === undefined) throw new Error(NGINX_MISSING);
  const { children, disarm } = guardChildren("compare", maxSeconds, log);
  let nginx: RunningNginx | undefined;
  process.on("exit", () => nginx?.kill());
  try {
    // Engines: paced and CPU-bound on HTTP (local engines), paced on HTTPS with a bearer token (rented).
    const ca = await createTestCa();
    const leaf = await ca.issue();
    const token = randomBytes(24).toString("base64url");
    const engineArg: EngineChildArg = {
      engines: [
        ...DELAYS.map((delay) => ({
          model: model(delay, false),
          tokenDelayMs: delay,
          maxTokens: TOKENS,
          maxConcurrent: SLOTS,
        })),
        {
          model: model(5, true),
          tokenDelayMs: 5,
          maxTokens: TOKENS,
          maxConcurrent: SLOTS,
          tls: { key: leaf.keyPem, cert: leaf.certPem },
          apiKey: token,
        },
      ],
    };
    const engine = await forkChild({
      name: "engine-emulator",
      script: resolve(HERE, "engine-child.ts"),
      arg: engineArg,
      cwd: ROOT,
    });
    children.push(engine);
    const engineUrl = (m: string) => {
      const e = (engine.ready as EngineChildReady).engines.find((x) => x.model === m);
      if (e === undefined) throw new Error(`no emulator for ${m}`);
      return e.url;
    };
    const localEngines = DELAYS.map((d) => ({
      name: `emu-${d}ms`,
      model: model(d, false),
      baseUrl: `${engineUrl(model(d, false))}/v1`,
      maxConcurrent: SLOTS,
    }));
    // The local route has a node of its own, as nginx and the minimal proxy each serve one target: its
    // RSS is then what the local route costs, not also what node B keeps from serving the peer hop's
    // far end and the rented route (node B's peak over the run is reported too).
    const local = await forkChild({
      name: NODE_LOCAL,
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: { name: NODE_LOCAL, ...tuning, engines: localEngines } satisfies NodeChildArg,
      cwd: ROOT,
    });
    children.push(local);
    const bArg: NodeChildArg = {
      name: NODE_B,
      membershipRefreshMs: MEMBERSHIP_REFRESH_MS,
      ...tuning,
      engines: localEngines,
      // A rented node is one base URL, and an emulator has one token delay: the rented route is paced only.
      rented: {
        baseUrl: `${engineUrl(model(5, true))}/v1`,
        caPem: ca.certPem,
        token,
        models: [model(5, true)],
        maxConcurrent: SLOTS,
      },
    };
    const b = await forkChild({
      name: NODE_B,
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: bArg,
      cwd: ROOT,
    });
    children.push(b);
    const a = await forkChild({
      name: NODE_A,
      script: resolve(HERE, "node-child.ts"),
      pairNode: true,
      arg: {
        name: NODE_A,
        membershipRefreshMs: MEMBERSHIP_REFRESH_MS,
        engines: [],
        ...tuning,
      } satisfies NodeChildArg,
      cwd: ROOT,
    });
    children.push(a);
    const aReady = a.ready as NodeChildReady;
    const bReady = b.ready as NodeChildReady;
    await pairNodes(aReady, bReady);
    await waitUntilSees(
      aReady,
      NODE_B,
      DELAYS.map((d) => model(d, false)),
      3 * MEMBERSHIP_REFRESH_MS,
    );
    const routes = Object.fromEntries(DELAYS.map((d) => [`d${d}`, engineUrl(model(d, false))]));
    const bases = await startBareBaselines({
      routes,
      rented: { route: "d5", origin: engineUrl(model(5, true)), caPem: ca.certPem, token },
      children,
      here: HERE,
      cwd: ROOT,
    });
    if (nginxBinary !== undefined) nginx = await startNginx(nginxBinary, routes);
    const nginxVersion = nginx?.version;
    log(
      `engines pid ${engine.pid}, local node ${local.pid}, node B ${b.pid}, node A ${a.pid}, ` +
        `bare ${bases.bare.pid}, bare peer ${bases.peerNear.pid} → ${bases.peerFar.pid}, bare rented ${bases.rented.pid}` +
        (nginx ? `, nginx ${nginx.pid} (${nginx.version})` : ""),
    );

    const chat = "/v1/chat/completions";
    const plain = (label: Target["label"], url: string, extra: Partial<Target> = {}): Target => ({
      label,
      ...at(url),
      chatPath: chat,
      warmPath: "/v1/models",
      ...extra,
    });
    const targets: Partial<Record<TargetName, Measured>> = {
      direct: {
        target: plain("direct", engineUrl(model(5, false))),
        body: (d) => chatBody(model(d, false), TOKENS),
        path: () => chat,
        pids: [engine.pid],
      },
      bare: {
        target: plain("bare", bareUrl(bases.bare)),
        body: (d) => chatBody(model(d, false), TOKENS),
        path: (d) => `/d${d}${chat}`,
        pids: [bases.bare.pid],
      },
      "bare-peer": {
        target: plain("bare-peer", bareUrl(bases.peerNear)),
        body: (d) => chatBody(model(d, false), TOKENS),
        path: (d) => `/d${d}${chat}`,
        pids: [bases.peerNear.pid, bases.peerFar.pid],
      },
      "bare-rented": {
        target: plain("bare-rented", bareUrl(bases.rented)),
        body: () => chatBody(model(5, true), TOKENS),
        path: () => `/d5${chat}`,
        pids: [bases.rented.pid],
      },
      local: {
        target: plain("node", (local.ready as NodeChildReady).url, {
          mustHaveHeader: "x-pair-served-by",
          mustHaveHeaderValue: NODE_LOCAL,
        }),
        body: (d) => chatBody(model(d, false), TOKENS),
        path: () => chat,
        pids: [local.pid],
      },
      peer: {
        target: plain("via-peer", aReady.url, {
          mustHaveHeader: "x-pair-served-by",
          mustHaveHeaderValue: NODE_B,
        }),
        body: (d) => chatBody(model(d, false), TOKENS),
        path: () => chat,
        pids: [a.pid, b.pid],
      },
      rented: {
        target: plain("rented", bReady.url, { mustHaveHeader: "x-pair-served-by" }),
        body: () => chatBody(model(5, true), TOKENS),
        path: () => chat,
        pids: [b.pid],
      },
      ...(nginx === undefined
        ? {}
        : {
            nginx: {
              target: plain("nginx", nginx.url),
              body: (d: number) => chatBody(model(d, false), TOKENS),
              path: (d: number) => `/d${d}${chat}`,
              pids: [nginx.pid],
            },
          }),
    };
    const names = TARGET_NAMES.filter((t) => targets[t] !== undefined);

    const load = (name: TargetName, delayMs: number, c: Level, warm = false) => {
      const m = targets[name]!;
      // The rented node serves its 5 ms model only: its 0 ms cells are left out (see the doc).
      const target: Target = {
        ...m.target,
        chatPath: m.path(delayMs),
        warmPath: m.path(delayMs).replace(chat, "/v1/models"),
        // direct: each delay is its own emulator.
        ...(name === "direct" ? at(engineUrl(model(delayMs, false))) : {}),
      };
      return runLoad({
        target,
        body: m.body(delayMs),
        concurrency: c,
        rampRequestsPerWorker: 1,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        ...(delayMs === 0
          ? { durationMs: warm ? plan.warmupMs : plan.cpuMs, staggerMs: 0 }
          : { requestsPerWorker: warm ? 1 : plan.perWorker[c], staggerMs: TOKENS * delayMs }),
      });
    };
    const skip = (name: TargetName, delayMs: number) =>
      (name === "rented" || name === "bare-rented") && delayMs === 0;

    log(`warm-up: every target, 64 streams at each delay`);
    for (const name of names) for (const d of delays) if (!skip(name, d)) await load(name, d, 64, true);

    const rounds = new Map<string, { figures: LoadFigures[]; rss: number[] }>();
    const peakRss = new Map<string, number>();
    const pidNames: [string, number][] = [
      ["engines", engine.pid],
      ["node (local route)", local.pid],
      ["node B", b.pid],
      ["node A", a.pid],
      ["minimal Node proxy", bases.bare.pid],
      ["bare peer near", bases.peerNear.pid],
      ["bare peer far", bases.peerFar.pid],
      ["bare rented relay", bases.rented.pid],
      ...(nginx ? ([["nginx", nginx.pid]] as [string, number][]) : []),
    ];
    for (let r = 0; r < plan.rounds; r++) {
      log(`round ${r + 1}/${plan.rounds}`);
      for (const d of delays)
        for (const c of levels) {
          // Interleaved: every target at this cell, the order rotated each round.
          const order = names.map((_, i) => names[(i + r) % names.length]!).filter((n) => !skip(n, d));
          const line: string[] = [];
          for (const name of order) {
            const pids = targets[name]!.pids;
            const [result, peaks] = await withPeakRss([...pids, ...pidNames.map((p) => p[1])], () =>
              load(name, d, c),
            );
            warnErrors(`${name}, ${d} ms, ${c} streams`, result);
            pidNames.forEach(([n], i) =>
              peakRss.set(n, Math.max(peakRss.get(n) ?? 0, peaks[pids.length + i] ?? 0)),
            );
            const key = `${name}|${d}|${c}`;
            const entry = rounds.get(key) ?? { figures: [], rss: [] };
            entry.figures.push(loadFigures(result));
            entry.rss.push(peaks[0]!);
            rounds.set(key, entry);
            const f = loadFigures(result);
            line.push(
              `${name} ${d === 0 ? `${f.rps.toFixed(0)} r/s` : `${f.firstChunk.p50.toFixed(1)}/${f.firstChunk.p99.toFixed(1)} ms`}`,
            );
          }
          log(`  ${d} ms, ${String(c).padStart(3)} streams: ${line.join(", ")}`);
        }
    }
    for (const child of [...children].reverse()) await child.stop();
    await nginx?.stop();
    nginx = undefined;

    const cells: Cell[] = [...rounds].map(([key, v]) => {
      const [target, d, c] = key.split("|");
      return {
        target: target as TargetName,
        delayMs: Number(d),
        concurrency: Number(c),
        figures: medianFigures(v.figures),
        rssBytes: median(v.rss),
      };
    });
    const args = process.argv.slice(2).filter((x) => x !== "--write");
    const block = renderCompare(cells, {
      command: ["npm run bench", ...(args.length > 0 ? ["--", ...args] : [])].join(" "),
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      machine: machineInfo(),
      nginxVersion,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAverage1m(),
      wallSeconds: (performance.now() - started) / 1000,
      rounds: plan.rounds,
      tokens: TOKENS,
      processRss: [...peakRss].map(([name, bytes]) => ({ name, bytes })),
    });
    console.log(block);
    console.log("");
    for (const t of evaluateCompare(cells))
      console.log(`${t.met ? "PASS" : "MISS"}  ${t.name}: ${t.measured} (goal ${t.goal})`);
    if (values.write) {
      writeFileSync(DOC, spliceCompare(existsSync(DOC) ? readFileSync(DOC, "utf8") : undefined, block));
      log(`wrote ${DOC}`);
    }
  } finally {
    disarm();
    await nginx?.stop();
    await Promise.all(children.map((c: BenchChild) => c.stop()));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
