/**
 * The peer-transport benchmark's pure parts: its command line (checked), the order of the three
 * transports in each round (rotated), the per-transport medians across rounds, the median across
 * rounds of each transport's CPU as a ratio of HTTP/1.1's in the same round, the markdown report and
 * its splice into bench/results.md between the peer-transport markers; the header by which B tells
 * which HTTP version a request reached it with.
 * Must not know: processes, sockets, TLS, how the numbers were measured.
 */

import { parseArgs } from "node:util";
import { spliceBetween } from "./doc-splice.js";
import type { Percentiles } from "./measure.js";
import type { RunMeta } from "./machine-info.js";
import { table } from "./report.js";
import { median } from "./stats.js";

/** How node A reaches node B: what PAIR does today, and the two HTTP/2 candidates. */
export const TRANSPORTS = ["h1", "h2-undici", "h2-node"] as const;
export type Transport = (typeof TRANSPORTS)[number];

export const TRANSPORT_LABELS: Readonly<Record<Transport, string>> = {
  h1: "h1: undici Agent (PAIR until HTTP/2)",
  "h2-undici": "h2: undici Client allowH2",
  "h2-node": "h2: node:http2 session (PAIR now)",
};

/** B names in this header the HTTP version each request reached it with; A passes it on. */
export const PEER_HTTP_VERSION_HEADER = "x-peer-http-version";

/** The HTTP version (as node's `req.httpVersion`) every request must reach B with over `transport`. */
export function expectedHttpVersion(transport: Transport): "1.1" | "2.0" {
  return transport === "h1" ? "1.1" : "2.0";
}

export interface PeerTransportOptions {
  readonly rounds: number;
  readonly quick: boolean;
  /** Concurrent streams (closed-loop workers). */
  readonly streams: number;
  /** Measured load per transport per round. */
  readonly seconds: number;
  readonly write: boolean;
  readonly maxSeconds: number;
}

export const MAX_ROUNDS = 20;
export const MAX_STREAMS = 512;

/**
 * The command line, checked: `--rounds N` (default 5; 1 with `--quick`), `--streams N` (default 64),
 * `--seconds S` (default 8; 2 with `--quick`), `--write`, `--max-seconds S` (default 600).
 * @throws RangeError naming the flag and its accepted range
 */
