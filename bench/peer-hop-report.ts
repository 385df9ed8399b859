/**
 * The peer-hop benchmark's results as markdown: for each load, the reply straight from node B (the
 * baseline: client → B → engine) beside the reply through node A (client → A → B → engine over the
 * cluster's mTLS), the added time as the median of each run's difference, the target (p50
 * added ≤ 3 ms) with PASS/MISS, the CPU-bound requests/s ratio, what each node's process spent, a
 * bare relay in front of B as a reference when measured, and the per-run spread. Also the splice into bench/results.md between the peer-hop markers.
 * Must not know: processes, sockets, pairing, how the numbers were measured.
 */

import { spliceBetween } from "./doc-splice.js";
import type { RunMeta } from "./machine-info.js";
import { table, type NodeUse, type StreamMetrics, type TargetResult, type Throughput } from "./report.js";
import { max, median, min } from "./stats.js";

/** One concurrency level of one run. */
export interface PeerHopLevel {
  readonly concurrency: number;
  /** Client → B → engine. */
  readonly direct: StreamMetrics;
  /** Client → A → B → engine. */
  readonly viaPeer: StreamMetrics;
  /** Node A's process while it carried the via-peer load. */
  readonly aUse: NodeUse;
  /** Node B's process during the direct load, and during the via-peer load. */
  readonly bUseDirect: NodeUse;
  readonly bUseViaPeer: NodeUse;
  /** Client → bare relay → B → engine, and the relay's process, when measured (`--bare-proxy`). */
  readonly bare?: StreamMetrics;
  readonly bareUse?: NodeUse;
}

export interface PeerHopCpuBound {
  readonly direct: Throughput;
  readonly viaPeer: Throughput;
  readonly aUse: NodeUse;
  readonly bUseDirect: NodeUse;
  readonly bUseViaPeer: NodeUse;
  readonly bare?: Throughput;
  readonly bareUse?: NodeUse;
}

export interface PeerHopRun {
  /** Which side this run measured first at every load (the order alternates between runs). */
  readonly order: "direct-first" | "peer-first";
  readonly streaming: readonly PeerHopLevel[];
  readonly cpuBound: PeerHopCpuBound;
}

export interface PeerHopMeta extends RunMeta {
  readonly runs: number;
  readonly tokens: number;
  readonly tokenDelayMs: number;
  readonly cpuBoundSeconds: number;
  readonly cpuBoundConcurrency: number;
  readonly requestsPerLevel: readonly { readonly concurrency: number; readonly streams: number }[];
  /** Names of the two nodes (`x-pair-served-by` must name B on every reply). */
  readonly nodeA: string;
  readonly nodeB: string;
  /** From the join's answer until A listed B's models. */
  readonly pairedToServingMs: number;
  /** A's membership refresh, ms. */
  readonly membershipRefreshMs: number;
}

/** Issue 5's target: what the peer hop may add at p50, at every concurrency level. */
export const PEER_HOP_TARGETS = { addedP50Ms: 3 } as const;

const ms2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
const ms1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : "n/a");
const signed = (v: number, digits: number): string =>
  Number.isFinite(v) ? `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(digits)}` : "n/a";

type Pick = (m: StreamMetrics) => number;
const firstP50: Pick = (m) => m.firstP50;
const firstP99: Pick = (m) => m.firstP99;
const totalP50: Pick = (m) => m.totalP50;
const totalP99: Pick = (m) => m.totalP99;

function levels(runs: readonly PeerHopRun[]): number[] {
  return runs[0]?.streaming.map((s) => s.concurrency) ?? [];
}

function atLevel(run: PeerHopRun, concurrency: number): PeerHopLevel {
  const level = run.streaming.find((s) => s.concurrency === concurrency);
  if (!level) throw new Error(`peer-hop report: a run has no results at ${concurrency} streams`);
  return level;
}

