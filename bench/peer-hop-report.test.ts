// The peer-hop benchmark's pure parts: medians of per-run differences, the target's PASS/MISS at
// every level, the report's content, the splice between its own markers, the served-by check and
// the merged-view check used while waiting for pairing. No timing is measured or asserted here.
import { describe, expect, it } from "vitest";
import { BEGIN_MARKER, END_MARKER, type NodeUse, type StreamMetrics } from "./report.js";
import { headerProblem, type Target } from "./load-generator.js";
import {
  PEER_HOP_MARKERS,
  bareReferenceTable,
  evaluatePeerHopTargets,
  pairedAcrossRuns,
  renderPeerHopReport,
  splicePeerHopReport,
  throughputRatios,
  type PeerHopMeta,
  type PeerHopRun,
} from "./peer-hop-report.js";
import { servesAll } from "./peer-pairing.js";

const use: NodeUse = {
  cpuMsPerStream: 1,
  eventLoopUtilization: 0.5,
  rssPeakBytes: 100 * 2 ** 20,
  loopDelayP99Ms: 2,
  loopDelayMaxMs: 4,
};

function metrics(firstP50: number, totalP50 = 316 + firstP50): StreamMetrics {
  return {
    streams: 100,
    errors: 0,
    firstP50,
    firstP99: firstP50 * 3,
    totalP50,
    totalP99: totalP50 + 5,
  };
}

/** One run where the hop adds `added[c]` ms to the first chunk at each level, over `base` ms direct. */
function run(base: number, added: Record<number, number>, rps: [number, number] = [1000, 800]): PeerHopRun {
  return {
    order: "direct-first",
    streaming: [1, 16, 64].map((c) => ({
      concurrency: c,
      direct: metrics(base),
      viaPeer: metrics(base + added[c]!),
      aUse: use,
      bUseDirect: use,
      bUseViaPeer: use,
    })),
    cpuBound: {
      direct: { rps: rps[0], streams: 5000, errors: 0 },
      viaPeer: { rps: rps[1], streams: 4000, errors: 0 },
      aUse: use,
      bUseDirect: use,
      bUseViaPeer: use,
    },
  };
}

const meta: PeerHopMeta = {
  command: "npx tsx bench/peer-hop.ts",
  date: "2026-11-30T12:00:00Z",
  machine: { cpus: 2, cpuModel: "Test CPU", totalMemoryGiB: 8, os: "linux test", node: "v20.20.2" },
  loadAverageAtStart: 1.5,
  loadAverageAtEnd: 1.7,
  wallSeconds: 200,
  runs: 3,
  tokens: 64,
  tokenDelayMs: 5,
  cpuBoundSeconds: 5,
  cpuBoundConcurrency: 64,
  requestsPerLevel: [
    { concurrency: 1, streams: 20 },
    { concurrency: 16, streams: 96 },
    { concurrency: 64, streams: 320 },
  ],
  nodeA: "bench-a",
  nodeB: "bench-b",
  pairedToServingMs: 1234.4,
  membershipRefreshMs: 5000,
};

