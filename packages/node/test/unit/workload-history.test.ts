import { withWallClock } from "@pair/cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WorkloadHistory, workloadJson } from "../../src/history/workload-history.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(now: { ms: number }, maxRows = 100, maxDays = 30, path?: string) {
  const dir = mkdtempSync(join(tmpdir(), "pair-history-"));
  dirs.push(dir);
  return new WorkloadHistory({
    path: path ?? join(dir, "h.db"),
    maxRows,
    maxDays,
    runtime: withWallClock(() => now.ms),
  });
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

  it("tells the last workload to finish from memory, without a flush", () => {
    const now = { ms: 1_000 };
    const h = open(now);
    expect(h.lastFinishedId()).toBeNull();
    const a = h.begin({ ...base, id: "a", startedAtMs: 1_000 });
    const b = h.begin({ ...base, id: "b", startedAtMs: 1_001 });
    h.finish(b, "completed");
    expect(h.lastFinishedId()).toBe("b");
    h.finish(a, "failed", "upstream_error");
    expect(h.lastFinishedId()).toBe("a");
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

  it("counts the rows it finds at open and trims from the old end, leaving running rows alone", () => {
    const now = { ms: 10 * 86_400_000 };
    const dir = mkdtempSync(join(tmpdir(), "pair-history-"));
    dirs.push(dir);
    const path = join(dir, "h.db");
    const first = open(now, 1_000, 30, path);
    for (let i = 0; i < 8; i += 1)
      first.finish(first.begin({ ...base, id: `a${i}`, startedAtMs: 1_000 + i }), "completed");
    first.close();
    // Reopened with a smaller bound: the 8 rows already there count.
    const h = open(now, 5, 30, path);
    const running = h.begin({ ...base, id: "run", startedAtMs: 500 });
    h.finish(h.begin({ ...base, id: "b0", startedAtMs: 2_000 }), "completed");
    h.prune();
    expect(h.history().map((r) => r.id)).toEqual(["b0", "a7", "a6", "a5", "a4"]);
    // Pruned again with nothing new: nothing more goes; the running row (oldest of all) is kept.
    h.prune();
    expect(h.history()).toHaveLength(5);
    h.finish(running, "completed");
    h.prune();
    expect(h.history().map((r) => r.id)).toEqual(["b0", "a7", "a6", "a5", "a4"]);
    h.close();
  });

  it("moves the rows of a database keyed by id alone (the old layout) to the table keyed by start time", () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-history-"));
    dirs.push(dir);
    const path = join(dir, "h.db");
    const old = new Database(path);
    old.exec(`CREATE TABLE workloads (id TEXT PRIMARY KEY, model TEXT NOT NULL, route TEXT NOT NULL,
      origin_node TEXT NOT NULL, requester TEXT NOT NULL, started_at_ms INTEGER NOT NULL, serving_node TEXT,
      engine TEXT, sponsor TEXT, off_lan INTEGER NOT NULL, status TEXT NOT NULL, first_byte_ms INTEGER,
      duration_ms INTEGER, tokens_in INTEGER, tokens_out INTEGER, est_cost_micro_usd INTEGER NOT NULL,
      error_code TEXT) STRICT;
      CREATE INDEX workloads_started ON workloads (started_at_ms);`);
    const insert = old.prepare(
      `INSERT INTO workloads (id, model, route, origin_node, requester, started_at_ms, off_lan, status,
        est_cost_micro_usd, tokens_out) VALUES (?, 'm', '/api/chat', 'node-a', 'local', ?, 0, ?, 0, ?)`,
    );
    insert.run("a", 1_000, "completed", 5);
    insert.run("b", 2_000, "running", null);
    old.close();

    const now = { ms: 3_000 };
    const h = open(now, 100, 30, path);
    expect(h.history().map((w) => [w.id, w.status, w.tokensOut ?? null, w.attempts])).toEqual([
      ["b", "interrupted", null, []],
      ["a", "completed", 5, []],
    ]);
    // Rows written now land in the new table, and a running row is updated in place when it ends.
    const w = h.begin({ ...base, id: "c", startedAtMs: 2_500 });
    h.flush();
    h.finish(w, "completed");
    expect(h.history().map((r) => `${r.id}:${r.status}`)).toEqual([
      "c:completed",
      "b:interrupted",
      "a:completed",
    ]);
    h.close();

    const check = new Database(path, { readonly: true });
    const key = check
      .prepare("SELECT name, pk FROM pragma_table_info('workloads') WHERE pk > 0 ORDER BY pk")
      .all();
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all();
    check.close();
    expect(key).toEqual([
      { name: "started_at_ms", pk: 1 },
      { name: "id", pk: 2 },
    ]);
    expect(tables.map((t) => (t as { name: string }).name).sort()).toEqual(["workloads"]);
  });

  it("writes a workload once however often it changed between two flushes, and updates a running row", () => {
    const now = { ms: 1_000 };
    const h = open(now);
    const a = h.begin({ ...base, id: "a", startedAtMs: 1_000 });
    const b = h.begin({ ...base, id: "b", startedAtMs: 1_000 });
    h.flush();
    h.finish(a, "completed");
    h.finish(b, "failed", "upstream_error");
    expect(h.history().map((r) => `${r.id}:${r.status}:${r.errorCode ?? "-"}`)).toEqual([
      "b:failed:upstream_error",
      "a:completed:-",
    ]);
    h.close();
  });
});