export interface Paired {
  readonly direct: number;
  readonly viaPeer: number;
  /** Median of the runs' (via peer − direct), not the difference of the two medians. */
  readonly added: number;
  readonly addedRuns: readonly number[];
}

/** Medians across runs at one level: direct to B, through A, and what the hop added. */
export function pairedAcrossRuns(runs: readonly PeerHopRun[], concurrency: number, pick: Pick): Paired {
  const direct = runs.map((r) => pick(atLevel(r, concurrency).direct));
  const viaPeer = runs.map((r) => pick(atLevel(r, concurrency).viaPeer));
  const addedRuns = runs.map((_, i) => viaPeer[i]! - direct[i]!);
  return { direct: median(direct), viaPeer: median(viaPeer), added: median(addedRuns), addedRuns };
}

/** Requests/s through A ÷ straight to B, per run. */
export function throughputRatios(runs: readonly PeerHopRun[]): number[] {
  return runs.map((r) => (r.cpuBound.direct.rps > 0 ? r.cpuBound.viaPeer.rps / r.cpuBound.direct.rps : NaN));
}

/** The target, at every level: p50 added time to first chunk and p50 added total stream time. */
export function evaluatePeerHopTargets(runs: readonly PeerHopRun[]): TargetResult[] {
  const goal = `≤ ${PEER_HOP_TARGETS.addedP50Ms} ms`;
  return levels(runs).flatMap((c) =>
    (
      [
        ["added time to first chunk", firstP50],
        ["added total stream time", totalP50],
      ] as const
    ).map(([what, pick]) => {
      const added = pairedAcrossRuns(runs, c, pick).added;
      return {
        name: `${what}, p50, ${c} streams`,
        goal,
        measured: `${signed(added, 2)} ms`,
        met: added <= PEER_HOP_TARGETS.addedP50Ms,
      };
    }),
  );
}

function latencyTable(
  runs: readonly PeerHopRun[],
  p50: Pick,
  p99: Pick,
  fmt: (v: number) => string,
  digits: number,
): string {
  const rows = levels(runs).map((c) => {
    const a = pairedAcrossRuns(runs, c, p50);
    const b = pairedAcrossRuns(runs, c, p99);
    return [
      String(c),
      fmt(a.direct),
      fmt(a.viaPeer),
      signed(a.added, digits),
      fmt(b.direct),
      fmt(b.viaPeer),
      signed(b.added, digits),
    ];
  });
  return table(
    ["streams", "p50 B", "p50 A → B", "p50 added", "p99 B", "p99 A → B", "p99 added"],
    [true, true, true, true, true, true, true],
    rows,
  );
}

function processTable(runs: readonly PeerHopRun[]): string {
  const row = (
    label: string,
    a: readonly NodeUse[],
    bDirect: readonly NodeUse[],
    bViaPeer: readonly NodeUse[],
  ) => [
    label,
    median(bDirect.map((u) => u.cpuMsPerStream)).toFixed(3),
    median(bViaPeer.map((u) => u.cpuMsPerStream)).toFixed(3),
    median(a.map((u) => u.cpuMsPerStream)).toFixed(3),
    median(a.map((u) => u.eventLoopUtilization * 100)).toFixed(0),
    median(bViaPeer.map((u) => u.eventLoopUtilization * 100)).toFixed(0),
    `${median(a.map((u) => u.loopDelayP99Ms)).toFixed(1)} / ${median(a.map((u) => u.loopDelayMaxMs)).toFixed(1)}`,
    `${median(bViaPeer.map((u) => u.loopDelayP99Ms)).toFixed(1)} / ${median(bViaPeer.map((u) => u.loopDelayMaxMs)).toFixed(1)}`,
  ];
  const rows = levels(runs).map((c) =>
    row(
      `${c} streams, paced`,
      runs.map((r) => atLevel(r, c).aUse),
      runs.map((r) => atLevel(r, c).bUseDirect),
      runs.map((r) => atLevel(r, c).bUseViaPeer),
    ),
  );
  rows.push(
    row(
      "CPU-bound",
      runs.map((r) => r.cpuBound.aUse),
      runs.map((r) => r.cpuBound.bUseDirect),
      runs.map((r) => r.cpuBound.bUseViaPeer),
    ),
  );
  return table(
    [
      "load",
      "B CPU/stream, direct (ms)",
      "B CPU/stream, via A (ms)",
      "A CPU/stream (ms)",
      "A loop busy (%)",
      "B loop busy via A (%)",
      "A loop delay p99 / max (ms)",
      "B loop delay via A p99 / max (ms)",
    ],
    [false, true, true, true, true, true, true, true],
    rows,
  );
}