export function parsePeerTransportArgs(args: readonly string[]): PeerTransportOptions {
  const { values } = parseArgs({
    args: [...args],
    options: {
      rounds: { type: "string" },
      quick: { type: "boolean", default: false },
      streams: { type: "string", default: "64" },
      seconds: { type: "string" },
      write: { type: "boolean", default: false },
      "max-seconds": { type: "string", default: "600" },
    },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick;
  const rounds = Number(values.rounds ?? (quick ? 1 : 5));
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS)
    throw new RangeError(`--rounds: an integer in [1, ${MAX_ROUNDS}], got ${values.rounds}`);
  const streams = Number(values.streams);
  if (!Number.isInteger(streams) || streams < 1 || streams > MAX_STREAMS)
    throw new RangeError(`--streams: an integer in [1, ${MAX_STREAMS}], got ${values.streams}`);
  const seconds = Number(values.seconds ?? (quick ? 2 : 8));
  if (!(seconds >= 0.5 && seconds <= 120))
    throw new RangeError(`--seconds: a number of seconds in [0.5, 120], got ${values.seconds}`);
  const maxSeconds = Number(values["max-seconds"]);
  if (!(maxSeconds > 0 && maxSeconds <= 24 * 3600))
    throw new RangeError(`--max-seconds: a number of seconds in (0, 86400], got ${values["max-seconds"]}`);
  return { rounds, quick, streams, seconds, write: values.write, maxSeconds };
}

/** Round `round` (0-based) runs the transports in this order: rotated by one each round. */
export function transportOrder(round: number): Transport[] {
  const n = TRANSPORTS.length;
  return TRANSPORTS.map((_, i) => TRANSPORTS[(i + round) % n]!);
}

/** What one process (A or B) used over the measured window. */
export interface ProcessUse {
  readonly cpuMs: number;
  /** 0..1 */
  readonly eventLoopUtilization: number;
  readonly rssPeakBytes: number;
}

/** One transport in one round: the client's figures and what A and B used. */
export interface TransportRun {
  readonly transport: Transport;
  /** Measured streams (each returned 200 and ended with `data: [DONE]`). */
  readonly streams: number;
  /** Failed streams (not sampled), and the first one's reason. */
  readonly errors: number;
  readonly firstError?: string;
  /**
   * The load was given up (the load generator stops after 100 failed streams): `errors` is a lower
   * bound, and no figure of this run enters a median or a ratio.
   */
  readonly abandoned?: boolean;
  /** Streams A and B carried in the sampled window (measured, ramp-up and failed ones). */
  readonly carried: number;
  readonly firstChunk: Percentiles;
  readonly totalP50: number;
  readonly streamsPerS: number;
  readonly readsPerRequest: number;
  readonly a: ProcessUse;
  readonly b: ProcessUse;
}

/** One round: every transport once (in `transportOrder(round)`). */
export type PeerTransportRound = readonly TransportRun[];

export interface TransportSummary {
  readonly transport: Transport;
  /** Rounds whose figures enter the medians (abandoned loads left out). */
  readonly rounds: number;
  readonly abandonedRounds: number;
  readonly streams: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  readonly firstChunk: Percentiles;
  readonly totalP50: number;
  readonly streamsPerS: number;
  readonly aCpuMsPerStream: number;
  readonly bCpuMsPerStream: number;
  readonly aElu: number;
  readonly bElu: number;
  readonly aRssPeakBytes: number;
  readonly bRssPeakBytes: number;
  readonly readsPerRequest: number;
  /** Median across rounds of (this transport's CPU per stream / h1's in the same round). */
  readonly aCpuRatio: number;
  readonly bCpuRatio: number;
  readonly abCpuRatio: number;
}

const perStream = (use: ProcessUse, run: TransportRun): number => use.cpuMs / Math.max(1, run.carried);

/** Each transport's medians across rounds; CPU ratios to h1 are taken within a round, then the median. */
export function summarizeTransports(rounds: readonly PeerTransportRound[]): TransportSummary[] {
  const summaries: TransportSummary[] = [];
  for (const transport of TRANSPORTS) {
    const all: TransportRun[] = [];
    const runs: TransportRun[] = [];
    const ratios = { a: [] as number[], b: [] as number[], ab: [] as number[] };
    for (const round of rounds) {
      const run = round.find((r) => r.transport === transport);
      if (run === undefined) continue;
      all.push(run);
      if (run.abandoned === true) continue;
      runs.push(run);
      const h1 = round.find((r) => r.transport === "h1");
      if (h1 === undefined || h1.abandoned === true) continue;
      const a = perStream(run.a, run);
      const b = perStream(run.b, run);
      const a1 = perStream(h1.a, h1);
      const b1 = perStream(h1.b, h1);
      if (a1 > 0) ratios.a.push(a / a1);
      if (b1 > 0) ratios.b.push(b / b1);
      if (a1 + b1 > 0) ratios.ab.push((a + b) / (a1 + b1));
    }
    if (all.length === 0) continue;
    const m = (f: (r: TransportRun) => number) => median(runs.map(f));
    summaries.push({
      transport,
      rounds: runs.length,
      abandonedRounds: all.length - runs.length,
      streams: all.reduce((s, r) => s + r.streams, 0),
      errors: all.reduce((s, r) => s + r.errors, 0),
      firstError: all.find((r) => r.firstError !== undefined)?.firstError,
      firstChunk: {
        p50: m((r) => r.firstChunk.p50),
        p90: m((r) => r.firstChunk.p90),
        p99: m((r) => r.firstChunk.p99),
      },
      totalP50: m((r) => r.totalP50),
      streamsPerS: m((r) => r.streamsPerS),
      aCpuMsPerStream: m((r) => perStream(r.a, r)),
      bCpuMsPerStream: m((r) => perStream(r.b, r)),
      aElu: m((r) => r.a.eventLoopUtilization),
      bElu: m((r) => r.b.eventLoopUtilization),
      aRssPeakBytes: m((r) => r.a.rssPeakBytes),
      bRssPeakBytes: m((r) => r.b.rssPeakBytes),
      readsPerRequest: m((r) => r.readsPerRequest),
      aCpuRatio: median(ratios.a),
      bCpuRatio: median(ratios.b),
      abCpuRatio: median(ratios.ab),
    });
  }
  return summaries;
}

/**
 * Transports whose client saw a different number of reads per request than h1's (median across
 * rounds, more than half a read apart): a relay that coalesces chunks, which the comparison must not
 * reward. Empty when every transport matches (or h1 was not measured).
 */
export function readsMismatch(summaries: readonly TransportSummary[]): Transport[] {
  const h1 = summaries.find((s) => s.transport === "h1");
  if (h1 === undefined) return [];
  return summaries
    .filter((s) => s.transport !== "h1" && !(Math.abs(s.readsPerRequest - h1.readsPerRequest) <= 0.5))
    .map((s) => s.transport);
}

/** The run's command, date, machine, load and wall time (as the other reports have them), and its load. */
export interface PeerTransportMeta extends RunMeta {
  readonly rounds: number;
  readonly streams: number;
  readonly seconds: number;
  readonly chunks: number;
  readonly chunkDelayMs: number;
}

const f2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
const f3 = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : "n/a");
const pct = (v: number): string => (Number.isFinite(v) ? (v * 100).toFixed(0) : "n/a");
const mib = (v: number): string => (Number.isFinite(v) ? (v / 2 ** 20).toFixed(0) : "n/a");
const ratio = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "n/a");

