/**
 * The history's rows written by a worker thread that owns its own better-sqlite3 connection to the
 * same file (WAL: the event loop's connection keeps reading the Jobs list and history while the
 * thread writes). Rows are posted in batches and the event loop never waits for SQLite, except when
 * a caller asks to see everything written (`wait`: `flush()`, `history()`, `prune()`, `close()`),
 * which blocks on a shared counter the thread advances after each message, so a graceful shutdown
 * drains every posted row before the process exits.
 * The thread's code is plain JavaScript given as a string (`eval`): PAIR runs its TypeScript through
 * a loader that worker threads do not inherit, and vitest neither.
 * Must not know: workloads, timers, HTTP.
 */

import { SYSTEM_CLOCK } from "@pair/cluster";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { NTH_NEWEST_SQL, PRUNE_BEFORE_SQL, UPSERT_SQL, type RowValues } from "./history-rows.js";
import type { RowWriter } from "./row-writer.js";

/** Longest a caller waits for the thread to confirm a write before giving up with an error. */
const CONFIRM_TIMEOUT_MS = 30_000;

/** Signal slots: the last message done, and how many messages failed. */
const DONE = 0;
const FAILED = 1;

type Message =
  | { readonly seq: number; readonly kind: "rows"; readonly rows: RowValues[] }
  | { readonly seq: number; readonly kind: "prune"; readonly cutoffMs: number; readonly maxRows: number }
  | { readonly seq: number; readonly kind: "close" };

interface WriterData {
  readonly driver: string;
  readonly path: string;
  readonly signal: SharedArrayBuffer;
  readonly upsertSql: string;
  readonly pruneSql: string;
  readonly nthSql: string;
}

const THREAD_CODE = `
const { parentPort, workerData: d } = require("node:worker_threads");
const signal = new Int32Array(d.signal);
const done = (seq, failed, error) => {
  if (failed) { Atomics.add(signal, ${FAILED}, 1); parentPort.postMessage({ seq, error: String(error && error.message || error) }); }
  Atomics.store(signal, ${DONE}, seq);
  Atomics.notify(signal, ${DONE});
};
let db, upsert, pruneBefore, nthNewest, writeRows;
try {
  const Database = require(d.driver);
  db = new Database(d.path, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 128");
  upsert = db.prepare(d.upsertSql);
  pruneBefore = db.prepare(d.pruneSql);
  nthNewest = db.prepare(d.nthSql);
  writeRows = db.transaction((rows) => { for (const r of rows) upsert.run(...r); });
} catch (error) {
  db = undefined;
  parentPort.postMessage({ seq: 0, error: "opening: " + String(error && error.message || error) });
}
parentPort.on("message", (m) => {
  try {
    if (db === undefined) throw new Error("the writer thread could not open the database");
    if (m.kind === "rows") writeRows(m.rows);
    else if (m.kind === "prune") {
      const nth = nthNewest.get(m.maxRows - 1);
      pruneBefore.run(nth === undefined ? m.cutoffMs : Math.max(m.cutoffMs, nth.started_at_ms));
    } else if (m.kind === "close") { db.close(); db = undefined; }
    done(m.seq, false);
  } catch (error) {
    done(m.seq, true, error);
  }
  if (m.kind === "close") parentPort.close();
});
`;

export class ThreadRowWriter implements RowWriter {
  readonly #path: string;
  readonly #worker: Worker;
  readonly #signal: Int32Array;
  #seq = 0;
  #lastError: string | undefined;
  #closed = false;

  /** @param path the SQLite file; its schema must already exist (made on the caller's connection). */
  constructor(path: string) {
    this.#path = path;
    const shared = new SharedArrayBuffer(8);
    this.#signal = new Int32Array(shared);
    const data: WriterData = {
      driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      path,
      signal: shared,
      upsertSql: UPSERT_SQL,
      pruneSql: PRUNE_BEFORE_SQL,
      nthSql: NTH_NEWEST_SQL,
    };
    // No execArgv: the thread's code is plain JavaScript, and inheriting `--import tsx` loaded tsx in
    // it too (about 8 MB of RSS for nothing).
    this.#worker = new Worker(THREAD_CODE, { eval: true, workerData: data, execArgv: [] });
    this.#worker.on("message", (m: { error?: string }) => {
      if (m.error !== undefined) this.#lastError = m.error;
    });
    this.#worker.on("error", (error) => {
      this.#lastError = error.message;
      Atomics.add(this.#signal, FAILED, 1);
    });
    // A process that exits without close() loses the rows not yet written, as a crash would.
    this.#worker.unref();
  }

  write(rows: RowValues[], wait: boolean): void {
    this.#post({ seq: 0, kind: "rows", rows }, wait);
  }

  prune(cutoffMs: number, maxRows: number, wait: boolean): void {
    this.#post({ seq: 0, kind: "prune", cutoffMs, maxRows }, wait);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#post({ seq: 0, kind: "close" }, true);
    } finally {
      void this.#worker.terminate();
    }
  }

  #post(message: Message, wait: boolean): void {
    if (this.#closed && message.kind !== "close")
      throw new Error(`history ${this.#path}: written after close(); open a new WorkloadHistory`);
    this.#seq += 1;
    const seq = this.#seq;
    const failedBefore = Atomics.load(this.#signal, FAILED);
    this.#worker.postMessage({ ...message, seq });
    if (wait) this.#waitFor(seq, failedBefore);
  }

  /** Blocks until the thread has handled message `seq`. @throws Error when it failed or never answered */
  #waitFor(seq: number, failedBefore: number): void {
    // Real time: Atomics.wait blocks this thread in real milliseconds, whatever clock the node runs on.
    const deadline = SYSTEM_CLOCK.now().monoMs + CONFIRM_TIMEOUT_MS;
    for (;;) {
      const done = Atomics.load(this.#signal, DONE);
      if (Atomics.load(this.#signal, FAILED) !== failedBefore)
        throw new Error(
          `history ${this.#path}: the writer thread failed${this.#lastError === undefined ? "" : ` (${this.#lastError})`}; ` +
            "check that the data dir is writable and has free space",
        );
      if (done >= seq) return;
      const left = deadline - SYSTEM_CLOCK.now().monoMs;
      if (left <= 0)
        throw new Error(
          `history ${this.#path}: the writer thread did not confirm a write within ${CONFIRM_TIMEOUT_MS / 1000} s; ` +
            "another process may hold the database locked",
        );
      Atomics.wait(this.#signal, DONE, done, Math.min(left, 100));
    }
  }
}
