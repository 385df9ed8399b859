/**
 * Interactive streams beside a running batch (issue 33's saturation case): one PAIR node over one
 * engine emulator; each round measures the same closed-loop interactive streams on the idle node and
 * while a batch (the OpenAI Batch API on the node, as a user submits one) keeps the engine's slots
 * full, the two in alternating order, and samples how busy the engine's slots were. Reports the
 * ratio of the first chunk's p50 (target ≤ 1.2×) and the busy share (target ≥ 95 %).
 *
 *   npx tsx bench/batch-load.ts [--rounds 3] [--slots 32] [--streams 4] [--per-worker 6] [--write]
 *                               [--batch-tokens 64] [--max-seconds 600] [--profile DIR]
 *
 * Three processes (engine emulator, node, this load generator), loopback only; every child is stopped
 * at the end, on a signal, or by the watchdog. `--batch-tokens`: how long each batch line is (the
 * engine's slots sit idle between two lines for the hand-over, so longer lines keep them busier). Reports; never fails on a missed target. `--profile`
 * writes the node's CPU profile to DIR (for `bench/summarize-cpu-profile.ts`).
 * Must not know: the node's internals (it is measured from outside, over HTTP).
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  batchLoadVerdict,
  renderBatchLoad,
  spliceBatchLoad,
  type BatchLoadRound,
} from "./batch-load-report.js";
import { submitChatBatch } from "../packages/node/test/support/batch-submit.js";
import { checkRunsAndSeconds, guardChildren, startNodeChild } from "./bench-setup.js";
import { forkChild } from "./child-protocol.js";
import type { EngineChildArg, EngineChildReady } from "./engine-child.js";
import { runLoad, type Target } from "./load-generator.js";
import { loadAverage1m, machineInfo } from "./machine-info.js";
import { chatBody, loadFigures, warnErrors } from "./measure.js";
import type { NodeChildReady } from "./node-child.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DOC = resolve(ROOT, "docs/performance.md");
const MODEL = "bench-5ms";
const TOKEN_DELAY_MS = 5;
const TOKENS = 64;
const NODE_NAME = "bench-batch";
const SAMPLE_EVERY_MS = 20;
const FILL_TIMEOUT_MS = 15_000;

const log = (line: string): void => console.error(line);

function readArgs() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      slots: { type: "string", default: "32" },
      streams: { type: "string", default: "4" },
      "per-worker": { type: "string", default: "6" },
      "batch-tokens": { type: "string", default: String(TOKENS) },
      write: { type: "boolean", default: false },
      "max-seconds": { type: "string", default: "600" },
      profile: { type: "string" },
    },
    strict: true,
  });
  const { runs, maxSeconds } = checkRunsAndSeconds({ runs: values.rounds, ...values }, 20);
  const int = (flag: string, v: string, max: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new RangeError(`--${flag}: 1 to ${max}, got ${v}`);
    return n;
  };
  return {
    rounds: runs,
    maxSeconds,
    slots: int("slots", values.slots, 256),
    streams: int("streams", values.streams, 64),
    perWorker: int("per-worker", values["per-worker"], 100),
    batchTokens: int("batch-tokens", values["batch-tokens"], 4096),
    write: values.write,
    profile: values.profile,
  };
}

interface EngineStatsJson {
  readonly inFlight: number;
  readonly completed: number;
  /** Most requests that ever waited inside the engine for a slot: PAIR should never send one too many. */
  readonly maxQueuedSeen: number;
}

async function engineStats(url: string): Promise<EngineStatsJson> {
  const all = (await (await fetch(url)).json()) as EngineStatsJson[];
  return all[0]!;
}

/** Polls the engine until `done(stats)` holds. @throws Error after `FILL_TIMEOUT_MS` naming `what` */
async function waitEngine(url: string, what: string, done: (s: EngineStatsJson) => boolean): Promise<void> {
  const deadline = performance.now() + FILL_TIMEOUT_MS;
  for (;;) {
    if (done(await engineStats(url))) return;
    if (performance.now() > deadline) throw new Error(`batch-load: the engine did not ${what} in time`);
    await sleep(SAMPLE_EVERY_MS);
  }
}

