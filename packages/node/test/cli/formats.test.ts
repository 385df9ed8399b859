// The pure parts of the CLI: `--since` parsing, table layout, value formats, shell words.
import { describe, expect, it } from "vitest";
import { parseSince } from "../../src/cli/parse-since.js";
import { formatDurationMs, formatStartedAt, formatUsd, renderTable } from "../../src/cli/text-table.js";

const NOW = Date.parse("2025-06-10T12:00:00Z");

describe("--since", () => {
  it.each([
    ["90s", "2025-06-10T11:58:30.000Z"],
    ["15m", "2025-06-10T11:45:00.000Z"],
    ["2h", "2025-06-10T10:00:00.000Z"],
    ["1d", "2025-06-09T12:00:00.000Z"],
    ["1w", "2025-06-03T12:00:00.000Z"],
    ["1h30m", "2025-06-10T10:30:00.000Z"],
    ["1.5h", "2025-06-10T10:30:00.000Z"],
    ["0s", "2025-06-10T12:00:00.000Z"],
  ])("a duration back from now: %s", (text, iso) => {
    expect(parseSince(text, NOW)).toEqual({ ok: true, iso });
  });

  it.each([
    ["2025-06-01T14:00:00Z", "2025-06-01T14:00:00.000Z"],
    ["2025-06-01T14:00:00.250Z", "2025-06-01T14:00:00.250Z"],
    ["2025-06-01T14:00+02:00", "2025-06-01T12:00:00.000Z"],
    ["2025-06-01T14:00-0130", "2025-06-01T15:30:00.000Z"],
  ])("an ISO time with a zone: %s", (text, iso) => {
    expect(parseSince(text, NOW)).toEqual({ ok: true, iso });
  });

  it("an ISO time without a zone is local time; a date alone is local midnight", () => {
    expect(parseSince("2025-06-01T14:00", NOW)).toEqual({
      ok: true,
      iso: new Date(2025, 5, 1, 14, 0).toISOString(),
    });
    expect(parseSince("2025-06-01", NOW)).toEqual({ ok: true, iso: new Date(2025, 5, 1).toISOString() });
    expect(parseSince("2025-06-01 14:00", NOW)).toEqual({
      ok: true,
      iso: new Date(2025, 5, 1, 14, 0).toISOString(),
    });
  });

  it.each([
    "",
    "yesterday",
    "15",
    "m15",
    "15 m",
    "-15m",
    "2025-13-01",
    "2025-02-30",
    "2025-06-01T25:00",
    "99999d",
  ])("refuses %j", (text) => {
    const r = parseSince(text, NOW);
    expect(r.ok).toBe(false);
  });
});

describe("tables", () => {
  it("pads columns, right-aligns numbers and trims line ends", () => {
    expect(
      renderTable(
        [{ header: "MODEL" }, { header: "N", align: "right" }, { header: "NODES" }],
        [
          ["llama3.2:1b", "7", "a"],
          ["q", "1234", "node-b, node-c"],
        ],
      ),
    ).toEqual(["MODEL           N  NODES", "llama3.2:1b     7  a", "q            1234  node-b, node-c"]);
  });

  it("formats durations, times and dollars", () => {
    expect([null, 3, 999.6, 1_250, 59_999, 125_000, 3_723_000].map(formatDurationMs)).toEqual([
      "-",
      "3 ms",
      "1000 ms",
      "1.3 s",
      "60.0 s",
      "2m05s",
      "1h02m",
    ]);
    expect([0, 0.00042, 1.254].map(formatUsd)).toEqual(["$0", "$0.0004", "$1.25"]);
    const today = new Date(2025, 5, 10, 9, 5, 7);
    expect(formatStartedAt(today.toISOString(), today.getTime() + 1_000)).toBe("09:05:07");
    expect(formatStartedAt(new Date(2025, 4, 2, 23, 1).toISOString(), today.getTime())).toBe(
      "2025-05-02 23:01",
    );
  });
});
