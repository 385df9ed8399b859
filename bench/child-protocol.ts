/**
 * The IPC between the benchmark and its two child processes (engine emulator, PAIR node): the
 * messages, the child side (answer samples of RSS, CPU time and event-loop use; close on request or
 * when the parent goes away) and the parent side (fork with tsx, wait for ready, call, stop for sure).
 * Every child runs as `pair` does after `npm run build`: its entry script built into one file by
 * scripts/build-cli.mjs (dist/bench/, rebuilt when a source changed) and run by plain node, without
 * tsx's loader thread; for a PAIR node child (`pairNode: true`), `PAIR_BENCH_NODE_FROM=sources` (or
 * `from: "sources"`) runs it from the sources through tsx instead, as `pair` does without a fresh bundle.
 * Must not know: what a child serves, how load is generated or reported.
 */

import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { whyNotFresh } from "../bin/bundle-freshness.js";
import {
  monitorEventLoopDelay,
  performance,
  type EventLoopUtilization,
  type IntervalHistogram,
} from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";
import { PAIR_NODE_ENV, PAIR_NODE_FLAGS } from "../packages/node/src/process-flags.js";

/** What the parent may ask a child. */
export type ChildOp = "sample-start" | "sample-stop" | "rss" | "memory" | "heap" | "close";

/** Resource use of one child between `sample-start` and `sample-stop`. */
export interface ResourceSample {
  readonly elapsedMs: number;
  /** Largest RSS seen (sampled every `RSS_SAMPLE_EVERY_MS`, and at start and stop). */
  readonly rssPeakBytes: number;
  readonly rssBytes: number;
  readonly cpuUserMs: number;
  readonly cpuSystemMs: number;
  /** Event-loop utilization over the window, 0..1 (time the loop was not idle). */
  readonly eventLoopUtilization: number;
  /** How late a timer checking every `LOOP_DELAY_RESOLUTION_MS` fired (the loop's stalls), ms. */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
}

interface CallMessage {
  readonly id: number;
  readonly op: ChildOp;
}
interface ReplyMessage {
  readonly id: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: string;
}
interface ReadyMessage {
  readonly ready: true;
  readonly value: unknown;
}

const RSS_SAMPLE_EVERY_MS = 50;
const LOOP_DELAY_RESOLUTION_MS = 10;
const READY_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

// ---- child side ---------------------------------------------------------------------------------

/**
 * The environment variable that carries a child's argument (JSON). Not its command line: an argument
 * can hold a secret made for the run (a bearer token, a TLS key), and any user of the machine can
 * read any process's command line, while only its owner can read its environment.
 */
const CHILD_ARG_ENV = "PAIR_BENCH_CHILD_ARG";

/** In a child process: the argument its parent gave `forkChild` (taken out of the environment, so the child's own children do not inherit it). */
export function childArg<T>(): T {
  const json = process.env[CHILD_ARG_ENV];
  if (json === undefined) throw new Error(`bench child: no ${CHILD_ARG_ENV}; start me with forkChild`);
  delete process.env[CHILD_ARG_ENV];
  return JSON.parse(json) as T;
}

/**
 * Serves the parent's calls in a child process. `close` (or the parent going away) runs `onClose`
 * and exits (normally, so `--cpu-prof` can write its profile).
 */
