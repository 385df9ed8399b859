import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkloadHistory, workloadJson } from "../../src/history/workload-history.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(now: { ms: number }, maxRows = 100, maxDays = 30, path?: string) {
  const dir = mkdtempSync(join(tmpdir(), "pair-history-"));
  dirs.push(dir);
  return new WorkloadHistory({ path: path ?? join(dir, "h.db"), maxRows, maxDays, nowMs: () => now.ms });
}

const base = { model: "m", route: "/v1/chat/completions", originNode: "node-a", requester: "local" };

describe("WorkloadHistory", () => {
  it("shows running workloads, then records how they ended", () => {
    const now = { ms: 1_000 };
    const h = open(now);
    const w = h.begin({ ...base, id: "w1", startedAtMs: 1_000 });
    expect(h.running().map((r) => r.id)).toEqual(["w1"]);
    w.servingNode = "node-a";
    w.firstByteMs = 12;
    w.tokensOut = 8;
    now.ms = 1_500;
    h.finish(w, "completed");
    expect(h.running()).toEqual([]);
    expect(workloadJson(h.history()[0]!)).toMatchObject({
      id: "w1",
      status: "completed",
      duration_ms: 500,
      first_byte_ms: 12,
      tokens_out: 8,
      tokens_in: null,
      est_cost_usd: 0,
      off_lan: false,
    });
    h.close();
  });

  it("marks workloads a crashed process left running as interrupted", () => {
    const now = { ms: 1_000 };
    const dir = mkdtempSync(join(tmpdir(), "pair-history-"));
    dirs.push(dir);
    const path = join(dir, "h.db");
    const first = open(now, 100, 30, path);
    first.begin({ ...base, id: "w1", startedAtMs: 1_000 });
    first.close(); // the process dies without finishing w1
    const second = open(now, 100, 30, path);
    expect(second.history()[0]).toMatchObject({ id: "w1", status: "interrupted" });
    second.close();
  });

  it("keeps at most maxRows finished rows and nothing older than maxDays", () => {
    const now = { ms: 10 * 86_400_000 };
    const h = open(now, 3, 2);
    for (let i = 0; i < 6; i += 1) {
      const w = h.begin({ ...base, id: `w${i}`, startedAtMs: now.ms - (5 - i) * 3_600_000 });
      h.finish(w, "completed");
    }
    const old = h.begin({ ...base, id: "old", startedAtMs: now.ms - 3 * 86_400_000 });
    h.finish(old, "completed");
    h.prune();
    expect(h.history().map((r) => r.id)).toEqual(["w5", "w4", "w3"]);
    h.close();
  });
});