function spreadTable(runs: readonly PeerHopRun[]): string {
  const cs = levels(runs);
  const added = cs.map((c) => pairedAcrossRuns(runs, c, firstP50).addedRuns);
  const ratio = throughputRatios(runs);
  const rows = runs.map((r, i) => [
    String(i + 1),
    r.order === "direct-first" ? "B, then A" : "A, then B",
    ...added.map((a) => signed(a[i]!, 2)),
    ratio[i]!.toFixed(2),
  ]);
  rows.push([
    "min … max",
    "",
    ...added.map((a) => `${signed(min(a), 2)} … ${signed(max(a), 2)}`),
    `${min(ratio).toFixed(2)} … ${max(ratio).toFixed(2)}`,
  ]);
  return table(
    ["run", "order", ...cs.map((c) => `first chunk p50 added, ${c} (ms)`), "rps ratio"],
    [false, false, ...cs.map(() => true), true],
    rows,
  );
}

function failedStreams(runs: readonly PeerHopRun[]): number {
  return runs.reduce(
    (sum, r) =>
      sum +
      r.cpuBound.direct.errors +
      r.cpuBound.viaPeer.errors +
      (r.cpuBound.bare?.errors ?? 0) +
      r.streaming.reduce((s, l) => s + l.direct.errors + l.viaPeer.errors + (l.bare?.errors ?? 0), 0),
    0,
  );
}

/**
 * The bare relay in front of B beside A, both as added time over B (medians of per-run
 * differences), or undefined unless every run measured it.
 */
export function bareReferenceTable(runs: readonly PeerHopRun[]): string | undefined {
  if (
    runs.length === 0 ||
    runs.some((r) => r.cpuBound.bare === undefined || r.streaming.some((l) => l.bare === undefined))
  )
    return undefined;
  const bareAdded = (c: number, pick: Pick) =>
    median(runs.map((r) => pick(atLevel(r, c).bare!) - pick(atLevel(r, c).direct)));
  const rows: string[][] = [];
  for (const [what, pick] of [
    ["first chunk p50", firstP50],
    ["first chunk p99", firstP99],
    ["total p50", totalP50],
  ] as const)
    for (const c of levels(runs))
      rows.push([
        `${what} added, ${c} streams (ms)`,
        signed(bareAdded(c, pick), 2),
        signed(pairedAcrossRuns(runs, c, pick).added, 2),
      ]);
  rows.push([
    "requests/s ÷ B, 0 ms/token",
    `${median(runs.map((r) => r.cpuBound.bare!.rps / r.cpuBound.direct.rps)).toFixed(2)}×`,
    `${median(throughputRatios(runs)).toFixed(2)}×`,
  ]);
  rows.push([
    "CPU per stream of the hop's process, 64 paced streams (ms)",
    median(runs.map((r) => atLevel(r, 64).bareUse?.cpuMsPerStream ?? NaN)).toFixed(3),
    median(runs.map((r) => atLevel(r, 64).aUse.cpuMsPerStream)).toFixed(3),
  ]);
  rows.push([
    "CPU per stream of the hop's process, 0 ms/token (ms)",
    median(runs.map((r) => r.cpuBound.bareUse?.cpuMsPerStream ?? NaN)).toFixed(3),
    median(runs.map((r) => r.cpuBound.aUse.cpuMsPerStream)).toFixed(3),
  ]);
  return table(["", "bare relay → B", "A → B (mTLS)"], [false, true, true], rows);
}

