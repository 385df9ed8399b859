/**
 * The proxy-overhead benchmark's results as markdown: medians across runs (direct baseline, through
 * the node, the added time or the ratio), the targets of issue 4 with PASS/MISS, the per-run spread
 * of the target metrics, and where the node spent CPU. Also the splice that puts the generated block
 * into bench/results.md between its markers, leaving the hand-written text around it alone.
 * Must not know: processes, sockets, how the numbers were measured.
 */

import { spliceBetween } from "./doc-splice.js";
import { max, median, min } from "./stats.js";
import type { RunMeta } from "./machine-info.js";

/** One target's summary of one load: latency percentiles in ms. */
export interface StreamMetrics {
  readonly streams: number;
  readonly errors: number;
  readonly firstP50: number;
  readonly firstP99: number;
  readonly totalP50: number;
  readonly totalP99: number;
}

/** Node resource use while it carried one load. */
export interface NodeUse {
  readonly cpuMsPerStream: number;
  readonly eventLoopUtilization: number;
  readonly rssPeakBytes: number;
  /** How late the node's event loop ran a 10 ms timer: its stalls. */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
}

export interface Throughput {
  readonly rps: number;
  readonly streams: number;
  readonly errors: number;
}

export interface CpuBoundRun {
  readonly direct: Throughput;
  readonly node: Throughput;
  /** The reference bare proxy, when measured (`--bare-proxy`). */
  readonly bare?: Throughput;
  readonly bareUse?: NodeUse;
  readonly engineCpuMsPerStreamDirect: number;
  readonly engineCpuMsPerStreamViaNode: number;
  readonly nodeUse: NodeUse;
}

export interface RunResult {
  readonly streaming: readonly {
    readonly concurrency: number;
    readonly direct: StreamMetrics;
    readonly node: StreamMetrics;
    readonly bare?: StreamMetrics;
    readonly nodeUse: NodeUse;
    /** The bare proxy's process during its load, when measured. */
    readonly bareUse?: NodeUse;
  }[];
  readonly cpuBound: CpuBoundRun;
  readonly nodeRssIdleBytes: number;
}

export interface ReportMeta extends RunMeta {
  readonly runs: number;
  readonly tokens: number;
  readonly tokenDelayMs: number;
  readonly cpuBoundSeconds: number;
  readonly cpuBoundConcurrency: number;
  readonly requestsPerLevel: readonly { readonly concurrency: number; readonly streams: number }[];
  readonly lockstep: boolean;
  /** Requests the node served, warm-up included: rows in its workload history at the end. */
  readonly nodeHistoryRows: number;
}

export interface TargetResult {
  readonly name: string;
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean;
}

/** The issue's targets, for 64 streams (first-chunk added time) and the CPU-bound ratio. */
export const TARGETS = { addedFirstP50Ms: 1, addedFirstP99Ms: 6, cpuBoundRatio: 0.8 } as const;
const TARGET_STREAMS = 64;

const MiB = 2 ** 20;
const ms2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
const ms1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : "n/a");
const signed = (v: number, digits: number): string =>
  Number.isFinite(v) ? `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(digits)}` : "n/a";
const mib = (bytes: number): string => (Number.isFinite(bytes) ? (bytes / MiB).toFixed(1) : "n/a");

