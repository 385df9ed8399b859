// Units: durations in the unit their key names (fractions valid) become whole milliseconds, budgets
// become whole micro-dollars, `~` expands against the home directory passed in.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { parse, rentedNode } from "./config-fixtures.js";

const hfNode = (extra: string): string =>
  `rented_nodes:\n  - { name: h, provider: huggingface-endpoint, endpoint: ns/e, credential: os-credential-store:hf, budget: { usd_per_day: 1 }, ${extra} }\n`;

describe("fractional durations", () => {
  test.each([
    ["cold_start_s: 0.5", "timeouts: { cold_start_s: 0.5 }", { coldStartMs: 500 }],
    ["cold_start_s: 0.001", "timeouts: { cold_start_s: 0.001 }", { coldStartMs: 1 }],
    ["cold_start_s: 1.2345 (rounded to the ms)", "timeouts: { cold_start_s: 1.2345 }", { coldStartMs: 1235 }],
  ])("%s", (_label, extra, expected) => {
    expect(parse(hfNode(extra)).rentedNodes[0]?.timeouts).toEqual(expected);
  });

  test("minutes: idle_pause_min 0.1 is 6 s, exact despite floating point", () => {
    expect(
      parse(hfNode("lifecycle: { idle_pause_min: 0.1, exit_timeout_s: 2.5 }")).rentedNodes[0]?.lifecycle,
    ).toMatchObject({
      idlePauseMs: 6_000,
      exitTimeoutMs: 2_500,
    });
  });

  test("engine probe interval and first-byte timeout", () => {
    const [engine] = parse(
      "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1, probe_interval_s: 0.25, first_byte_timeout_s: 7.5 }\n",
    ).engines;
    expect(engine).toMatchObject({ probeIntervalMs: 250, firstByteTimeoutMs: 7_500 });
  });

  test("history days", () => {
    expect(parse("node: { history: { max_days: 0.5 } }\n").node.history.maxAgeMs).toBe(43_200_000);
  });

  test("any positive number of seconds up to a week is whole milliseconds within half a millisecond", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 604_800, noNaN: true }), (seconds) => {
        const ms =
          parse(hfNode(`timeouts: { cold_start_s: ${seconds} }`)).rentedNodes[0]?.timeouts.coldStartMs ?? 0;
        expect(Number.isSafeInteger(ms)).toBe(true);
        expect(Math.abs(ms - seconds * 1000)).toBeLessThanOrEqual(0.5);
      }),
      { numRuns: 200 },
    );
  });
});

describe("budgets in micro-dollars", () => {
  test.each([
    [10, 10_000_000],
    [0.1, 100_000],
    [0.57, 570_000],
    [0.000001, 1],
    [1234.56, 1_234_560_000],
  ])("usd_per_day %s → %s µUSD", (usd, micro) => {
    expect(parse(rentedNode(`budget: { usd_per_day: ${usd} }`)).rentedNodes[0]?.budget).toEqual({
      budgetMicroUsdPerDay: micro,
    });
  });

  test("no budget key is no cap", () => {
    expect(parse(rentedNode("")).rentedNodes[0]?.budget).toEqual({});
    expect(parse(rentedNode("budget: { usd_per_day: null }")).rentedNodes[0]?.budget).toEqual({});
  });
});

describe("~ expansion", () => {
  test.each([
    ["~", "/home/ada"],
    ["~/pair", "/home/ada/pair"],
    ["~/a/../b/", "/home/ada/b/"],
    ["/var/lib/pair", "/var/lib/pair"],
  ])("data_dir %s → %s", (given, expected) => {
    expect(parse(`node: { data_dir: "${given}" }\n`).node.dataDir).toBe(expected);
  });

  test("the home directory comes from the caller", () => {
    const config = parseConfig("tls: { extra_ca_file: ~/ca.pem }\n", "x", {
      homeDir: "/Users/bo",
      hostName: "b",
    });
    expect(config.tls.extraCaFile).toBe("/Users/bo/ca.pem");
    expect(config.node.dataDir).toBe("/Users/bo/.local/share/pair");
  });
});

describe("URLs are normalised", () => {
  test.each([
    ["https://GPU.Example.com:443/v1/", "https://gpu.example.com/v1"],
    ["https://gpu.example.com:8443/v1", "https://gpu.example.com:8443/v1"],
    ["http://127.1:9000/v1", "http://127.0.0.1:9000/v1"],
    ["http://[0:0::1]:9000/v1", "http://[::1]:9000/v1"],
  ])("%s → %s", (given, expected) => {
    const [node] = parse(rentedNode("").replace("https://gpu.example.com/v1", given)).rentedNodes;
    expect(node !== undefined && "baseUrl" in node ? node.baseUrl : undefined).toBe(expected);
  });
});
