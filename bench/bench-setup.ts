/**
 * What the loopback benchmarks share to run safely: their common flags checked (`--runs`,
 * `--max-seconds`), a guard that bounds a run in time and never leaves a child process behind (on a
 * signal or the watchdog each child is asked to close, then killed; on exit whatever is left is
 * killed), and the engine-emulator child with its two models (paced and CPU-bound).
 * Must not know: what a benchmark measures or reports.
 */

import { resolve } from "node:path";
import { forkChild, type BenchChild } from "./child-protocol.js";
import type { EngineChildArg, EngineChildReady } from "./engine-child.js";

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
