/**
 * Batches' durable state, in `batches.db` in the data dir: uploaded files (their bytes beside it, in
 * `files/`), batches, and every line of every batch with its state and, once it ended, the exact line
 * it writes to the output or error file. A line's result and its state change in one transaction, so
 * after a crash a line is either done (its result kept, never run again) or pending (run again, the
 * re-run counted) — and the output file, built from the rows, holds each `custom_id` exactly once.
 * Must not know: HTTP, how a line is run, the OpenAI objects' shape beyond the fields it stores.
 */

import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { openPrivateDatabase } from "@pair/store";
import { writeFileAtomically } from "../files/atomic-file.js";
import { RentalStore } from "./rental-store.js";

import {
  batchOf,
  fileOf,
  lineOf,
  SCHEMA,
  STAMP_COLUMN,
  type BatchRow,
  type BatchStatus,
  type FileRow,
  type LineCounts,
  type LineRow,
  type LineState,
  type StoredBatch,
  type StoredFile,
  type StoredLine,
} from "./batch-rows.js";

export type {
  BatchProblem,
  BatchStatus,
  FilePurpose,
  LineCounts,
  LineState,
  StoredBatch,
  StoredFile,
  StoredLine,
} from "./batch-rows.js";

export class BatchStore {
  readonly #db: Database.Database;
  /** Statements by their SQL, prepared once: a batch runs each a few times per line. */
  readonly #statements = new Map<string, Database.Statement>();
  readonly #filesDir: string;
  /** `--rent auto` batches' rentals, in the same database. */
  readonly rentals: RentalStore;

  constructor(dataDir: string) {
    this.#filesDir = join(dataDir, "files");
    mkdirSync(this.#filesDir, { recursive: true, mode: 0o700 });
    this.#db = openPrivateDatabase(join(dataDir, "batches.db"), { timeout: 5_000 });
    this.#db.pragma("journal_mode = WAL");
    this.#db.exec(SCHEMA);
    // A store made before lines recorded their serving node gains the column (its old lines: none).
    const lineColumns = this.#db.prepare("SELECT name FROM pragma_table_info('lines')").all() as {
      name: string;
    }[];
    if (!lineColumns.some((c) => c.name === "served_by"))
      this.#db.exec("ALTER TABLE lines ADD COLUMN served_by TEXT");
    this.rentals = new RentalStore(this.#db);
  }

  close(): void {
    this.#db.close();
  }

  #sql(text: string): Database.Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) this.#statements.set(text, (statement = this.#db.prepare(text)));
    return statement;
  }

  // --- files

  /**
   * Keeps `bytes` as file `id` (replacing one of that id: a batch's result files are written again
   * when a crash cut their writing): on disk first, then the row, so a listed file has its bytes.
   */
  putFile(file: StoredFile, bytes: Buffer | string): void {
    writeFileAtomically(this.#path(file.id), bytes);
    this.#sql(
      "INSERT OR REPLACE INTO files (id, purpose, filename, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
    ).run(file.id, file.purpose, file.filename, file.bytes, file.createdAtS);
  }

  file(id: string): StoredFile | undefined {
    const row = this.#sql("SELECT * FROM files WHERE id = ?").get(id) as FileRow | undefined;
    return row === undefined ? undefined : fileOf(row);
  }

  files(purpose?: string): StoredFile[] {
    const rows = (
      purpose === undefined
        ? this.#sql("SELECT * FROM files ORDER BY created_at DESC, id DESC").all()
        : this.#sql("SELECT * FROM files WHERE purpose = ? ORDER BY created_at DESC, id DESC").all(purpose)
    ) as FileRow[];
    return rows.map(fileOf);
  }