export function serveParent(ready: unknown, onClose: () => Promise<void>): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error("bench child: start me with child_process.fork (no IPC channel)");
  let window:
    | {
        t0: number;
        cpu: NodeJS.CpuUsage;
        elu: EventLoopUtilization;
        delay: IntervalHistogram;
        peak: number;
        timer: NodeJS.Timeout;
      }
    | undefined;
  let closing = false;
  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    if (window) {
      clearInterval(window.timer);
      window.delay.disable();
    }
    try {
      await onClose();
    } finally {
      process.disconnect?.();
      process.exit(0);
    }
  };
  const answer = (op: ChildOp): unknown => {
    switch (op) {
      case "rss":
        return process.memoryUsage.rss();
      case "heap":
        // As it is, without a collection first: the young generation's size, the heap, the rest.
        return {
          ...process.memoryUsage(),
          newSpace: getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0,
        };
      case "memory":
        // After a full GC when the child runs with --expose-gc: what stays, not what awaits collection.
        (globalThis as { gc?: () => void }).gc?.();
        return process.memoryUsage();
      case "sample-start": {
        if (window) {
          clearInterval(window.timer);
          window.delay.disable();
        }
        const delay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
        delay.enable();
        const w = {
          t0: performance.now(),
          cpu: process.cpuUsage(),
          elu: performance.eventLoopUtilization(),
          delay,
          peak: process.memoryUsage.rss(),
          timer: setInterval(() => {
            // `.rss()` alone: the full memoryUsage() walks the heap's spaces (2.6 % of a busy node's CPU at 20 Hz).
            w.peak = Math.max(w.peak, process.memoryUsage.rss());
          }, RSS_SAMPLE_EVERY_MS),
        };
        window = w;
        return null;
      }
      case "sample-stop": {
        if (!window) throw new Error("sample-stop without sample-start");
        const w = window;
        window = undefined;
        clearInterval(w.timer);
        w.delay.disable();
        const rss = process.memoryUsage.rss();
        const cpu = process.cpuUsage(w.cpu);
        const sample: ResourceSample = {
          elapsedMs: performance.now() - w.t0,
          rssPeakBytes: Math.max(w.peak, rss),
          rssBytes: rss,
          cpuUserMs: cpu.user / 1000,
          cpuSystemMs: cpu.system / 1000,
          eventLoopUtilization: performance.eventLoopUtilization(w.elu).utilization,
          // The histogram counts from the timer's due time: subtract the resolution itself.
          loopDelayP99Ms: Math.max(0, w.delay.percentile(99) / 1e6 - LOOP_DELAY_RESOLUTION_MS),
          loopDelayMaxMs: Math.max(0, w.delay.max / 1e6 - LOOP_DELAY_RESOLUTION_MS),
        };
        return sample;
      }
      case "close":
        return null;
    }
  };
  process.on("message", (message: unknown) => {
    if (!isRecord(message) || typeof message["id"] !== "number" || typeof message["op"] !== "string") return;
    const { id, op } = message as unknown as CallMessage;
    try {
      send({ id, ok: true, value: answer(op) } satisfies ReplyMessage);
    } catch (error) {
      send({ id, ok: false, error: String(error) } satisfies ReplyMessage);
    }
    if (op === "close") void close();
  });
  process.on("disconnect", () => void close());
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void close());
  send({ ready: true, value: ready } satisfies ReadyMessage);
}

// ---- parent side --------------------------------------------------------------------------------

export interface BenchChild {
  readonly name: string;
  readonly pid: number;
  /** What the child sent with its ready message. */
  readonly ready: unknown;
  call(op: ChildOp): Promise<unknown>;
  sample(op: "sample-start"): Promise<void>;
  sample(op: "sample-stop"): Promise<ResourceSample>;
  /** Asks the child to close; kills it if it has not exited within a grace period. Idempotent. */
  stop(): Promise<void>;
  /** Last resort, synchronous (for `process.on("exit")`). */
  kill(): void;
}

export interface ForkOptions {
  readonly name: string;
  /** Absolute path of a .ts entry script that calls `serveParent`. */
  readonly script: string;
  /** One argument, JSON-encoded on the child's command line. */
  readonly arg: unknown;
  /** Extra flags for the child's node (e.g. `--cpu-prof`). */
  readonly extraExecArgv?: readonly string[];
  readonly cwd: string;
  /** Extra environment variables for the child (its parent's environment otherwise). */
  readonly env?: Readonly<Record<string, string>>;
  /** Run `script` (plain JavaScript, e.g. a bundle) with node alone, without the tsx loader. */
  readonly withoutTsx?: boolean;
  /**
   * A PAIR node: start it as `pair` runs, with the environment and V8 flags `pair` runs with
   * (`PAIR_NODE_ENV`, `PAIR_NODE_FLAGS`; `env` may override the first),
   * from its bundle unless `from` (or `PAIR_BENCH_NODE_FROM`) says `sources`.
   */
  readonly pairNode?: boolean;
  /** Where a PAIR node's code comes from: its bundle (default) or its sources through tsx. */
  readonly from?: NodeCodeFrom;
}

export type NodeCodeFrom = "bundle" | "sources";

const BUILD_SCRIPT = fileURLToPath(new URL("../scripts/build-cli.mjs", import.meta.url));
/** Beside `pair`'s own bundle, git-ignored. */
const BENCH_BUNDLES = fileURLToPath(new URL("../dist/bench/", import.meta.url));

/**
 * Extra V8/node flags for every PAIR node a benchmark starts, from `PAIR_BENCH_NODE_FLAGS`
 * (space-separated, e.g. `--trace-gc`): for looking inside a run without changing the benchmark.
 */
export function benchNodeFlags(): string[] {
  return (process.env["PAIR_BENCH_NODE_FLAGS"] ?? "").split(/\s+/).filter((f) => f.length > 0);
}

/**
 * A command-line option's node flags (space-separated, `--flag` or `--flag=value`), checked so that
 * only flags reach the child's `execArgv`: `option` names the option in the error.
 */