/** The generated block (without markers). */
export function renderPeerHopReport(runs: readonly PeerHopRun[], meta: PeerHopMeta): string {
  if (runs.length === 0) throw new Error("peer-hop report: no runs to report");
  const m = meta.machine;
  const cb = runs.map((r) => r.cpuBound);
  const targets = evaluatePeerHopTargets(runs);
  const perLevel = meta.requestsPerLevel.map((l) => `${l.streams} at ${l.concurrency}`).join(", ");
  return [
    `### Last run: ${meta.date}`,
    "",
    "```sh",
    meta.command,
    "```",
    "",
    `- Machine: ${m.cpus} logical CPUs (\`nproc\`), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}, Node ${m.node}.`,
    `- Load average (1 min) at start ${meta.loadAverageAtStart}, at end ${meta.loadAverageAtEnd}; wall time ${Math.round(meta.wallSeconds)} s.`,
    `- ${meta.runs} run(s); every figure is the **median across runs**; "added" is the median of each run's (A → B) − B.`,
    `- Streams measured per side and run: ${perLevel} concurrent streams; ${meta.cpuBoundSeconds} s of CPU-bound load per side. ` +
      `Failed streams: ${failedStreams(runs)}. Every reply, every way, carried \`x-pair-served-by: ${meta.nodeB}\`.`,
    `- ${meta.nodeA} (no engine) was paired with ${meta.nodeB} by PIN; it listed ${meta.nodeB}'s models ` +
      `${Math.round(meta.pairedToServingMs)} ms after the join (membership refresh ${meta.membershipRefreshMs} ms).`,
    "",
    `#### Time to first chunk (ms), ${meta.tokens} tokens at ${meta.tokenDelayMs} ms/token`,
    "",
    latencyTable(runs, firstP50, firstP99, ms2, 2),
    "",
    `#### Total stream time (ms), ${meta.tokens} tokens at ${meta.tokenDelayMs} ms/token`,
    "",
    latencyTable(runs, totalP50, totalP99, ms1, 1),
    "",
    `#### CPU-bound: ${meta.cpuBoundConcurrency} streams of ${meta.tokens} tokens at 0 ms/token, ${meta.cpuBoundSeconds} s`,
    "",
    table(
      ["", "B", "A → B", "A → B ÷ B"],
      [false, true, true, true],
      [
        [
          "requests/s",
          median(cb.map((c) => c.direct.rps)).toFixed(0),
          median(cb.map((c) => c.viaPeer.rps)).toFixed(0),
          `${median(throughputRatios(runs)).toFixed(2)}×`,
        ],
      ],
    ),
    "",
    "#### The nodes' processes during each load",
    "",
    processTable(runs),
    "",
    ...((b) =>
      b === undefined
        ? []
        : [
            "#### Reference: a bare node:http + undici relay in front of B, same run (`--bare-proxy`)",
            "",
            b,
            "",
          ])(bareReferenceTable(runs)),
    "#### Target (issue 5)",
    "",
    table(
      ["target", "goal", "measured", "result"],
      [false, false, true, false],
      targets.map((t) => [t.name, t.goal, t.measured, t.met ? "PASS" : "MISS"]),
    ),
    "",
    "Per run (the spread behind the medians):",
    "",
    spreadTable(runs),
  ].join("\n");
}

export const PEER_HOP_MARKERS = {
  begin: "<!-- peer-hop:begin — generated by `bench/peer-hop.ts --write` -->",
  end: "<!-- peer-hop:end -->",
} as const;

/** `doc` with `block` between the peer-hop markers (appended at the end if they are absent). */
export function splicePeerHopReport(doc: string | undefined, block: string): string {
  return spliceBetween(doc, block, PEER_HOP_MARKERS);
}