describe("peer-hop report", () => {
  it("reports the added time as the median of each run's difference, not the difference of medians", () => {
    // Direct medians 1 and via-peer medians 3 would give +2; the runs' own differences are 0, 0, 10.
    const runs = [
      run(0, { 1: 0, 16: 0, 64: 0 }),
      run(1, { 1: 0, 16: 0, 64: 0 }),
      run(2, { 1: 10, 16: 0, 64: 0 }),
    ];
    const p = pairedAcrossRuns(runs, 1, (m) => m.firstP50);
    expect(p.direct).toBe(1);
    expect(p.viaPeer).toBe(1);
    expect(p.addedRuns).toEqual([0, 0, 10]);
    expect(p.added).toBe(0);
  });

  it("passes the target at every level only when each p50 added is at most 3 ms", () => {
    const runs = [run(1, { 1: 3, 16: 2.5, 64: 3.01 })];
    const results = evaluatePeerHopTargets(runs);
    expect(results.map((r) => [r.name, r.met])).toEqual([
      ["added time to first chunk, p50, 1 streams", true],
      ["added total stream time, p50, 1 streams", true],
      ["added time to first chunk, p50, 16 streams", true],
      ["added total stream time, p50, 16 streams", true],
      ["added time to first chunk, p50, 64 streams", false],
      ["added total stream time, p50, 64 streams", false],
    ]);
    expect(results[4]).toMatchObject({ goal: "≤ 3 ms", measured: "+3.01 ms" });
  });

  it("gives requests/s through A over straight to B per run, NaN when B served nothing", () => {
    expect(throughputRatios([run(0, { 1: 0, 16: 0, 64: 0 }, [1000, 600])])).toEqual([0.6]);
    expect(throughputRatios([run(0, { 1: 0, 16: 0, 64: 0 }, [0, 600])])[0]).toBeNaN();
  });

  it("renders the command, machine, load, both sides per level, the ratio and the target", () => {
    const runs = [
      run(1, { 1: 0.5, 16: 0.7, 64: 4 }, [1000, 700]),
      run(1.2, { 1: 0.6, 16: 0.8, 64: 5 }, [1100, 800]),
      run(0.9, { 1: 0.4, 16: 0.9, 64: 6 }, [900, 700]),
    ];
    const block = renderPeerHopReport(runs, meta);
    expect(block).toContain("npx tsx bench/peer-hop.ts\n```");
    expect(block).toContain("2 logical CPUs (`nproc`), Test CPU, 8 GiB RAM");
    expect(block).toContain("Load average (1 min) at start 1.5, at end 1.7");
    expect(block).toContain("`x-pair-served-by: bench-b`");
    expect(block).toContain("1234 ms after the join (membership refresh 5000 ms)");
    // Time to first chunk at 64 streams: B median 1.00, through A median 6.20, added median +5.00.
    expect(block).toMatch(/\|\s+64 \|\s+1\.00 \|\s+6\.20 \|\s+\+5\.00 \|/);
    // requests/s: medians 1000 and 700; the ratio is the median of the runs' ratios (0.70, 0.73, 0.78).
    expect(block).toMatch(/\| requests\/s \|\s+1000 \|\s+700 \|\s+0\.73× \|/);
    expect(block).toMatch(/added time to first chunk, p50, 64 streams \| ≤ 3 ms \|\s+\+5\.00 ms \| MISS/);
    expect(block).toMatch(/added time to first chunk, p50, 1 streams\s+\| ≤ 3 ms \|\s+\+0\.50 ms \| PASS/);
    expect(block).toContain("| min … max |");
  });

  it("shows the bare relay beside A only when every run measured it", () => {
    const withBare = (r: PeerHopRun, bareAdded: number): PeerHopRun => ({
      ...r,
      streaming: r.streaming.map((l) => ({
        ...l,
        bare: metrics(l.direct.firstP50 + bareAdded),
        bareUse: { ...use, cpuMsPerStream: 0.5 },
      })),
      cpuBound: { ...r.cpuBound, bare: { rps: 950, streams: 4750, errors: 0 }, bareUse: use },
    });
    const plain = [run(1, { 1: 2, 16: 2, 64: 8 }), run(1, { 1: 2, 16: 2, 64: 8 })];
    expect(bareReferenceTable(plain)).toBeUndefined();
    expect(bareReferenceTable([withBare(plain[0]!, 0.5), plain[1]!])).toBeUndefined();
    const table = bareReferenceTable(plain.map((r) => withBare(r, 0.5)));
    expect(table).toMatch(/first chunk p50 added, 64 streams \(ms\)\s+\|\s+\+0\.50 \|\s+\+8\.00 \|/);
    expect(table).toMatch(/requests\/s ÷ B, 0 ms\/token\s+\|\s+0\.95× \|\s+0\.80× \|/);
    expect(
      renderPeerHopReport(
        plain.map((r) => withBare(r, 0.5)),
        meta,
      ),
    ).toContain("bare node:http + undici relay");
    expect(renderPeerHopReport(plain, meta)).not.toContain("bare node:http + undici relay");
  });

  it("refuses to render no runs", () => {
    expect(() => renderPeerHopReport([], meta)).toThrow(/no runs/);
  });

  it("rewrites only its own block and leaves the proxy-overhead block and hand-written text alone", () => {
    const doc = [
      "# Benchmarks",
      "",
      BEGIN_MARKER,
      "",
      "proxy numbers",
      "",
      END_MARKER,
      "",
      "## Peer hop",
      "",
      PEER_HOP_MARKERS.begin,
      "",
      "old peer numbers",
      "",
      PEER_HOP_MARKERS.end,
      "",
      "### Reading these numbers",
      "",
    ].join("\n");
    const out = splicePeerHopReport(doc, "new peer numbers");
    expect(out).toContain("proxy numbers");
    expect(out).toContain("new peer numbers");
    expect(out).not.toContain("old peer numbers");
    expect(out.endsWith("### Reading these numbers\n")).toBe(true);
    expect(splicePeerHopReport(out, "new peer numbers")).toBe(out);
  });

  it("appends its marked block when the document has no peer-hop markers", () => {
    const out = splicePeerHopReport("# Benchmarks\n\ntext\n", "numbers");
    expect(out).toBe(
      `# Benchmarks\n\ntext\n\n${PEER_HOP_MARKERS.begin}\n\nnumbers\n\n${PEER_HOP_MARKERS.end}\n`,
    );
  });
});

describe("checks on the peer-hop replies", () => {
  const viaPeer: Target = {
    label: "via-peer",
    host: "127.0.0.1",
    port: 1,
    chatPath: "/v1/chat/completions",
    warmPath: "/v1/models",
    mustHaveHeader: "x-pair-served-by",
    mustHaveHeaderValue: "bench-b",
  };

  it("accepts a reply served by B and refuses one served elsewhere or unmarked", () => {
    expect(headerProblem(viaPeer, { "x-pair-served-by": "bench-b" })).toBeUndefined();
    expect(headerProblem(viaPeer, { "x-pair-served-by": "bench-a" })).toBe(
      'via-peer: x-pair-served-by is "bench-a", expected "bench-b"',
    );
    expect(headerProblem(viaPeer, {})).toBe("via-peer: no x-pair-served-by header");
    const anyNode: Target = {
      label: "node",
      host: "127.0.0.1",
      port: 1,
      chatPath: "/v1/chat/completions",
      warmPath: "/v1/models",
      mustHaveHeader: "x-pair-served-by",
    };
    expect(headerProblem(anyNode, { "x-pair-served-by": "whoever" })).toBeUndefined();
  });

  it("waits for A's merged view to list B for every model, not just one", () => {
    const rows = [
      { model: "bench-0ms", nodes: ["bench-b"] },
      { model: "bench-5ms", nodes: ["bench-a", "bench-b"] },
    ];
    expect(servesAll(rows, "bench-b", ["bench-5ms", "bench-0ms"])).toBe(true);
    expect(servesAll(rows.slice(1), "bench-b", ["bench-5ms", "bench-0ms"])).toBe(false);
    expect(servesAll(rows, "bench-c", ["bench-5ms"])).toBe(false);
    expect(servesAll({ error: "x" }, "bench-b", ["bench-5ms"])).toBe(false);
  });
});