async function main(): Promise<void> {
  const o = readArgs();
  const started = performance.now();
  const loadAtStart = loadAverage1m();
  const { children, disarm } = guardChildren("batch-load", o.maxSeconds, log);
  try {
    const engine = await forkChild({
      name: "engine-emulator",
      script: resolve(HERE, "engine-child.ts"),
      arg: {
        engines: [{ model: MODEL, tokenDelayMs: TOKEN_DELAY_MS, maxTokens: TOKENS, maxConcurrent: o.slots }],
        statsServer: true,
      } satisfies EngineChildArg,
      cwd: ROOT,
    });
    children.push(engine);
    const er = engine.ready as EngineChildReady;
    const statsUrl = er.statsUrl!;
    const { node, target: anyNode } = await startNodeChild(
      {
        name: NODE_NAME,
        engines: [{ name: "emu", model: MODEL, baseUrl: `${er.engines[0]!.url}/v1`, maxConcurrent: o.slots }],
        batchLines: o.slots,
      },
      { extraExecArgv: o.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", resolve(o.profile)] },
      children,
    );
    const nodeUrl = (node.ready as NodeChildReady).url;
    const target: Target = { ...anyNode, mustHaveHeaderValue: NODE_NAME };
    const interactive = (perWorker: number) =>
      runLoad({
        target,
        body: chatBody(MODEL, TOKENS),
        concurrency: o.streams,
        requestsPerWorker: perWorker,
        rampRequestsPerWorker: 1,
        staggerMs: TOKENS * TOKEN_DELAY_MS,
        requestTimeoutMs: 60_000,
      });
    log(`engine ${engine.pid}, node ${node.pid}; warm-up`);
    await interactive(1);
    // Enough lines that the batch outlasts the interactive load: each slot runs one line per stream time.
    const lines = o.slots * (o.perWorker + 8);

    const idlePhase = async () => {
      const r = await interactive(o.perWorker);
      warnErrors("idle", r);
      return loadFigures(r);
    };
    const batchPhase = async () => {
      const id = await submitChatBatch(nodeUrl, MODEL, lines, (i) => `b${i}`, o.batchTokens);
      // A batch leaves one slot free, and the slots users held lately (the scheduler): the idle
      // phase's streams may still be counted, so "full" is every slot but those.
      await waitEngine(statsUrl, "fill with batch lines", (s) => s.inFlight >= o.slots - 1 - o.streams);
      const before = await engineStats(statsUrl);
      const shares: number[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          shares.push((await engineStats(statsUrl)).inFlight / o.slots);
          await sleep(SAMPLE_EVERY_MS);
        }
      })();
      const r = await interactive(o.perWorker);
      sampling = false;
      await sampler;
      const after = await engineStats(statsUrl);
      warnErrors("under batch", r);
      const cancel = await fetch(`${nodeUrl}/v1/batches/${id}/cancel`, { method: "POST" });
      if (cancel.status !== 200) throw new Error(`cancelling the batch: HTTP ${cancel.status}`);
      await waitEngine(statsUrl, "drain after the cancel", (s) => s.inFlight === 0);
      return {
        figures: loadFigures(r),
        busyShare: shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length),
        batchLinesDone: after.completed - before.completed - r.sent,
        engineQueuedMax: after.maxQueuedSeen,
      };
    };

    const rounds: BatchLoadRound[] = [];
    for (let i = 0; i < o.rounds; i++) {
      const idleFirst = i % 2 === 0;
      const idle = idleFirst ? await idlePhase() : undefined;
      const busy = await batchPhase();
      const idleFigures = idle ?? (await idlePhase());
      const round = {
        idle: idleFigures,
        underBatch: busy.figures,
        busyShare: busy.busyShare,
        batchLinesDone: busy.batchLinesDone,
      };
      rounds.push(round);
      log(
        `round ${i + 1}/${o.rounds}: first chunk p50 idle ${idleFigures.firstChunk.p50.toFixed(2)} ms, ` +
          `under batch ${busy.figures.firstChunk.p50.toFixed(2)} ms, engine busy ${(busy.busyShare * 100).toFixed(1)} %, ` +
          `most ever queued inside the engine ${busy.engineQueuedMax}`,
      );
    }
    for (const child of [...children].reverse()) await child.stop();
    const args = process.argv.slice(2).filter((x) => x !== "--write");
    const block = renderBatchLoad(rounds, {
      command: ["npx tsx bench/batch-load.ts", ...args].join(" "),
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      machine: machineInfo(),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAverage1m(),
      wallSeconds: (performance.now() - started) / 1000,
      slots: o.slots,
      streams: o.streams,
      tokens: TOKENS,
      batchTokens: o.batchTokens,
      tokenDelayMs: TOKEN_DELAY_MS,
    });
    console.log(block);
    const v = batchLoadVerdict(rounds);
    console.log(
      `\n${v.p50Met ? "PASS" : "MISS"}  first chunk p50 under a batch: ${v.p50Ratio.toFixed(2)}× idle`,
    );
    console.log(`${v.busyMet ? "PASS" : "MISS"}  engine busy: ${(v.busyShare * 100).toFixed(1)} %`);
    if (o.write) {
      writeFileSync(DOC, spliceBatchLoad(existsSync(DOC) ? readFileSync(DOC, "utf8") : undefined, block));
      log(`wrote ${DOC}`);
    }
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
