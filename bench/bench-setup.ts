/**
 * What the loopback benchmarks share to run safely: their common flags checked (`--runs`,
 * `--max-seconds`), a guard that bounds a run in time and never leaves a child process behind (on a
 * signal or the watchdog each child is asked to close, then killed; on exit whatever is left is
 * killed), the engine-emulator child with its two models (paced and CPU-bound), and the two children
 * most benchmarks start one after the other: engine emulators with any models, and a PAIR node over
 * them with the load generator's target at its client port.
 * Must not know: what a benchmark measures or reports.
 */

import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { forkChild, type BenchChild, type ForkOptions } from "./child-protocol.js";
import type { EngineChildArg, EngineChildReady } from "./engine-child.js";
import type { Target } from "./load-generator.js";
import type { NodeChildArg, NodeChildReady } from "./node-child.js";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, "..");

/** `--runs` (default 5, 1 with `--quick`) and `--max-seconds`, checked. @throws RangeError naming the flag */
export function checkRunsAndSeconds(
  values: { readonly runs?: string; readonly quick?: boolean; readonly "max-seconds"?: string },
  maxRuns: number,
): { runs: number; maxSeconds: number } {
  const runs = Number(values.runs ?? (values.quick === true ? 1 : 5));
  if (!Number.isInteger(runs) || runs < 1 || runs > maxRuns)
    throw new RangeError(`--runs: an integer in [1, ${maxRuns}], got ${values.runs}`);
  const maxSeconds = Number(values["max-seconds"]);
  if (!(maxSeconds > 0 && maxSeconds <= 24 * 3600))
    throw new RangeError(`--max-seconds: a number of seconds in (0, 86400], got ${values["max-seconds"]}`);
  return { runs, maxSeconds };
}

export interface ChildGuard {
  /** Every child started; push each one as soon as it is forked. */
  readonly children: BenchChild[];
  /** Stop the watchdog (the run ended in time). */
  readonly disarm: () => void;
}

/** Bound the run to `maxSeconds`, stop on SIGINT/SIGTERM, and never leave a child behind. */
export function guardChildren(label: string, maxSeconds: number, log: (line: string) => void): ChildGuard {
  const children: BenchChild[] = [];
  process.on("exit", () => children.forEach((c) => c.kill()));
  const abandon = (why: string, code: number) => {
    log(`${label}: ${why}, stopping`);
    void Promise.all(children.map((c) => c.stop())).finally(() => process.exit(code));
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => abandon(signal, 130));
  const watchdog = setTimeout(() => abandon(`still running after ${maxSeconds} s`, 2), maxSeconds * 1000);
  return { children, disarm: () => clearTimeout(watchdog) };
}

/** The engine-emulator child serving `paced` and `cpu` models (recorded in `children`). */
export async function startEngines(
  options: {
    readonly benchDir: string;
    readonly root: string;
    readonly paced: { readonly model: string; readonly tokenDelayMs: number };
    readonly cpuModel: string;
    readonly tokens: number;
    readonly slots: number;
  },
  children: BenchChild[],
): Promise<{ child: BenchChild; ready: EngineChildReady }> {
  const arg: EngineChildArg = {
    engines: [
      {
        model: options.paced.model,
        tokenDelayMs: options.paced.tokenDelayMs,
        maxTokens: options.tokens,
        maxConcurrent: options.slots,
      },
      { model: options.cpuModel, tokenDelayMs: 0, maxTokens: options.tokens, maxConcurrent: options.slots },
    ],
  };
  const engine = await forkChild({
    name: "engine-emulator",
    script: resolve(options.benchDir, "engine-child.ts"),
    arg,
    cwd: options.root,
  });
  children.push(engine);
  return { child: engine, ready: engine.ready as EngineChildReady };
}

/** The engine-emulator child serving `engines` (recorded in `children`); their models and URLs, in order. */
export async function startEngineChild(
  engines: EngineChildArg["engines"],
  children: BenchChild[],
): Promise<EngineChildReady["engines"]> {
  const arg: EngineChildArg = { engines };
  const engine = await forkChild({
    name: "engine",
    script: resolve(BENCH_DIR, "engine-child.ts"),
    arg,
    cwd: ROOT,
  });
  children.push(engine);
  return (engine.ready as EngineChildReady).engines;
}

/** How a PAIR node child starts: where its code comes from, its environment, its extra node flags. */
export type NodeChildStart = Pick<ForkOptions, "from" | "env" | "extraExecArgv">;

/**
 * A PAIR node child (`node-child.ts`, started as `pair` runs; recorded in `children`) and the load
 * generator's target at its client port: every answer must carry `x-pair-served-by`.
 */
export async function startNodeChild(
  arg: NodeChildArg,
  start: NodeChildStart,
  children: BenchChild[],
): Promise<{ node: BenchChild; target: Target }> {
  const node = await forkChild({
    name: "node",
    script: resolve(BENCH_DIR, "node-child.ts"),
    pairNode: true,
    ...start,
    arg,
    cwd: ROOT,
  });
  children.push(node);
  const u = new URL((node.ready as NodeChildReady).url);
  const target: Target = {
    label: "node",
    host: u.hostname,
    port: Number(u.port),
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
    mustHaveHeader: "x-pair-served-by",
  };
  return { node, target };
}
