import { describe, expect, it } from "vitest";
import { estimateCostMicroUsd } from "../src/index.js";

describe("estimateCostMicroUsd", () => {
  it("prices tokens per million (micro-dollars per token), rounded up once", () => {
    const basis = { perMillion: { input: 0.15, output: 0.6 } };
    expect(estimateCostMicroUsd(basis, { tokensIn: 10, tokensOut: 20, durationMs: 5_000 })).toBe(
      Math.ceil(10 * 0.15 + 20 * 0.6),
    );
    expect(estimateCostMicroUsd(basis, { tokensIn: 1_000_000, tokensOut: 0, durationMs: 0 })).toBe(150_000);
  });

  it("falls back to the hourly price for the time held when no counts came", () => {
    // $0.80/h for 4.5 s = 1000 µUSD.
    expect(estimateCostMicroUsd({ usdPerHour: 0.8 }, { durationMs: 4_500 })).toBe(1_000);
    expect(
      estimateCostMicroUsd({ perMillion: { input: 1, output: 1 }, usdPerHour: 0.8 }, { durationMs: 4_500 }),
    ).toBe(1_000);
  });

  it("is 0 with no price", () => {
    expect(estimateCostMicroUsd({}, { tokensIn: 5, tokensOut: 5, durationMs: 60_000 })).toBe(0);
    expect(estimateCostMicroUsd({ usdPerHour: 0 }, { durationMs: 60_000 })).toBe(0);
  });
});
