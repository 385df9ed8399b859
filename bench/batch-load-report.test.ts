// The batch-load report's verdict: medians of each round's ratio, and the two targets.
import { describe, expect, it } from "vitest";
import { batchLoadVerdict, type BatchLoadRound } from "./batch-load-report.js";
import type { LoadFigures } from "./measure.js";

const fig = (p50: number, p99: number): LoadFigures => ({
  streams: 16,
  errors: 0,
  ttfb: { p50, p90: p50, p99 },
  firstChunk: { p50, p90: p50, p99 },
  total: { p50: 320, p90: 320, p99: 320 },
  rps: 12,
  chunksPerS: 800,
  readsPerRequest: 65,
  eventsPerRequest: 67,
});
const round = (idle: number, busy: number, share: number): BatchLoadRound => ({
  idle: fig(idle, idle * 2),
  underBatch: fig(busy, busy * 4),
  busyShare: share,
  batchLinesDone: 100,
});

describe("batch-load verdict", () => {
  it("takes the median of the rounds' ratios, not the ratio of the medians", () => {
    const v = batchLoadVerdict([round(2, 2.2, 0.97), round(1, 3, 0.9), round(4, 4.4, 0.96)]);
    expect(v).toEqual({ p50Ratio: 1.1, p99Ratio: 2.2, busyShare: 0.96, p50Met: true, busyMet: true });
  });

  it("misses when a batch slows the users' first chunk or leaves the engine idle", () => {
    const v = batchLoadVerdict([round(2, 2.6, 0.94), round(2, 2.6, 0.94)]);
    expect([v.p50Met, v.busyMet]).toEqual([false, false]);
  });
});
