/**
 * Where the history's rows are written: the port both writers implement, and the writer on the
 * event loop (the default, batched by the history on its timer; always for a `:memory:` database,
 * which no other thread can open).
 * Each write is one transaction of upserts, a prune is two indexed deletes.
 * Must not know: workloads, timers, threads.
 */

import type Database from "better-sqlite3";
import {
  COUNT_FINISHED_SQL,
  DELETE_OLDEST_SQL,
  PRUNE_BEFORE_SQL,
  UPSERT_SQL,
  type RowValues,
} from "./history-rows.js";

export interface RowWriter {
  /** Upsert these rows in one transaction; with `wait`, return once they are in the database. */
  write(rows: RowValues[], wait: boolean): void;
  /**
   * Delete finished rows started before `cutoffMs`, then all but the newest `maxRows` finished ones.
   * `finishedSince`: workloads finished since the last prune (the event-loop writer counts rows with it).
   */
  prune(cutoffMs: number, maxRows: number, wait: boolean, finishedSince: number): void;
  /** Return once everything given is in the database, and stop writing. */
  close(): void;
}

/**
 * Writes on the caller's thread, at once (`wait` changes nothing). It counts the finished rows (once
 * at open, then from the history's finishes and its own deletes), so a prune deletes what is over
 * `maxRows` from the old end of the table, at the cost of the rows deleted: finding the N-th newest
 * row instead walks N index entries, 13–27 ms on the event loop at 70,000–110,000 rows.
 */
export class InlineRowWriter implements RowWriter {
  readonly #writeRows: (rows: RowValues[]) => void;
  readonly #pruneBefore: Database.Statement<[number]>;
  readonly #deleteOldest: Database.Statement<[number]>;
  #finished: number;

  constructor(db: Database.Database) {
    const upsert = db.prepare(UPSERT_SQL);
    this.#writeRows = db.transaction((rows: RowValues[]) => {
      for (const r of rows) upsert.run(...r);
    });
    this.#pruneBefore = db.prepare<[number]>(PRUNE_BEFORE_SQL);
    this.#deleteOldest = db.prepare<[number]>(DELETE_OLDEST_SQL);
    this.#finished = (db.prepare(COUNT_FINISHED_SQL).get() as { n: number }).n;
  }

  write(rows: RowValues[]): void {
    this.#writeRows(rows);
  }

  prune(cutoffMs: number, maxRows: number, _wait: boolean, finishedSince: number): void {
    this.#finished += finishedSince;
    this.#finished -= this.#pruneBefore.run(cutoffMs).changes;
    const over = this.#finished - maxRows;
    if (over > 0) this.#finished -= this.#deleteOldest.run(over).changes;
  }

  close(): void {}
}
