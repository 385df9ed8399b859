/**
 * Where the history's rows are written: the port both writers implement, and the writer on the
 * event loop (the default, batched by the history on its timer; always for a `:memory:` database,
 * which no other thread can open). Each write is one transaction of upserts, a prune is two indexed statements.
 * Must not know: workloads, timers, threads.
 */

import type Database from "better-sqlite3";
import { NTH_NEWEST_SQL, PRUNE_BEFORE_SQL, UPSERT_SQL, type RowValues } from "./history-rows.js";

export interface RowWriter {
  /** Upsert these rows in one transaction; with `wait`, return once they are in the database. */
  write(rows: RowValues[], wait: boolean): void;
  /** Delete finished rows started before `cutoffMs`, then all but the newest `maxRows` finished ones. */
  prune(cutoffMs: number, maxRows: number, wait: boolean): void;
  /** Return once everything given is in the database, and stop writing. */
  close(): void;
}

/** The statements a writer runs, on its own connection. */
export function writerStatements(db: Database.Database): {
  writeRows: (rows: RowValues[]) => void;
  prune: (cutoffMs: number, maxRows: number) => void;
} {
  const upsert = db.prepare(UPSERT_SQL);
  const pruneBefore = db.prepare<[number]>(PRUNE_BEFORE_SQL);
  const nthNewest = db.prepare<[number], { started_at_ms: number }>(NTH_NEWEST_SQL);
  const writeRows = db.transaction((rows: RowValues[]) => {
    for (const r of rows) upsert.run(...r);
  });
  return {
    writeRows: (rows) => writeRows(rows),
    prune: (cutoffMs, maxRows) => {
      const nth = nthNewest.get(maxRows - 1)?.started_at_ms;
      pruneBefore.run(nth === undefined ? cutoffMs : Math.max(cutoffMs, nth));
    },
  };
}

/** Writes on the caller's thread, at once (`wait` changes nothing). */
export class InlineRowWriter implements RowWriter {
  readonly #s: ReturnType<typeof writerStatements>;

  constructor(db: Database.Database) {
    this.#s = writerStatements(db);
  }

  write(rows: RowValues[]): void {
    this.#s.writeRows(rows);
  }

  prune(cutoffMs: number, maxRows: number): void {
    this.#s.prune(cutoffMs, maxRows);
  }

  close(): void {}
}