export function parseNodeFlags(option: string, text: string): string[] {
  const flags = text.split(" ").filter((f) => f !== "");
  if (!flags.every((f) => /^--[a-z0-9-]+(=[\w./-]+)?$/.test(f)))
    throw new RangeError(`--${option}: --flag[=value] …, got ${text}`);
  return flags;
}

/** Where a PAIR node's code comes from when the caller does not say: `PAIR_BENCH_NODE_FROM`, or the bundle. */
export function defaultNodeFrom(): NodeCodeFrom {
  const from = process.env["PAIR_BENCH_NODE_FROM"] ?? "bundle";
  if (from !== "bundle" && from !== "sources")
    throw new RangeError(`PAIR_BENCH_NODE_FROM=${from}: use bundle or sources`);
  return from;
}

/**
 * The bundle of a TypeScript entry script (`dist/bench/NAME.mjs`, not committed), built now
 * unless it is fresh (bin/bundle-freshness.js: built from the sources as they are).
 */
export function bundleOf(script: string): string {
  const out = join(BENCH_BUNDLES, basename(script).replace(/\.ts$/, ".mjs"));
  if (whyNotFresh(out) !== undefined)
    execFileSync(process.execPath, [BUILD_SCRIPT, "--entry", script, "--outfile", out], { stdio: "inherit" });
  return out;
}

/** Forks a TypeScript entry script (from its bundle, or under tsx) and waits for its ready message. */
export async function forkChild(options: ForkOptions): Promise<BenchChild> {
  // Every TypeScript child runs from its bundle, so the proxies compared start alike (tsx's loader
  // thread alone is 35–55 MB of RSS); a PAIR node runs from its sources when asked.
  const bundled =
    options.withoutTsx !== true &&
    (options.pairNode !== true || (options.from ?? defaultNodeFrom()) === "bundle");
  const script = bundled ? bundleOf(resolve(options.script)) : options.script;
  const child: ChildProcess = fork(script, [], {
    cwd: options.cwd,
    env: {
      ...process.env,
      ...(options.pairNode === true ? PAIR_NODE_ENV : {}),
      ...options.env,
      [CHILD_ARG_ENV]: JSON.stringify(options.arg),
    },
    execArgv: [
      ...(options.withoutTsx === true || bundled ? [] : ["--import", "tsx"]),
      ...(options.pairNode === true ? [...PAIR_NODE_FLAGS, ...benchNodeFlags()] : []),
      ...(options.extraExecArgv ?? []),
      ...(process.env["PAIR_BENCH_ANY_FLAGS"] ?? "").split(" ").filter((f) => f !== ""),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "json",
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`${options.name}: child exited`));
      pending.clear();
      resolve();
    }),
  );
  const ready = await new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.name}: not ready within ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name}: exited before ready (code ${code}, signal ${signal})`));
    });
    child.on("message", (message: unknown) => {
      if (!isRecord(message)) return;
      if (message["ready"] === true) {
        clearTimeout(timer);
        resolve(message["value"]);
        return;
      }
      const id = message["id"];
      const entry = typeof id === "number" ? pending.get(id) : undefined;
      if (!entry || typeof id !== "number") return;
      pending.delete(id);
      if (message["ok"] === true) entry.resolve(message["value"]);
      else entry.reject(new Error(`${options.name}: ${String(message["error"])}`));
    });
  });

  const call = (op: ChildOp): Promise<unknown> => {
    if (exited) return Promise.reject(new Error(`${options.name}: child has exited`));
    const id = ++nextId;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${options.name}: no answer to ${op} within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ id, op } satisfies CallMessage);
    });
  };
  let stopping: Promise<void> | undefined;
  const kill = (): void => {
    if (!exited) child.kill("SIGKILL");
  };
  function sample(op: "sample-start"): Promise<void>;
  function sample(op: "sample-stop"): Promise<ResourceSample>;
  async function sample(op: "sample-start" | "sample-stop"): Promise<void | ResourceSample> {
    const value = await call(op);
    if (op === "sample-start") return;
    return value as ResourceSample;
  }
  return {
    name: options.name,
    pid: child.pid ?? -1,
    ready,
    call,
    sample,
    kill,
    stop: () =>
      (stopping ??= (async () => {
        if (exited) return;
        call("close").catch(() => undefined);
        const grace = new Promise<"late">((resolve) =>
          setTimeout(() => resolve("late"), STOP_GRACE_MS).unref(),
        );
        if ((await Promise.race([exitedPromise, grace])) === "late") {
          kill();
          await exitedPromise;
        }
      })()),
  };
}
