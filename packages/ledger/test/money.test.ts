// Integer money: billed granules, rounding, token prices.
import { describe, expect, it } from "vitest";
import {
  formatMicroUsd,
  granulesCostMicroUsd,
  granulesStartedBefore,
  productDivCeil,
  tokenCostMicroUsd,
} from "@pair/ledger";
import { DAY, HOUR, MIN, PER_TOKEN, SEC } from "./fixtures.js";

describe("billed granules", () => {
  it("a granule is billed once it has started, not at the instant it starts", () => {
    expect(granulesStartedBefore(0, MIN, 0)).toBe(0);
    expect(granulesStartedBefore(0, MIN, 1)).toBe(1);
    expect(granulesStartedBefore(0, MIN, MIN)).toBe(1);
    expect(granulesStartedBefore(0, MIN, MIN + 1)).toBe(2);
    expect(granulesStartedBefore(5_000, SEC, 4_000)).toBe(0);
    expect(granulesStartedBefore(5_000, SEC, 15_500)).toBe(11);
  });

  it("costs round up once for all granules at a rate, not per granule", () => {
    // One minute at $0.80/hr is 13 333.33 µUSD.
    expect(granulesCostMicroUsd(1, MIN, 800_000)).toBe(13_334);
    expect(granulesCostMicroUsd(7, MIN, 800_000)).toBe(93_334);
    expect(granulesCostMicroUsd(8, MIN, 800_000)).toBe(106_667);
    expect(granulesCostMicroUsd(60, MIN, 800_000)).toBe(800_000);
  });

  it("stays exact where a float product would not (a month per second at $40/hr)", () => {
    const seconds = (30 * DAY) / SEC;
    expect(granulesCostMicroUsd(seconds, SEC, 40_000_000)).toBe(40_000_000 * 30 * 24);
    expect(productDivCeil([2 ** 40, 2 ** 20], 2 ** 30)).toBe(2 ** 30);
    expect(productDivCeil([HOUR + 1, 1], HOUR)).toBe(2);
  });
});

describe("token costs", () => {
  it("price input and output tokens per million and round up to the micro-dollar", () => {
    expect(tokenCostMicroUsd({ inputTokens: 1_000_000, outputTokens: 1_000_000 }, PER_TOKEN)).toBe(800_000);
    expect(tokenCostMicroUsd({ inputTokens: 1, outputTokens: 0 }, PER_TOKEN)).toBe(1);
    expect(tokenCostMicroUsd({ inputTokens: 0, outputTokens: 0 }, PER_TOKEN)).toBe(0);
    expect(tokenCostMicroUsd({ inputTokens: 1_000, outputTokens: 500 }, PER_TOKEN)).toBe(500);
  });

  it("formats micro-dollars for people", () => {
    expect(formatMicroUsd(93_334)).toBe("$0.093334");
    expect(formatMicroUsd(12_000_000)).toBe("$12.000000");
    expect(formatMicroUsd(-5)).toBe("-$0.000005");
  });
});
