// The peer-transport benchmark's pure parts: the command line and its bounds, the rotated order of
// the transports, the medians across rounds, the CPU ratio to h1 as the median of each round's ratio
// (not the ratio of medians), the reads-per-request check, the report's content and the splice
// between its own markers. No timing is measured or asserted here.
import { describe, expect, it } from "vitest";
import {
  PEER_TRANSPORT_MARKERS,
  parsePeerTransportArgs,
  readsMismatch,
  renderPeerTransportReport,
  splicePeerTransportReport,
  summarizeTransports,
  transportOrder,
  type PeerTransportMeta,
  type PeerTransportRound,
  type Transport,
  type TransportRun,
} from "./peer-transport-report.js";

/** One transport's run: `carried` streams, A and B spending `aMs` and `bMs` of CPU in total. */
function run(
  transport: Transport,
  aMs: number,
  bMs: number,
  extra: Partial<Omit<TransportRun, "transport">> = {},
): TransportRun {
  return {
    transport,
    streams: 100,
    errors: 0,
    carried: 100,
    firstChunk: { p50: 1, p90: 2, p99: 3 },
    totalP50: 330,
    streamsPerS: 190,
    readsPerRequest: 65,
    a: { cpuMs: aMs, eventLoopUtilization: 0.5, rssPeakBytes: 80 * 2 ** 20 },
    b: { cpuMs: bMs, eventLoopUtilization: 0.25, rssPeakBytes: 60 * 2 ** 20 },
    ...extra,
  };
}

const meta: PeerTransportMeta = {
  command: "npx tsx bench/peer-transport.ts --quick",
  date: "2026-12-01T05:00:00Z",
  machine: { cpus: 2, cpuModel: "Test CPU", totalMemoryGiB: 8, os: "linux test", node: "v20.20.2" },
  loadAverageAtStart: 1.5,
  loadAverageAtEnd: 1.7,
  wallSeconds: 42,
  rounds: 3,
  streams: 64,
  seconds: 8,
  chunks: 64,
  chunkDelayMs: 5,
};

describe("peer-transport arguments", () => {
  it("defaults to 5 rounds of 8 s at 64 streams, and to 1 round of 2 s with --quick", () => {
    expect(parsePeerTransportArgs([])).toEqual({
      rounds: 5,
      quick: false,
      streams: 64,
      seconds: 8,
      write: false,
      maxSeconds: 600,
    });
    expect(parsePeerTransportArgs(["--quick"])).toMatchObject({ rounds: 1, seconds: 2, quick: true });
    expect(
      parsePeerTransportArgs(["--quick", "--rounds", "3", "--seconds", "4", "--streams", "16", "--write"]),
    ).toMatchObject({ rounds: 3, seconds: 4, streams: 16, write: true });
  });

  it("refuses out-of-range values and unknown flags, naming the flag", () => {
    expect(() => parsePeerTransportArgs(["--rounds", "0"])).toThrow(/--rounds/);
    expect(() => parsePeerTransportArgs(["--rounds", "1.5"])).toThrow(/--rounds/);
    expect(() => parsePeerTransportArgs(["--streams", "513"])).toThrow(/--streams/);
    expect(() => parsePeerTransportArgs(["--seconds", "x"])).toThrow(/--seconds/);
    expect(() => parsePeerTransportArgs(["--max-seconds", "0"])).toThrow(/--max-seconds/);
    expect(() => parsePeerTransportArgs(["--nope"])).toThrow();
  });
});

