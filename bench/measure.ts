/**
 * The per-run measuring the loopback benchmarks share: the streamed chat request they send, a
 * warning for failed streams, one load's figures (time to first byte, first SSE chunk and total
 * stream time at p50/p90/p99, requests/s, chunks/s, reads and events per request), the median of
 * those figures across rounds, and the peak RSS of any process (by pid, from /proc) during a load.
 * Must not know: which benchmark runs, what the targets are, the report's layout.
 */

import { readFileSync } from "node:fs";
import type { LoadResult } from "./load-generator.js";
import { median, percentile } from "./stats.js";

/** A streaming chat completion asking for `tokens` tokens of `model`. */
export function chatBody(model: string, tokens: number): string {
  return JSON.stringify({
    model,
    messages: [{ role: "user", content: "Tell me about proxies." }],
    stream: true,
    max_tokens: tokens,
  });
}

export function warnErrors(label: string, result: LoadResult): void {
  if (result.errors > 0)
    console.error(`  ! ${label}: ${result.errors} failed stream(s), first: ${result.firstError ?? "?"}`);
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

export interface LoadFigures {
  readonly streams: number;
  readonly errors: number;
  readonly ttfb: Percentiles;
  readonly firstChunk: Percentiles;
  readonly total: Percentiles;
  readonly rps: number;
  /** Body reads per second at the client. */
  readonly chunksPerS: number;
  readonly readsPerRequest: number;
  readonly eventsPerRequest: number;
}

function percentiles(values: readonly number[]): Percentiles {
  return { p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99) };
}

export function loadFigures(result: LoadResult): LoadFigures {
  const s = result.samples;
  const n = Math.max(1, s.length);
  let reads = 0;
  let events = 0;
  for (const x of s) {
    reads += x.reads;
    events += x.events;
  }
  const seconds = result.elapsedMs / 1000;
  return {
    streams: s.length,
    errors: result.errors,
    ttfb: percentiles(s.map((x) => x.ttfbMs)),
    firstChunk: percentiles(s.map((x) => x.firstChunkMs)),
    total: percentiles(s.map((x) => x.totalMs)),
    rps: seconds > 0 ? s.length / seconds : 0,
    chunksPerS: seconds > 0 ? reads / seconds : 0,
    readsPerRequest: reads / n,
    eventsPerRequest: events / n,
  };
}

/** Each figure's median across rounds (streams and errors: summed). */
export function medianFigures(rounds: readonly LoadFigures[]): LoadFigures {
  const m = (f: (x: LoadFigures) => number) => median(rounds.map(f));
  const mp = (f: (x: LoadFigures) => Percentiles): Percentiles => ({
    p50: m((x) => f(x).p50),
    p90: m((x) => f(x).p90),
    p99: m((x) => f(x).p99),
  });
  return {
    streams: rounds.reduce((a, x) => a + x.streams, 0),
    errors: rounds.reduce((a, x) => a + x.errors, 0),
    ttfb: mp((x) => x.ttfb),
    firstChunk: mp((x) => x.firstChunk),
    total: mp((x) => x.total),
    rps: m((x) => x.rps),
    chunksPerS: m((x) => x.chunksPerS),
    readsPerRequest: m((x) => x.readsPerRequest),
    eventsPerRequest: m((x) => x.eventsPerRequest),
  };
}

/** Resident set size of a process in bytes (Linux /proc), or NaN when it cannot be read. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "latin1");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? NaN : Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

/** Samples the RSS of `pids` every `everyMs` while `load` runs; returns its value and each pid's peak. */
export async function withPeakRss<T>(
  pids: readonly number[],
  load: () => Promise<T>,
  everyMs = 100,
): Promise<[T, number[]]> {
  const peaks = pids.map(rssBytes);
  const sample = () => pids.forEach((pid, i) => (peaks[i] = Math.max(peaks[i]!, rssBytes(pid))));
  const timer = setInterval(sample, everyMs);
  try {
    const value = await load();
    sample();
    return [value, peaks];
  } finally {
    clearInterval(timer);
  }
}
