// Spend over time: billed granules land in the buckets they billed, token usage at its dispatch,
// outside the window nothing, and the buckets sum to the entries exactly (integer micro-USD).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LedgerEntry } from "../src/entries.js";
import { spendSeries } from "../src/spend-series.js";

const H = 3_600_000;
const MIN = 60_000;

function billed(atMs: number, granules: number, amountMicroUsd: number, granularityMs = MIN): LedgerEntry {
  return {
    kind: "billed-time",
    seq: 0,
    reservationId: "r",
    nodeId: "gpu",
    atMs,
    amountMicroUsd,
    recordedAtMs: atMs,
    deploymentId: "d",
    firstGranule: 0,
    granules,
    granularityMs,
    rateMicroUsdPerHour: 0,
  };
}

function tokens(atMs: number, amountMicroUsd: number): LedgerEntry {
  return {
    kind: "token-usage",
    seq: 0,
    reservationId: "r",
    nodeId: "gpu",
    atMs,
    amountMicroUsd,
    recordedAtMs: atMs,
    requestId: "q",
    inputTokens: 1,
    outputTokens: 1,
    usageReported: true,
    estimateMicroUsd: amountMicroUsd,
  };
}

describe("spendSeries", () => {
  it("spreads a 90-minute billed run over the two hours it billed", () => {
    const points = spendSeries([billed(30 * MIN, 90, 900_000)], { fromMs: 0, bucketMs: H, buckets: 3 });
    expect(points.map((p) => p.microUsd)).toEqual([300_000, 600_000, 0]);
    expect(points.map((p) => p.startMs)).toEqual([0, H, 2 * H]);
  });

  it("puts token usage at its dispatch and leaves out what falls outside the window", () => {
    const points = spendSeries([tokens(H + 5, 42), tokens(-1, 7), tokens(3 * H, 9)], {
      fromMs: 0,
      bucketMs: H,
      buckets: 3,
    });
    expect(points.map((p) => p.microUsd)).toEqual([0, 42, 0]);
  });

  it("refuses an empty or zero-width window", () => {
    expect(() => spendSeries([], { fromMs: 0, bucketMs: 0, buckets: 3 })).toThrow(RangeError);
    expect(() => spendSeries([], { fromMs: 0, bucketMs: H, buckets: 0 })).toThrow(RangeError);
  });

  it("sums to the entries exactly when the window covers them (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 20 * H }), fc.integer({ min: 1, max: 240 }), fc.nat(10_000_000)),
          {
            maxLength: 20,
          },
        ),
        (runs) => {
          const entries = runs.map(([at, granules, amount]) => billed(at, granules, amount));
          const total = entries.reduce((s, e) => s + e.amountMicroUsd, 0);
          const points = spendSeries(entries, { fromMs: 0, bucketMs: H, buckets: 25 });
          expect(points.reduce((s, p) => s + p.microUsd, 0)).toBe(total);
          for (const p of points) expect(Number.isInteger(p.microUsd)).toBe(true);
        },
      ),
    );
  });
});