describe("peer-transport rounds", () => {
  it("rotates the order of the transports by one each round", () => {
    expect(transportOrder(0)).toEqual(["h1", "h2-undici", "h2-node"]);
    expect(transportOrder(1)).toEqual(["h2-undici", "h2-node", "h1"]);
    expect(transportOrder(2)).toEqual(["h2-node", "h1", "h2-undici"]);
    expect(transportOrder(3)).toEqual(transportOrder(0));
  });

  it("takes the CPU ratio to h1 within each round, then the median (not the ratio of medians)", () => {
    // h1's A CPU per stream: 2, 3, 10 ms; h2-node's: 1, 3, 4. Ratios 0.5, 1.0, 0.4 → median 0.5;
    // the ratio of medians would be 3 / 3 = 1.
    const rounds: PeerTransportRound[] = [
      [run("h1", 200, 100), run("h2-node", 100, 100)],
      [run("h2-node", 300, 100), run("h1", 300, 100)],
      [run("h1", 1000, 100), run("h2-node", 400, 100)],
    ];
    const [h1, h2] = summarizeTransports(rounds);
    expect(h1).toMatchObject({ transport: "h1", aCpuMsPerStream: 3, aCpuRatio: 1, bCpuRatio: 1 });
    expect(h2).toMatchObject({ transport: "h2-node", aCpuMsPerStream: 3, aCpuRatio: 0.5, bCpuRatio: 1 });
    // A+B: h1 3, 4, 11 and h2-node 2, 4, 5 → 0.667, 1, 0.4545 → median 0.667.
    expect(h2!.abCpuRatio).toBeCloseTo(2 / 3, 6);
  });

  it("divides CPU by the streams carried in the window (ramp-up and failed ones included)", () => {
    const [s] = summarizeTransports([[run("h1", 300, 150, { carried: 150, streams: 80 })]]);
    expect(s!.aCpuMsPerStream).toBe(2);
    expect(s!.bCpuMsPerStream).toBe(1);
  });

  it("sums failed streams across rounds and keeps the first reason", () => {
    const rounds: PeerTransportRound[] = [
      [run("h1", 1, 1), run("h2-undici", 1, 1, { errors: 2, firstError: "HTTP 502 from bare" })],
      [run("h1", 1, 1), run("h2-undici", 1, 1, { errors: 3 })],
    ];
    const h2 = summarizeTransports(rounds).find((s) => s.transport === "h2-undici");
    expect(h2).toMatchObject({ errors: 5, firstError: "HTTP 502 from bare", streams: 200 });
  });

  it("leaves a given-up load out of the medians and ratios, and shows its failures", () => {
    const gaveUp = run("h2-undici", 0, 0, {
      abandoned: true,
      streams: 0,
      errors: 101,
      firstError: "bare: too many errors, first: socket hang up",
      firstChunk: { p50: NaN, p90: NaN, p99: NaN },
    });
    const rounds: PeerTransportRound[] = [
      [run("h1", 200, 100), run("h2-undici", 100, 50)],
      [run("h1", 200, 100), gaveUp],
    ];
    const h2 = summarizeTransports(rounds).find((s) => s.transport === "h2-undici");
    expect(h2).toMatchObject({ rounds: 1, abandonedRounds: 1, errors: 101, aCpuRatio: 0.5, bCpuRatio: 0.5 });
    expect(h2!.firstChunk.p50).toBe(1);
    const block = renderPeerTransportReport(rounds, meta);
    expect(block).toContain("- h2-undici: at least 101 failed stream(s) (load given up in 1 round(s)");
    expect(block).toMatch(/\|\s+2 \| h1, h2-undici\s+\|\s+3\.000 \|\s+given up \|/);
  });

  it("flags a transport whose client saw a different number of reads per request than h1's", () => {
    const same = summarizeTransports([[run("h1", 1, 1), run("h2-node", 1, 1, { readsPerRequest: 65.2 })]]);
    expect(readsMismatch(same)).toEqual([]);
    const coalesced = summarizeTransports([
      [run("h1", 1, 1), run("h2-undici", 1, 1, { readsPerRequest: 33 }), run("h2-node", 1, 1)],
    ]);
    expect(readsMismatch(coalesced)).toEqual(["h2-undici"]);
  });
});

describe("peer-transport report", () => {
  const rounds: PeerTransportRound[] = [
    [run("h1", 250, 160), run("h2-undici", 200, 110), run("h2-node", 170, 100)],
    [
      run("h2-undici", 210, 120),
      run("h2-node", 160, 90, { errors: 1, firstError: "bare: stream ended without [DONE]" }),
      run("h1", 260, 170),
    ],
  ];

  it("renders the command, machine, load, the medians, the ratios, failures and the per-round spread", () => {
    const block = renderPeerTransportReport(rounds, meta);
    expect(block).toContain("`npx tsx bench/peer-transport.ts --quick`");
    expect(block).toContain("2 CPUs (Test CPU), 8 GiB");
    expect(block).toContain("load average 1.5 at start, 1.7 at end");
    expect(block).toContain("64 concurrent streams");
    expect(block).toMatch(/\| h1: undici Agent \(PAIR until HTTP\/2\)\s+\|\s+1\.00 \/ 2\.00 \/ 3\.00 \|/);
    // h2-node: A 1.70 and 1.60 ms/stream against h1's 2.50 and 2.60 → ratios 0.68, 0.615 → 0.65.
    expect(block).toMatch(
      /\| h2: node:http2 session \(PAIR now\)\s+\|\s+0\.950 \|\s+1\.650 \|\s+0\.58× \|\s+0\.65× \|/,
    );
    expect(block).toMatch(/\|\s+50 \/ 25 \|\s+80 \/ 60 \|/);
    expect(block).toContain("- h2-node: 1 failed stream(s), first: bare: stream ended without [DONE]");
    expect(block).toContain("every transport equal to h1's (no coalescing)");
    expect(block).toMatch(/\|\s+2 \| h2-undici, h2-node, h1 \|\s+4\.300 \|/);
  });

  it("splices between its own markers, appended at the end the first time and replaced after", () => {
    const doc = "# Benchmarks\n\n<!-- peer-hop:begin -->\nx\n<!-- peer-hop:end -->\n\n## Peer transport\n";
    const once = splicePeerTransportReport(doc, "first");
    expect(once.startsWith(doc.trimEnd())).toBe(true);
    expect(once).toContain(`${PEER_TRANSPORT_MARKERS.begin}\n\nfirst\n\n${PEER_TRANSPORT_MARKERS.end}`);
    const twice = splicePeerTransportReport(once, "second");
    expect(twice).not.toContain("first");
    expect(twice).toContain(`${PEER_TRANSPORT_MARKERS.begin}\n\nsecond\n\n${PEER_TRANSPORT_MARKERS.end}`);
    expect(twice).toContain("<!-- peer-hop:begin -->\nx\n<!-- peer-hop:end -->");
  });
});