/** The markdown block (without markers): setup, one table of medians, CPU ratios, failures, checks. */
export function renderPeerTransportReport(
  rounds: readonly PeerTransportRound[],
  meta: PeerTransportMeta,
): string {
  const summaries = summarizeTransports(rounds);
  const m = meta.machine;
  const latency = table(
    ["transport", "first chunk p50 / p90 / p99 ms", "total p50 ms", "streams/s", "reads/req", "failed"],
    [false, true, true, true, true, true],
    summaries.map((s) => [
      TRANSPORT_LABELS[s.transport],
      `${f2(s.firstChunk.p50)} / ${f2(s.firstChunk.p90)} / ${f2(s.firstChunk.p99)}`,
      f2(s.totalP50),
      s.streamsPerS.toFixed(1),
      f2(s.readsPerRequest),
      String(s.errors),
    ]),
  );
  const use = table(
    [
      "transport",
      "B CPU ms/stream",
      "A CPU ms/stream",
      "B ÷ h1",
      "A ÷ h1",
      "A+B ÷ h1",
      "A / B loop busy %",
      "A / B RSS peak MiB",
    ],
    [false, true, true, true, true, true, true, true],
    summaries.map((s) => [
      TRANSPORT_LABELS[s.transport],
      f3(s.bCpuMsPerStream),
      f3(s.aCpuMsPerStream),
      ratio(s.bCpuRatio),
      ratio(s.aCpuRatio),
      ratio(s.abCpuRatio),
      `${pct(s.aElu)} / ${pct(s.bElu)}`,
      `${mib(s.aRssPeakBytes)} / ${mib(s.bRssPeakBytes)}`,
    ]),
  );
  const failures = summaries
    .filter((s) => s.errors > 0)
    .map(
      (s) =>
        `- ${s.transport}: ${s.abandonedRounds > 0 ? "at least " : ""}${s.errors} failed stream(s)` +
        (s.abandonedRounds > 0
          ? ` (load given up in ${s.abandonedRounds} round(s), left out of the medians)`
          : "") +
        `, first: ${s.firstError ?? "?"}`,
    );
  const mismatch = readsMismatch(summaries);
  const perRound = table(
    [
      "round",
      "order",
      "h1 A+B ms/stream",
      "h2-undici A+B",
      "h2-node A+B",
      "first p50 h1 / h2-undici / h2-node",
    ],
    [true, false, true, true, true, true],
    rounds.map((round, i) => {
      const by = (t: Transport) => round.find((r) => r.transport === t);
      const cpu = (t: Transport) => {
        const r = by(t);
        if (r?.abandoned === true) return "given up";
        return r === undefined ? "n/a" : f3(perStream(r.a, r) + perStream(r.b, r));
      };
      const p50 = (t: Transport) => {
        const r = by(t);
        return r === undefined || r.abandoned === true ? "n/a" : f2(r.firstChunk.p50);
      };
      return [
        String(i + 1),
        round.map((r) => r.transport).join(", "),
        cpu("h1"),
        cpu("h2-undici"),
        cpu("h2-node"),
        `${p50("h1")} / ${p50("h2-undici")} / ${p50("h2-node")}`,
      ];
    }),
  );
  return [
    `Run ${meta.date}: \`${meta.command}\` (${meta.wallSeconds.toFixed(0)} s).`,
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.totalMemoryGiB} GiB, ${m.os}, Node ${m.node}; ` +
      `load average ${meta.loadAverageAtStart} at start, ${meta.loadAverageAtEnd} at end.`,
    `Load: ${meta.streams} concurrent streams (closed loop, each worker's first stream staggered and not ` +
      `measured) of ${meta.chunks} SSE chunks ${meta.chunkDelayMs} ms apart, ${meta.seconds} s per ` +
      `transport per round, ${meta.rounds} round(s), transports in rotated order, fresh A and B ` +
      `processes for each. Client → A (node:http, 127.0.0.1) → B (TLS 1.3, mutual, pinned ` +
      `certificates). ` +
      `A stream counts only with HTTP 200, \`data: [DONE]\` at its end, and B's word ` +
      `(\`${PEER_HTTP_VERSION_HEADER}\`) that it came over HTTP/1.1 for h1 and HTTP/2 for h2.`,
    "",
    `Medians across rounds (CPU ratios: median of each round's ratio to h1):`,
    "",
    latency,
    "",
    use,
    "",
    ...(failures.length > 0 ? ["Failed streams (not sampled):", "", ...failures, ""] : []),
    mismatch.length === 0
      ? "Reads per request at the client: every transport equal to h1's (no coalescing)."
      : `Reads per request at the client: **differ from h1's** for ${mismatch.join(", ")} ` +
        "(chunks coalesced or split).",
    "",
    "Per round:",
    "",
    perRound,
  ].join("\n");
}

export const PEER_TRANSPORT_MARKERS = {
  begin: "<!-- peer-transport:begin — generated by `bench/peer-transport.ts --write` -->",
  end: "<!-- peer-transport:end -->",
} as const;

/** `doc` with `block` between the peer-transport markers (appended at the end if they are absent). */
export function splicePeerTransportReport(doc: string | undefined, block: string): string {
  return spliceBetween(doc, block, PEER_TRANSPORT_MARKERS);
}
