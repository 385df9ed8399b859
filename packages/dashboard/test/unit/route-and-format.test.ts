// The dashboard's pure parts: which view a URL fragment names, and how values read.
import { describe, expect, it } from "vitest";
import {
  contextWindows,
  formatCost,
  formatDuration,
  formatHourly,
  formatModels,
  formatRental,
  formatShare,
  formatTokens,
  formatTime,
  stateText,
  stateTone,
  withReadableTimes,
} from "../../src/format.js";
import { parseRoute, routeHref } from "../../src/route.js";

describe("routes", () => {
  it.each([
    ["", { view: "nodes" }],
    ["#/", { view: "nodes" }],
    ["#/nodes", { view: "nodes" }],
    ["#/nodes/gpu-rent", { view: "node", name: "gpu-rent" }],
    ["#/nodes/a%2Fb%20c", { view: "node", name: "a/b c" }],
    ["#/nodes/%E0%A4%A", { view: "nodes" }],
    ["#/jobs", { view: "jobs" }],
    ["#/history", { view: "history" }],
    ["#/batches", { view: "batches" }],
    ["#/elsewhere", { view: "nodes" }],
  ] as const)("%s → %o", (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it("round-trip through their links", () => {
    for (const route of [
      { view: "nodes" },
      { view: "jobs" },
      { view: "history" },
      { view: "batches" },
      { view: "node", name: "odd/name #1" },
    ] as const)
      expect(parseRoute(routeHref(route))).toEqual(route);
  });
});

describe("formats", () => {
  it("times inside a text read like the page's other times", () => {
    const iso = "2026-12-01T00:00:00.000Z";
    const text = `budget exceeded: paused until ${iso}: raise budget.usd_per_day or wait`;
    expect(withReadableTimes(text)).toBe(
      `budget exceeded: paused until ${formatTime(iso)}: raise budget.usd_per_day or wait`,
    );
    expect(withReadableTimes(text)).not.toMatch(/T00:00/);
    expect(withReadableTimes("no time here: 2026-12-01")).toBe("no time here: 2026-12-01");
  });

  it("durations", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(-1)).toBe("—");
    expect(formatDuration(12.4)).toBe("12 ms");
    expect(formatDuration(3_300)).toBe("3.3 s");
    expect(formatDuration(125_000)).toBe("2 min 05 s");
    expect(formatDuration(7_380_000)).toBe("2 h 03 min");
  });

  it("context windows: short token counts, per node and model, only where published", () => {
    expect([32_768, 131_072, 4_000, 8_192].map(formatTokens)).toEqual(["32k", "128k", "4,000", "8k"]);
    const windows = contextWindows([
      {
        model: "qwen-7b",
        nodes: ["laptop", "gpu-box"],
        context_tokens: { laptop: 4_096, "gpu-box": 32_768 },
      },
      { model: "llama-70b", nodes: ["gpu-box", "old"] },
    ]);
    expect(formatModels(["qwen-7b", "llama-70b"], "gpu-box", windows)).toBe(
      "qwen-7b (32k context), llama-70b",
    );
    expect(formatModels(["qwen-7b"], "laptop", windows)).toBe("qwen-7b (4k context)");
    expect(formatModels(["llama-70b"], "old", windows)).toBe("llama-70b");
    expect(formatModels([], "old", windows)).toBe("none");
    expect(formatModels(["qwen-7b"], "laptop", contextWindows(undefined))).toBe("qwen-7b");
  });

  it("prices and costs", () => {
    expect(formatHourly(null)).toBe("—");
    expect(formatHourly(1.8)).toBe("$1.80/hr");
    expect(formatCost(0)).toBe("$0");
    expect(formatCost(0.00421)).toBe("$0.0042");
    expect(formatCost(12.345)).toBe("$12.35");
  });

  it("states, with a tone for each", () => {
    expect(stateText("scaled_to_zero")).toBe("scaled to zero");
    expect(stateTone("running")).toBe("good");
    expect(stateTone("up")).toBe("good");
    expect(stateTone("warming")).toBe("busy");
    expect(stateTone("paused")).toBe("idle");
    expect(stateTone("credential_rejected")).toBe("bad");
    expect(stateTone("down")).toBe("bad");
  });
});

describe("a batch's share by node and its rental", () => {
  it("lists each node's lines done, most first, with its percentage", () => {
    expect(formatShare({ "gpu-job": 80, tower: 120 })).toBe("tower 120 (60%) · gpu-job 80 (40%)");
    expect(formatShare({ b: 1, a: 1 })).toBe("a 1 (50%) · b 1 (50%)");
    expect(formatShare({})).toBe("—");
    expect(formatShare(undefined)).toBe("—");
  });

  it("says what a rental does: never, watching, the rented node with its GPU, state and spend", () => {
    const rent = { state: "watching", node: null, gpu: null, budget_usd: 5, spent_usd: 0, stop_reason: null };
    expect(formatRental(null)).toBe("never rents");
    expect(formatRental(rent)).toBe("watching · $0 of $5.00");
    expect(formatRental({ ...rent, state: "serving", node: "batch-a1", gpu: "L4", spent_usd: 0.42 })).toBe(
      "batch-a1 (L4) serving · $0.42 of $5.00",
    );
    expect(
      formatRental({
        ...rent,
        state: "stopped",
        node: "batch-a1",
        gpu: null,
        budget_usd: null,
        spent_usd: 1.2,
        stop_reason: "finished",
      }),
    ).toBe("batch-a1 stopped (finished) · $1.20");
  });
});
