// History rows are written in batches, on the event loop (the default) or by a worker thread with its
// own connection (opt-in); with either, rows still queued when the process gets SIGTERM are all in
// the file after a graceful close, rows posted on the timer reach the file without anyone asking,
// and the event loop's connection reads what was written.
import { SYSTEM_RUNTIME, withWallClock } from "@pair/cluster";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WorkloadHistory } from "../../src/history/workload-history.js";

const CHILD = fileURLToPath(new URL("./history-writer-child.ts", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "pair-history-thread-"));
  dirs.push(dir);
  return join(dir, "history.db");
}

function countRows(path: string): { finished: number; running: number } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db
      .prepare(
        "SELECT SUM(status = 'completed') AS finished, SUM(status = 'running') AS running FROM workloads",
      )
      .get() as { finished: number | null; running: number | null };
    return { finished: row.finished ?? 0, running: row.running ?? 0 };
  } finally {
    db.close();
  }
}

const base = { model: "m", route: "/v1/chat/completions", originNode: "node-a", requester: "local" };

describe.each(["loop", "thread"] as const)("history writer (%s)", (writer) => {
  it("writes every queued row before a SIGTERM'd process exits", async () => {
    const path = tempDb();
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, path, "2000", writer], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        if (d.toString().includes("ready")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`child exited ${code} before ready: ${stderr}`)));
    });
    // Nothing was flushed yet: the batch is pending in the child.
    expect(countRows(path)).toEqual({ finished: 0, running: 0 });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(countRows(path)).toEqual({ finished: 2000, running: 1 });
    // The next start sees the one left running as interrupted, and every finished row.
    const next = new WorkloadHistory({ path, maxRows: 100_000, maxDays: 30, runtime: SYSTEM_RUNTIME });
    const rows = next.history({ limit: 5000 });
    expect(rows).toHaveLength(2001);
    expect(rows.filter((r) => r.status === "interrupted").map((r) => r.id)).toEqual(["late"]);
    expect(rows.find((r) => r.id === "w1999")).toMatchObject({ status: "completed", tokensOut: 1999 });
    next.close();
  }, 20_000);

  it("posts rows on its timer without a caller asking, and the reading connection sees them", async () => {
    const path = tempDb();
    const now = { ms: 1_000 };
    const h = new WorkloadHistory({
      path,
      maxRows: 100,
      maxDays: 30,
      runtime: withWallClock(() => now.ms),
      flushIntervalMs: 20,
      writeOnThread: writer === "thread",
    });
    h.finish(h.begin({ ...base, id: "w1", startedAtMs: 1_000 }), "completed");
    const deadline = Date.now() + 5_000;
    while (countRows(path).finished === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(countRows(path).finished).toBe(1);
    expect(h.history().map((r) => r.id)).toEqual(["w1"]);
    h.close();
  });
});

describe("history writer thread", () => {
  it("writes a `:memory:` database on the event loop (no other thread can open it)", () => {
    const h = new WorkloadHistory({
      path: ":memory:",
      maxRows: 10,
      maxDays: 30,
      runtime: withWallClock(() => 1_000),
      writeOnThread: true,
    });
    h.finish(h.begin({ ...base, id: "m1", startedAtMs: 1_000 }), "failed", "upstream_error");
    expect(h.history()[0]).toMatchObject({ id: "m1", status: "failed", errorCode: "upstream_error" });
    h.close();
  });

  it("refuses writes after close, naming the file", () => {
    const path = tempDb();
    const h = new WorkloadHistory({
      path,
      maxRows: 10,
      maxDays: 30,
      runtime: withWallClock(() => 1_000),
      writeOnThread: true,
    });
    h.close();
    h.begin({ ...base, id: "x", startedAtMs: 1_000 });
    expect(() => h.flush()).toThrow(/history .*history\.db: written after close/);
  });
});
