/**
 * The benchmark's load generator, in the benchmark process: closed-loop workers over node:http with
 * a keep-alive agent sized to the concurrency, each reading whole SSE streams and timing the first
 * body chunk and the end. Every stream is checked (HTTP 200, ends with `data: [DONE]`, and through
 * a node, carries `x-pair-served-by`, with the serving node's name when one is expected); a failed
 * one counts as an error, not a sample.
 * Must not know: what serves the target (engine or node), percentiles, the report.
 */

import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface Target {
  readonly label: "direct" | "bare" | "bare-peer" | "bare-rented" | "node" | "via-peer" | "nginx" | "rented";
  readonly host: string;
  readonly port: number;
  /** Path of the chat-completions route on this target. */
  readonly chatPath: string;
  /** A cheap GET on this target, used to open the agent's connections before measuring. */
  readonly warmPath: string;
  /** A response header every answer from this target must carry. */
  readonly mustHaveHeader?: string;
  /** The value `mustHaveHeader` must have (any value if not given). */
  readonly mustHaveHeaderValue?: string;
}

/** What is wrong with an answer's headers for `target` (its required header), or undefined. */
export function headerProblem(target: Target, headers: IncomingHttpHeaders): string | undefined {
  const name = target.mustHaveHeader;
  if (name === undefined) return undefined;
  const value = headers[name.toLowerCase()];
  if (value === undefined) return `${target.label}: no ${name} header`;
  const expected = target.mustHaveHeaderValue;
  if (expected !== undefined && value !== expected)
    return `${target.label}: ${name} is ${JSON.stringify(value)}, expected ${JSON.stringify(expected)}`;
  return undefined;
}

export interface StreamSample {
  /** Request start (monotonic ms) relative to the load's start. */
  readonly startMs: number;
  /** Time from writing the request to the response's headers (time to first byte). */
  readonly ttfbMs: number;
  /** Time from writing the request to the first body chunk. */
  readonly firstChunkMs: number;
  /** Time from writing the request to the end of the stream. */
  readonly totalMs: number;
  readonly bytes: number;
  /** Body reads (`data` events) the client saw. */
  readonly reads: number;
  /** SSE events in the body (blank-line separated), `[DONE]` included. */
  readonly events: number;
  /** With `trace`: the `x-pair-trace` value sent, and when the request was written (wall ms, sub-ms). */
  readonly trace?: string;
  readonly sentWallMs?: number;
}

export interface LoadResult {
  readonly samples: readonly StreamSample[];
  /** Streams started, measured or not, failed or not. */
  readonly sent: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  /** From the first request's start to the last stream's end. */
  readonly elapsedMs: number;
}

export interface LoadPlan {
  readonly target: Target;
  /** The JSON request body (a streaming chat completion). */
  readonly body: string;
  readonly concurrency: number;
  /** Each worker's requests (counted or until `durationMs` has passed, whichever is given). */
  readonly requestsPerWorker?: number;
  readonly durationMs?: number;
  /** Each worker's first requests, not measured (they run while the load ramps up). */
  readonly rampRequestsPerWorker: number;
  /** Spread the workers' first requests evenly over this long (0: all at once). */
  readonly staggerMs: number;
  /** One stream longer than this is an error. */
  readonly requestTimeoutMs: number;
  /** Send `x-pair-trace: <n>` with each request and keep it with the sample (a node's timeline joins on it). */
  readonly trace?: boolean;
}

/** Largest number of streams a plan may run (a bound on the benchmark's size). */
const MAX_REQUESTS = 1_000_000;