/** A markdown table with padded columns (readable as plain text too). */
export function table(
  headers: readonly string[],
  rightAligned: readonly boolean[],
  rows: readonly string[][],
) {
  const widths = headers.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells
      .map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (rightAligned[i] ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

type Pick = (m: StreamMetrics) => number;

function levels(runs: readonly RunResult[]): number[] {
  return runs[0]?.streaming.map((s) => s.concurrency) ?? [];
}

function atLevel(run: RunResult, concurrency: number) {
  const level = run.streaming.find((s) => s.concurrency === concurrency);
  if (!level) throw new Error(`no results at ${concurrency} streams`);
  return level;
}

/** Medians across runs of direct, node, and the per-run difference node − direct. */
function paired(runs: readonly RunResult[], concurrency: number, pick: Pick) {
  const direct = runs.map((r) => pick(atLevel(r, concurrency).direct));
  const node = runs.map((r) => pick(atLevel(r, concurrency).node));
  const added = runs.map((_, i) => node[i]! - direct[i]!);
  return { direct: median(direct), node: median(node), added: median(added), addedRuns: added };
}

export function evaluateTargets(runs: readonly RunResult[]): TargetResult[] {
  const p50 = paired(runs, TARGET_STREAMS, (m) => m.firstP50).added;
  const p99 = paired(runs, TARGET_STREAMS, (m) => m.firstP99).added;
  const ratio = median(runs.map((r) => r.cpuBound.node.rps / r.cpuBound.direct.rps));
  return [
    {
      name: `added time to first chunk, p50, ${TARGET_STREAMS} streams`,
      goal: `≤ ${TARGETS.addedFirstP50Ms} ms`,
      measured: `${signed(p50, 2)} ms`,
      met: p50 <= TARGETS.addedFirstP50Ms,
    },
    {
      name: `added time to first chunk, p99, ${TARGET_STREAMS} streams`,
      goal: `≤ ${TARGETS.addedFirstP99Ms} ms`,
      measured: `${signed(p99, 2)} ms`,
      met: p99 <= TARGETS.addedFirstP99Ms,
    },
    {
      name: "requests/s through the node ÷ direct, 0 ms/token",
      goal: `≥ ${TARGETS.cpuBoundRatio}×`,
      measured: `${ratio.toFixed(2)}×`,
      met: ratio >= TARGETS.cpuBoundRatio,
    },
  ];
}

function latencyTable(runs: readonly RunResult[], p50: Pick, p99: Pick, fmt: (v: number) => string): string {
  const digits = fmt === ms2 ? 2 : 1;
  const rows = levels(runs).map((c) => {
    const a = paired(runs, c, p50);
    const b = paired(runs, c, p99);
    return [
      String(c),
      fmt(a.direct),
      fmt(a.node),
      signed(a.added, digits),
      fmt(b.direct),
      fmt(b.node),
      signed(b.added, digits),
    ];
  });
  return table(
    ["streams", "p50 direct", "p50 node", "p50 added", "p99 direct", "p99 node", "p99 added"],
    [true, true, true, true, true, true, true],
    rows,
  );
}

function spreadTable(runs: readonly RunResult[]): string {
  const p50 = paired(runs, TARGET_STREAMS, (m) => m.firstP50).addedRuns;
  const p99 = paired(runs, TARGET_STREAMS, (m) => m.firstP99).addedRuns;
  const ratio = runs.map((r) => r.cpuBound.node.rps / r.cpuBound.direct.rps);
  const rows = runs.map((_, i) => [
    String(i + 1),
    signed(p50[i]!, 2),
    signed(p99[i]!, 2),
    ratio[i]!.toFixed(2),
  ]);
  rows.push([
    "min … max",
    `${signed(min(p50), 2)} … ${signed(max(p50), 2)}`,
    `${signed(min(p99), 2)} … ${signed(max(p99), 2)}`,
    `${min(ratio).toFixed(2)} … ${max(ratio).toFixed(2)}`,
  ]);
  return table(
    ["run", "added first chunk p50 (ms)", "added first chunk p99 (ms)", "rps ratio"],
    [false, true, true, true],
    rows,
  );
}

function nodeUseTable(runs: readonly RunResult[]): string {
  const withBare = runs.every((r) => r.cpuBound.bareUse !== undefined);
  const row = (label: string, use: readonly NodeUse[], bare: readonly (NodeUse | undefined)[]) => [
    label,
    median(use.map((u) => u.cpuMsPerStream)).toFixed(3),
    ...(withBare ? [median(bare.map((u) => u?.cpuMsPerStream ?? NaN)).toFixed(3)] : []),
    median(use.map((u) => u.eventLoopUtilization * 100)).toFixed(0),
    median(use.map((u) => u.loopDelayP99Ms)).toFixed(1),
    median(use.map((u) => u.loopDelayMaxMs)).toFixed(1),
  ];
  const rows = levels(runs).map((c) =>
    row(
      `${c} streams, 5 ms/token`,
      runs.map((r) => atLevel(r, c).nodeUse),
      runs.map((r) => atLevel(r, c).bareUse),
    ),
  );
  rows.push(
    row(
      "64 streams, 0 ms/token",
      runs.map((r) => r.cpuBound.nodeUse),
      runs.map((r) => r.cpuBound.bareUse),
    ),
  );
  return table(
    [
      "load",
      "node CPU per stream (ms)",
      ...(withBare ? ["bare proxy CPU per stream (ms)"] : []),
      "node event loop busy (%)",
      "node loop delay p99 (ms)",
      "node loop delay max (ms)",
    ],
    [false, true, true, true, true, true],
    rows,
  );
}

/** The reference bare proxy beside the node, both as added time over direct (medians of per-run differences). */
function bareTable(runs: readonly RunResult[]): string | undefined {
  if (runs.some((r) => r.cpuBound.bare === undefined || r.streaming.some((l) => l.bare === undefined)))
    return undefined;
  const bareAdded = (c: number, pick: Pick) =>
    median(runs.map((r) => pick(atLevel(r, c).bare!) - pick(atLevel(r, c).direct)));
  const rows = levels(runs).map((c) => [
    `first chunk p50 added, ${c} streams (ms)`,
    signed(
      bareAdded(c, (m) => m.firstP50),
      2,
    ),
    signed(paired(runs, c, (m) => m.firstP50).added, 2),
  ]);
  rows.push(
    ...levels(runs).map((c) => [
      `first chunk p99 added, ${c} streams (ms)`,
      signed(
        bareAdded(c, (m) => m.firstP99),
        2,
      ),
      signed(paired(runs, c, (m) => m.firstP99).added, 2),
    ]),
  );
  rows.push([
    "requests/s ÷ direct, 0 ms/token",
    `${median(runs.map((r) => r.cpuBound.bare!.rps / r.cpuBound.direct.rps)).toFixed(2)}×`,
    `${median(runs.map((r) => r.cpuBound.node.rps / r.cpuBound.direct.rps)).toFixed(2)}×`,
  ]);
  return table(["", "bare proxy", "PAIR node"], [false, true, true], rows);
}

/** The generated block (without markers). */
export function renderReport(runs: readonly RunResult[], meta: ReportMeta): string {
  const m = meta.machine;
  const cb = runs.map((r) => r.cpuBound);
  const direct = median(cb.map((c) => c.direct.rps));
  const node = median(cb.map((c) => c.node.rps));
  const ratio = median(cb.map((c) => c.node.rps / c.direct.rps));
  const errors = runs.reduce(
    (sum, r) =>
      sum +
      r.cpuBound.direct.errors +
      r.cpuBound.node.errors +
      (r.cpuBound.bare?.errors ?? 0) +
      r.streaming.reduce((s, l) => s + l.direct.errors + l.node.errors + (l.bare?.errors ?? 0), 0),
    0,
  );
  const targets = evaluateTargets(runs);
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
    `- ${meta.runs} run(s); every figure is the **median across runs**; "added" is the median of each run's node − direct.`,
    `- Streams measured per target and run: ${perLevel} concurrent streams; ${meta.cpuBoundSeconds} s of CPU-bound load. ` +
      `Failed streams: ${errors}.`,
    `- The node started with an empty workload history and held ${meta.nodeHistoryRows} rows at the end (one per request).`,
    `- Start: ${meta.lockstep ? "all workers at once (lock-step)" : "workers' first streams spread over one stream's duration, first stream of each worker not measured"}.`,
    "",
    `#### Time to first chunk (ms), ${meta.tokens} tokens at ${meta.tokenDelayMs} ms/token`,
    "",
    latencyTable(
      runs,
      (x) => x.firstP50,
      (x) => x.firstP99,
      ms2,
    ),
    "",
    `#### Total stream time (ms), ${meta.tokens} tokens at ${meta.tokenDelayMs} ms/token`,
    "",
    latencyTable(
      runs,
      (x) => x.totalP50,
      (x) => x.totalP99,
      ms1,
    ),
    "",
    `#### CPU-bound: ${meta.cpuBoundConcurrency} streams of ${meta.tokens} tokens at 0 ms/token, ${meta.cpuBoundSeconds} s`,
    "",
    table(
      ["", "direct", "node", "node ÷ direct"],
      [false, true, true, true],
      [["requests/s", direct.toFixed(0), node.toFixed(0), `${ratio.toFixed(2)}×`]],
    ),
    "",
    `Engine emulator CPU per stream: ${median(cb.map((c) => c.engineCpuMsPerStreamDirect)).toFixed(3)} ms direct, ` +
      `${median(cb.map((c) => c.engineCpuMsPerStreamViaNode)).toFixed(3)} ms via the node.`,
    "",
    "#### Node memory (RSS of the node's process, MiB)",
    "",
    table(
      ["state", "RSS"],
      [false, true],
      [
        ["idle, after warm-up", mib(median(runs.map((r) => r.nodeRssIdleBytes)))],
        [
          `peak during ${TARGET_STREAMS} streams at ${meta.tokenDelayMs} ms/token`,
          mib(median(runs.map((r) => atLevel(r, TARGET_STREAMS).nodeUse.rssPeakBytes))),
        ],
        ["peak during the CPU-bound load", mib(median(cb.map((c) => c.nodeUse.rssPeakBytes)))],
      ],
    ),
    "",
    "#### The node's process during each load",
    "",
    nodeUseTable(runs),
    "",
    ...((b) =>
      b === undefined
        ? []
        : ["#### Reference: a bare node:http + undici relay, same run (`--bare-proxy`)", "", b, ""])(
      bareTable(runs),
    ),
    "#### Targets (issue 4)",
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

export const BEGIN_MARKER = "<!-- proxy-overhead:begin — generated by `bench/proxy-overhead.ts --write` -->";
export const END_MARKER = "<!-- proxy-overhead:end -->";

/** Puts `block` between the proxy-overhead markers of `doc` (appending the markers if absent). */
export function spliceReport(doc: string | undefined, block: string): string {
  return spliceBetween(doc, block, { begin: BEGIN_MARKER, end: END_MARKER });
}