  fileContent(id: string): Buffer {
    return readFileSync(this.#path(id));
  }

  /** Forgets file `id` and its bytes; false when there was no such file. */
  deleteFile(id: string): boolean {
    const gone = this.#sql("DELETE FROM files WHERE id = ?").run(id).changes > 0;
    if (gone) rmSync(this.#path(id), { force: true });
    return gone;
  }

  #path(id: string): string {
    // Ids are made here (`file-` + hex); a path separator can never reach the files dir.
    if (!/^file-[\w-]+$/.test(id)) throw new Error(`not a file id: ${id}`);
    return join(this.#filesDir, id);
  }

  // --- batches

  /** A new batch with its lines, in one transaction (a crash keeps both or neither). */
  addBatch(
    batch: StoredBatch,
    lines: readonly { readonly customId: string; readonly body: string; readonly result?: string }[],
  ): void {
    const insertLine = this.#sql(
      "INSERT INTO lines (batch_id, idx, custom_id, body, state, result) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.#db.transaction(() => {
      this.#sql(
        `INSERT INTO batches (id, endpoint, input_file_id, completion_window, status, requester, metadata,
             errors, created_at, expires_at, in_progress_at, failed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        batch.id,
        batch.endpoint,
        batch.inputFileId,
        batch.completionWindow,
        batch.status,
        batch.requester,
        batch.metadata === null ? null : JSON.stringify(batch.metadata),
        JSON.stringify(batch.errors),
        batch.createdAtS,
        batch.expiresAtS,
        batch.inProgressAtS,
        batch.failedAtS,
      );
      lines.forEach((l, i) =>
        insertLine.run(
          batch.id,
          i,
          l.customId,
          l.body,
          l.result === undefined ? "pending" : "failed",
          l.result ?? null,
        ),
      );
    })();
  }

  batch(id: string): StoredBatch | undefined {
    const row = this.#sql("SELECT * FROM batches WHERE id = ?").get(id) as BatchRow | undefined;
    return row === undefined ? undefined : batchOf(row);
  }

  /** Newest first; `after` an id: the ones created before it (OpenAI's cursor). */
  batches(limit: number, after?: string): StoredBatch[] {
    const rows = (
      after === undefined
        ? this.#sql("SELECT * FROM batches ORDER BY created_at DESC, id DESC LIMIT ?").all(limit)
        : this.#sql(
            `SELECT * FROM batches WHERE (created_at, id) < (SELECT created_at, id FROM batches WHERE id = ?)
               ORDER BY created_at DESC, id DESC LIMIT ?`,
          ).all(after, limit)
    ) as BatchRow[];
    return rows.map(batchOf);
  }

  /** Batches whose lines may still run or whose end is still to be written. */
  unfinished(): StoredBatch[] {
    const rows = this.#sql(
      "SELECT * FROM batches WHERE status IN ('in_progress', 'finalizing', 'cancelling') ORDER BY created_at",
    ).all() as BatchRow[];
    return rows.map(batchOf);
  }

  /** Moves a batch to `status`, stamping when (unix s), and its result files when it ended. */
  setStatus(
    id: string,
    status: BatchStatus,
    atS: number,
    files?: { output: string | null; error: string | null },
  ): void {
    const stamp = STAMP_COLUMN[status];
    const sets = ["status = ?", ...(stamp === undefined ? [] : [`${stamp} = ?`])];
    const values: unknown[] = [status, ...(stamp === undefined ? [] : [atS])];
    if (files !== undefined) {
      sets.push("output_file_id = ?", "error_file_id = ?");
      values.push(files.output, files.error);
    }
    this.#sql(`UPDATE batches SET ${sets.join(", ")} WHERE id = ?`).run(...values, id);
  }

  // --- lines

  counts(batchId: string): LineCounts {
    const rows = this.#sql(
      "SELECT state, COUNT(*) AS n, SUM(reruns) AS r FROM lines WHERE batch_id = ? GROUP BY state",
    ).all(batchId) as { state: LineState; n: number; r: number }[];
    const by = (s: LineState) => rows.find((r) => r.state === s)?.n ?? 0;
    return {
      total: rows.reduce((sum, r) => sum + r.n, 0),
      completed: by("completed"),
      failed: by("failed"),
      pending: by("pending"),
      running: by("running"),
      reruns: rows.reduce((sum, r) => sum + r.r, 0),
    };
  }

  /** Completed lines by the node that served them (the `x-pair-served-by` of their replies). */
  servedByNode(batchId: string): Record<string, number> {
    const rows = this.#sql(
      "SELECT served_by AS node, COUNT(*) AS n FROM lines WHERE batch_id = ? AND state = 'completed' " +
        "AND served_by IS NOT NULL GROUP BY served_by ORDER BY n DESC, served_by",
    ).all(batchId) as { node: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.node, r.n]));
  }

  /** The bodies of the lines still to run (pending or running), for a re-plan. */
  unfinishedBodies(batchId: string): string[] {
    const rows = this.#sql(
      "SELECT body FROM lines WHERE batch_id = ? AND state IN ('pending', 'running')",
    ).all(batchId) as { body: string }[];
    return rows.map((r) => r.body);
  }

  /** Up to `limit` pending lines due by `nowMs`, marked running (their attempt counted) as they are taken. */
  claim(batchId: string, limit: number, nowMs: number): StoredLine[] {
    return this.#db.transaction(() => {
      const rows = this.#sql(
        `SELECT * FROM lines WHERE batch_id = ? AND state = 'pending' AND not_before <= ?
           ORDER BY idx LIMIT ?`,
      ).all(batchId, nowMs, limit) as LineRow[];
      const take = this.#sql(
        "UPDATE lines SET state = 'running', attempts = attempts + 1 WHERE batch_id = ? AND idx = ?",
      );
      for (const r of rows) take.run(batchId, r.idx);
      return rows.map((r) => lineOf({ ...r, attempts: r.attempts + 1 }));
    })();
  }

  /** The line ended: its output or error line kept with its state, at once. */
  finishLine(
    batchId: string,
    index: number,
    state: "completed" | "failed",
    result: string,
    servedBy?: string,
  ): void {
    this.#sql(
      "UPDATE lines SET state = ?, result = ?, served_by = ? WHERE batch_id = ? AND idx = ? AND state = 'running'",
    ).run(state, result, servedBy ?? null, batchId, index);
  }

  /**
   * The line goes back to wait (a retry that may help), not before `notBeforeMs`; `uncounted`: the
   * run just ended does not count against its attempts (it waited for capacity, nothing failed).
   */
  retryLine(batchId: string, index: number, notBeforeMs: number, o: { uncounted?: boolean } = {}): void {
    this.#sql(
      `UPDATE lines SET state = 'pending', not_before = ?${o.uncounted === true ? ", attempts = attempts - 1" : ""}
         WHERE batch_id = ? AND idx = ? AND state = 'running'`,
    ).run(notBeforeMs, batchId, index);
  }

  /** The batch's pending lines are due now (what some waited for is gone). */
  dueNow(batchId: string): void {
    this.#sql(
      "UPDATE lines SET not_before = 0 WHERE batch_id = ? AND state = 'pending' AND not_before > 0",
    ).run(batchId);
  }

  /**
   * Lines a previous process was running when it stopped: pending again, each re-run counted.
   * @returns how many
   */
  requeueInterrupted(): number {
    return this.#sql("UPDATE lines SET state = 'pending', reruns = reruns + 1 WHERE state = 'running'").run()
      .changes;
  }

  /** Every pending line of the batch ends with `result(customId)` (cancel, expiry). */
  failPending(batchId: string, result: (customId: string, index: number) => string): number {
    return this.#db.transaction(() => {
      const rows = this.#sql("SELECT idx, custom_id FROM lines WHERE batch_id = ? AND state = 'pending'").all(
        batchId,
      ) as { idx: number; custom_id: string }[];
      const end = this.#sql(
        "UPDATE lines SET state = 'failed', result = ? WHERE batch_id = ? AND idx = ? AND state = 'pending'",
      );
      for (const r of rows) end.run(result(r.custom_id, r.idx), batchId, r.idx);
      return rows.length;
    })();
  }

  /** The results of ended lines in input order: the output file's lines, then the error file's. */
  results(batchId: string): { readonly output: string[]; readonly errors: string[] } {
    const rows = this.#sql(
      "SELECT state, result FROM lines WHERE batch_id = ? AND result IS NOT NULL ORDER BY idx",
    ).all(batchId) as { state: LineState; result: string }[];
    return {
      output: rows.filter((r) => r.state === "completed").map((r) => r.result),
      errors: rows.filter((r) => r.state === "failed").map((r) => r.result),
    };
  }
}
