// The daily cost chart's numbers: costs summed per local day, the last N days with zeros where no
// work ran, work outside the window left out; and `#/add` is the Add rented GPU view.
import { describe, expect, it } from "vitest";
import { dailyCosts, dayKey } from "../../src/daily-cost.js";
import { parseRoute, routeHref } from "../../src/route.js";
import type { Workload } from "../../src/wire.js";

function work(startedAt: Date, usd: number): Workload {
  return { started_at: startedAt.toISOString(), est_cost_usd: usd } as unknown as Workload;
}

describe("dailyCosts", () => {
  it("sums per local day over the last N days, oldest first, zeros included", () => {
    const now = new Date(2026, 10, 30, 15, 0).getTime();
    const days = dailyCosts(
      [
        work(new Date(2026, 10, 30, 9, 0), 0.25),
        work(new Date(2026, 10, 30, 0, 5), 0.5),
        work(new Date(2026, 10, 28, 23, 59), 1),
        work(new Date(2026, 10, 10, 12, 0), 100), // before the window
      ],
      now,
      7,
    );
    expect(days.map((d) => d.day)).toEqual([
      "2026-11-24",
      "2026-11-25",
      "2026-11-26",
      "2026-11-27",
      "2026-11-28",
      "2026-11-29",
      "2026-11-30",
    ]);
    expect(days.map((d) => d.usd)).toEqual([0, 0, 0, 0, 1, 0, 0.75]);
    expect(days[6]?.workloads).toBe(2);
    expect(dayKey(now)).toBe("2026-11-30");
  });
});

describe("the add route", () => {
  it("parses and writes #/add", () => {
    expect(parseRoute("#/add")).toEqual({ view: "add" });
    expect(routeHref({ view: "add" })).toBe("#/add");
  });
});