function streamOnce(
  agent: Agent,
  target: Target,
  body: Buffer,
  timeoutMs: number,
  originMs: number,
  trace: string | undefined,
): Promise<StreamSample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = -1;
    let ttfb = -1;
    let bytes = 0;
    let reads = 0;
    let events = 0;
    /** Last byte of the previous read: an event's blank line may straddle two reads. */
    let lastByte = 0;
    let tail = "";
    const req = request(
      {
        agent,
        host: target.host,
        port: target.port,
        path: target.chatPath,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": body.length,
          accept: "text/event-stream",
          ...(trace === undefined ? {} : { "x-pair-trace": trace }),
        },
      },
      (res) => {
        ttfb = performance.now();
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode} from ${target.label}`));
          return;
        }
        const problem = headerProblem(target, res.headers);
        if (problem !== undefined) {
          res.resume();
          reject(new Error(problem));
          return;
        }
        res.on("data", (chunk: Buffer) => {
          if (first < 0) first = performance.now();
          bytes += chunk.length;
          reads += 1;
          if (lastByte === 10 && chunk[0] === 10) events += 1;
          for (let i = chunk.indexOf(10); i >= 0 && i < chunk.length - 1; i = chunk.indexOf(10, i + 1))
            if (chunk[i + 1] === 10) events += 1;
          lastByte = chunk[chunk.length - 1]!;
          tail = (tail + chunk.toString("latin1")).slice(-64);
        });
        res.once("end", () => {
          const end = performance.now();
          if (!tail.includes("data: [DONE]"))
            reject(new Error(`${target.label}: stream ended without [DONE]`));
          else
            resolve({
              startMs: t0 - originMs,
              ttfbMs: ttfb - t0,
              firstChunkMs: first - t0,
              totalMs: end - t0,
              bytes,
              reads,
              events,
              ...(trace === undefined ? {} : { trace, sentWallMs: performance.timeOrigin + t0 }),
            });
        });
        res.once("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`${target.label}: no progress in ${timeoutMs} ms`)),
    );
    req.once("error", reject);
    req.end(body);
  });
}

/** Opens `concurrency` keep-alive connections (concurrent GETs) so no measured request pays a connect. */
async function openConnections(agent: Agent, target: Target, concurrency: number): Promise<void> {
  await Promise.all(
    Array.from(
      { length: concurrency },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = request(
            { agent, host: target.host, port: target.port, path: target.warmPath },
            (res) => {
              res.resume();
              res.once("end", () => resolve());
              res.once("error", reject);
            },
          );
          req.once("error", reject);
          req.end();
        }),
    ),
  );
}

/** Runs one closed-loop load against one target and returns every measured stream. */
export async function runLoad(plan: LoadPlan): Promise<LoadResult> {
  if (plan.requestsPerWorker === undefined && plan.durationMs === undefined)
    throw new RangeError("runLoad: give requestsPerWorker or durationMs");
  if (plan.concurrency < 1 || plan.concurrency * (plan.requestsPerWorker ?? 0) > MAX_REQUESTS)
    throw new RangeError("runLoad: concurrency or request count out of bounds");
  const agent = new Agent({
    keepAlive: true,
    maxSockets: plan.concurrency,
    maxFreeSockets: plan.concurrency,
  });
  const body = Buffer.from(plan.body);
  const samples: StreamSample[] = [];
  let errors = 0;
  let sent = 0;
  let firstError: string | undefined;
  try {
    await openConnections(agent, plan.target, plan.concurrency);
    const origin = performance.now();
    const endBy = plan.durationMs === undefined ? Infinity : origin + plan.durationMs;
    const worker = async (index: number): Promise<void> => {
      if (plan.staggerMs > 0) await sleep((index * plan.staggerMs) / plan.concurrency);
      for (let n = 0; ; n++) {
        const measuring = n >= plan.rampRequestsPerWorker;
        if (plan.requestsPerWorker !== undefined && n >= plan.rampRequestsPerWorker + plan.requestsPerWorker)
          return;
        if (measuring && performance.now() >= endBy) return;
        sent += 1;
        try {
          const trace = plan.trace === true ? String(sent) : undefined;
          const sample = await streamOnce(agent, plan.target, body, plan.requestTimeoutMs, origin, trace);
          if (measuring) samples.push(sample);
        } catch (error) {
          errors += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
          if (errors > 100) throw new Error(`${plan.target.label}: too many errors, first: ${firstError}`);
        }
      }
    };
    await Promise.all(Array.from({ length: plan.concurrency }, (_, i) => worker(i)));
    let firstStart = Infinity;
    let lastEnd = -Infinity;
    for (const s of samples) {
      firstStart = Math.min(firstStart, s.startMs);
      lastEnd = Math.max(lastEnd, s.startMs + s.totalMs);
    }
    const elapsedMs = samples.length === 0 ? 0 : lastEnd - firstStart;
    return { samples, sent, errors, firstError, elapsedMs };
  } finally {
    agent.destroy();
  }
}
