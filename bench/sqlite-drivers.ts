/**
 * better-sqlite3 against Node's built-in `node:sqlite` on the workload history's shape, to decide
 * whether the built-in one could replace the native addon (bench/journal/sqlite-drivers.md). Both
 * open a file database with the history's pragmas (WAL, synchronous NORMAL) and its schema, then:
 *  - write: `workloads` workloads, each upserted twice (running, then finished) in transactions of
 *    `batch` rows, as the history's writer flushes them;
 *  - read: the history's newest-first page of 100 finished rows, `reads` times.
 * Rounds alternate the two drivers; each prints its median. Same SQL, same values, same thread.
 *
 *   npx tsx bench/sqlite-drivers.ts [--workloads 20000] [--batch 64] [--reads 2000] [--rounds 5]
 *
 * Must not know: the history's classes (only its SQL), HTTP.
 */

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { rowValues, SCHEMA, UPSERT_SQL, type RowValues } from "../packages/node/src/history/history-rows.js";

const PAGE_SQL =
  "SELECT * FROM workloads WHERE status != 'running' AND started_at_ms >= ? ORDER BY started_at_ms DESC, id DESC LIMIT ?";

/** What the two drivers are asked: the same few calls, so one loop times both. */
interface Driver {
  readonly name: string;
  writeBatch(rows: readonly RowValues[]): void;
  page(sinceMs: number, limit: number): unknown[];
  close(): void;
}

function betterSqlite3(path: string): Driver {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  const upsert = db.prepare(UPSERT_SQL);
  const page = db.prepare(PAGE_SQL);
  const writeBatch = db.transaction((rows: readonly RowValues[]) => {
    for (const r of rows) upsert.run(...r);
  });
  return {
    name: `better-sqlite3 ${(db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v}`,
    writeBatch,
    page: (since, limit) => page.all(since, limit),
    close: () => db.close(),
  };
}

function nodeSqlite(path: string): Driver {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  db.exec(SCHEMA);
  const upsert = db.prepare(UPSERT_SQL);
  const page = db.prepare(PAGE_SQL);
  return {
    name: `node:sqlite ${(db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v}`,
    writeBatch: (rows) => {
      db.exec("BEGIN");
      try {
        for (const r of rows) upsert.run(...r);
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    },
    page: (since, limit) => page.all(since, limit),
    close: () => db.close(),
  };
}

/** The rows the history writes for `n` workloads: each one running, then finished. */
function workloadRows(n: number): RowValues[] {
  const rows: RowValues[] = [];
  for (let i = 0; i < n; i++) {
    const w = {
      id: `wl-${i.toString(36).padStart(8, "0")}-${(i * 2654435761) % 1e9}`,
      model: i % 3 === 0 ? "llama3:8b" : "Qwen/Qwen3-0.6B",
      route: "/v1/chat/completions",
      originNode: "node-a",
      requester: "127.0.0.1",
      startedAtMs: 1_700_000_000_000 + i * 10,
      offLan: i % 5 === 0,
      status: "running",
      estCostMicroUsd: 0,
      attempts: [] as unknown[],
    };
    rows.push(rowValues(w));
    rows.push(
      rowValues({
        ...w,
        servingNode: "node-b",
        engine: "ollama",
        status: "completed",
        firstByteMs: 120,
        durationMs: 900,
        tokensIn: 40,
        tokensOut: 200,
        estCostMicroUsd: 35,
        attempts: [{ node: "node-b", outcome: "served" }],
      }),
    );
  }
  return rows;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { values } = parseArgs({
  options: {
    workloads: { type: "string", default: "20000" },
    batch: { type: "string", default: "64" },
    reads: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
  },
  strict: true,
});
const n = Number(values.workloads);
const batch = Number(values.batch);
const reads = Number(values.reads);
const rounds = Number(values.rounds);
if (![n, batch, reads, rounds].every((x) => Number.isInteger(x) && x > 0 && x <= 1_000_000))
  throw new RangeError("sqlite-drivers: every option must be an integer in [1, 1000000]");

const rows = workloadRows(n);
const dir = mkdtempSync(join(tmpdir(), "pair-sqlite-drivers-"));
const results = new Map<string, { writeRowsPerS: number[]; readsPerS: number[] }>();
try {
  for (let round = 0; round < rounds; round++) {
    for (const open of [betterSqlite3, nodeSqlite]) {
      const path = join(dir, `${open.name}-${round}.db`);
      const d = open(path);
      let t = performance.now();
      for (let i = 0; i < rows.length; i += batch) d.writeBatch(rows.slice(i, i + batch));
      const writeMs = performance.now() - t;
      const since = 1_700_000_000_000 + (n - 5_000) * 10;
      t = performance.now();
      for (let i = 0; i < reads; i++)
        if (d.page(since - (i % 100) * 10, 100).length !== 100) throw new Error("short page");
      const readMs = performance.now() - t;
      d.close();
      const r = results.get(d.name) ?? { writeRowsPerS: [], readsPerS: [] };
      r.writeRowsPerS.push((rows.length / writeMs) * 1000);
      r.readsPerS.push((reads / readMs) * 1000);
      results.set(d.name, r);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `node ${process.version}: ${n} workloads (${rows.length} upserts, ${batch} a transaction), ${reads} pages of 100 rows, ${rounds} rounds, medians`,
);
for (const [name, r] of results)
  console.log(
    `${name.padEnd(24)} write ${median(r.writeRowsPerS).toFixed(0).padStart(7)} rows/s   read ${median(r.readsPerS).toFixed(0).padStart(6)} pages/s  (${(100 * median(r.readsPerS)).toFixed(0)} rows/s)`,
  );
