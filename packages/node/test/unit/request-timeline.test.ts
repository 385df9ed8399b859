// The benchmarks' per-request timeline: off unless PAIR_TIMELINE_FILE is set (nothing made per
// request), and when on, one JSON line per request with its steps in order, its trace and outcome.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openTimelineFile, startTimeline } from "../../src/observability/request-timeline.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("request timeline", () => {
  it("is off without PAIR_TIMELINE_FILE: no timeline is made", () => {
    expect(process.env["PAIR_TIMELINE_FILE"]).toBeUndefined();
    expect(startTimeline("1")).toBeUndefined();
  });

  it("writes one line per request with its trace, outcome and steps in order", () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-timeline-test-"));
    dirs.push(dir);
    const path = join(dir, "t.jsonl");
    const file = openTimelineFile(path);
    const t = file.start("42");
    t.mark("bodyRead");
    t.mark("slot");
    t.mark("bodyRead"); // a second mark of a step keeps the first time
    t.finish("completed");
    t.finish("cancelled"); // written once
    file.start(["a", "b"]).finish("error");
    file.flush();
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    const first = lines[0] as { trace: string; outcome: string; t0: number; marks: Record<string, number> };
    expect(first.trace).toBe("42");
    expect(first.outcome).toBe("completed");
    expect(Object.keys(first.marks)).toEqual(["bodyRead", "slot", "end"]);
    expect(first.marks["bodyRead"]).toBeGreaterThanOrEqual(0);
    expect(first.marks["slot"]).toBeGreaterThanOrEqual(first.marks["bodyRead"]!);
    expect(first.marks["end"]).toBeGreaterThanOrEqual(first.marks["slot"]!);
    expect(Math.abs(first.t0 - Date.now())).toBeLessThan(5_000);
    expect(lines[1]).toMatchObject({ outcome: "error" });
    expect(lines[1]!["trace"]).toBeUndefined();
    file.close();
  });
});
