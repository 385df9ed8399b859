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

export type FilePurpose = "batch" | "batch_output";

export interface StoredFile {
  readonly id: string;
  readonly purpose: FilePurpose;
  readonly filename: string;
  readonly bytes: number;
  readonly createdAtS: number;
}

export type BatchStatus =
  | "validating"
  | "failed"
  | "in_progress"
  | "finalizing"
  | "completed"
  | "expired"
  | "cancelling"
  | "cancelled";

/** A batch-level problem (the file as a whole), as OpenAI lists them in `errors`. */
export interface BatchProblem {
  readonly code: string;
  readonly message: string;
  readonly line?: number;
}

export interface StoredBatch {
  readonly id: string;
  readonly endpoint: string;
  readonly inputFileId: string;
  readonly completionWindow: string;
  readonly status: BatchStatus;
  readonly requester: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly errors: readonly BatchProblem[];
  readonly outputFileId: string | null;
  readonly errorFileId: string | null;
  /** Unix seconds, as the OpenAI objects carry them; null until it happened. */
  readonly createdAtS: number;
  readonly expiresAtS: number;
  readonly inProgressAtS: number | null;
  readonly finalizingAtS: number | null;
  readonly completedAtS: number | null;
  readonly failedAtS: number | null;
  readonly expiredAtS: number | null;
  readonly cancellingAtS: number | null;
  readonly cancelledAtS: number | null;
}

export type LineState = "pending" | "running" | "completed" | "failed";

export interface StoredLine {
  readonly batchId: string;
  readonly index: number;
  readonly customId: string;
  /** The request body as the input file gave it. */
  readonly body: string;
  readonly attempts: number;
  /** Runs cut by a crash or restart of this node, then run again. */
  readonly reruns: number;
  /** Not before this wall time (ms): a retry's back-off. */
  readonly notBeforeMs: number;
}

export interface LineCounts {
  readonly total: number;
  readonly completed: number;
  readonly failed: number;
  readonly pending: number;
  readonly running: number;
  readonly reruns: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS files (
  id TEXT PRIMARY KEY, purpose TEXT NOT NULL, filename TEXT NOT NULL,
  bytes INTEGER NOT NULL, created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY, endpoint TEXT NOT NULL, input_file_id TEXT NOT NULL,
  completion_window TEXT NOT NULL, status TEXT NOT NULL, requester TEXT NOT NULL,
  metadata TEXT, errors TEXT NOT NULL DEFAULT '[]', output_file_id TEXT, error_file_id TEXT,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, in_progress_at INTEGER,
  finalizing_at INTEGER, completed_at INTEGER, failed_at INTEGER, expired_at INTEGER,
  cancelling_at INTEGER, cancelled_at INTEGER
);
CREATE TABLE IF NOT EXISTS lines (
  batch_id TEXT NOT NULL, idx INTEGER NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, reruns INTEGER NOT NULL DEFAULT 0,
  not_before INTEGER NOT NULL DEFAULT 0, result TEXT,
  PRIMARY KEY (batch_id, idx)
);
CREATE INDEX IF NOT EXISTS lines_by_state ON lines (batch_id, state, idx);
`;

interface BatchRow {
  id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  requester: string;
  metadata: string | null;
  errors: string;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  expires_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
}

const STAMP_COLUMN: Partial<Record<BatchStatus, keyof BatchRow>> = {
  in_progress: "in_progress_at",
  finalizing: "finalizing_at",
  completed: "completed_at",
  failed: "failed_at",
  expired: "expired_at",
  cancelling: "cancelling_at",
  cancelled: "cancelled_at",
};

export class BatchStore {
  readonly #db: Database.Database;
  readonly #filesDir: string;

  constructor(dataDir: string) {
    this.#filesDir = join(dataDir, "files");
    mkdirSync(this.#filesDir, { recursive: true, mode: 0o700 });
    this.#db = openPrivateDatabase(join(dataDir, "batches.db"), { timeout: 5_000 });
    this.#db.pragma("journal_mode = WAL");
    this.#db.exec(SCHEMA);
  }

  close(): void {
    this.#db.close();
  }

  // --- files

  /**
   * Keeps `bytes` as file `id` (replacing one of that id: a batch's result files are written again
   * when a crash cut their writing): on disk first, then the row, so a listed file has its bytes.
   */
  putFile(file: StoredFile, bytes: Buffer | string): void {
    writeFileAtomically(this.#path(file.id), bytes);
    this.#db
      .prepare(
        "INSERT OR REPLACE INTO files (id, purpose, filename, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
      )
      .run(file.id, file.purpose, file.filename, file.bytes, file.createdAtS);
  }

  file(id: string): StoredFile | undefined {
    const row = this.#db.prepare("SELECT * FROM files WHERE id = ?").get(id) as FileRow | undefined;
    return row === undefined ? undefined : fileOf(row);
  }

  files(purpose?: string): StoredFile[] {
    const rows = (
      purpose === undefined
        ? this.#db.prepare("SELECT * FROM files ORDER BY created_at DESC, id DESC").all()
        : this.#db
            .prepare("SELECT * FROM files WHERE purpose = ? ORDER BY created_at DESC, id DESC")
            .all(purpose)
    ) as FileRow[];
    return rows.map(fileOf);
  }

  fileContent(id: string): Buffer {
    return readFileSync(this.#path(id));
  }

  /** Forgets file `id` and its bytes; false when there was no such file. */
  deleteFile(id: string): boolean {
    const gone = this.#db.prepare("DELETE FROM files WHERE id = ?").run(id).changes > 0;
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
    const insertLine = this.#db.prepare(
      "INSERT INTO lines (batch_id, idx, custom_id, body, state, result) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.#db.transaction(() => {
      this.#db
        .prepare(
          `INSERT INTO batches (id, endpoint, input_file_id, completion_window, status, requester, metadata,
             errors, created_at, expires_at, in_progress_at, failed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
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
    const row = this.#db.prepare("SELECT * FROM batches WHERE id = ?").get(id) as BatchRow | undefined;
    return row === undefined ? undefined : batchOf(row);
  }

  /** Newest first; `after` an id: the ones created before it (OpenAI's cursor). */
  batches(limit: number, after?: string): StoredBatch[] {
    const rows = (
      after === undefined
        ? this.#db.prepare("SELECT * FROM batches ORDER BY created_at DESC, id DESC LIMIT ?").all(limit)
        : this.#db
            .prepare(
              `SELECT * FROM batches WHERE (created_at, id) < (SELECT created_at, id FROM batches WHERE id = ?)
               ORDER BY created_at DESC, id DESC LIMIT ?`,
            )
            .all(after, limit)
    ) as BatchRow[];
    return rows.map(batchOf);
  }

  /** Batches whose lines may still run or whose end is still to be written. */
  unfinished(): StoredBatch[] {
    const rows = this.#db
      .prepare(
        "SELECT * FROM batches WHERE status IN ('in_progress', 'finalizing', 'cancelling') ORDER BY created_at",
      )
      .all() as BatchRow[];
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
    this.#db.prepare(`UPDATE batches SET ${sets.join(", ")} WHERE id = ?`).run(...values, id);
  }

  // --- lines

  counts(batchId: string): LineCounts {
    const rows = this.#db
      .prepare("SELECT state, COUNT(*) AS n, SUM(reruns) AS r FROM lines WHERE batch_id = ? GROUP BY state")
      .all(batchId) as { state: LineState; n: number; r: number }[];
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

  /** Up to `limit` pending lines due by `nowMs`, marked running (their attempt counted) as they are taken. */
  claim(batchId: string, limit: number, nowMs: number): StoredLine[] {
    return this.#db.transaction(() => {
      const rows = this.#db
        .prepare(
          `SELECT * FROM lines WHERE batch_id = ? AND state = 'pending' AND not_before <= ?
           ORDER BY idx LIMIT ?`,
        )
        .all(batchId, nowMs, limit) as LineRow[];
      const take = this.#db.prepare(
        "UPDATE lines SET state = 'running', attempts = attempts + 1 WHERE batch_id = ? AND idx = ?",
      );
      for (const r of rows) take.run(batchId, r.idx);
      return rows.map((r) => lineOf({ ...r, attempts: r.attempts + 1 }));
    })();
  }

  /** The line ended: its output or error line kept with its state, at once. */
  finishLine(batchId: string, index: number, state: "completed" | "failed", result: string): void {
    this.#db
      .prepare("UPDATE lines SET state = ?, result = ? WHERE batch_id = ? AND idx = ? AND state = 'running'")
      .run(state, result, batchId, index);
  }

  /** The line goes back to wait (a retry that may help), not before `notBeforeMs`. */
  retryLine(batchId: string, index: number, notBeforeMs: number): void {
    this.#db
      .prepare(
        "UPDATE lines SET state = 'pending', not_before = ? WHERE batch_id = ? AND idx = ? AND state = 'running'",
      )
      .run(notBeforeMs, batchId, index);
  }

  /**
   * Lines a previous process was running when it stopped: pending again, each re-run counted.
   * @returns how many
   */
  requeueInterrupted(): number {
    return this.#db
      .prepare("UPDATE lines SET state = 'pending', reruns = reruns + 1 WHERE state = 'running'")
      .run().changes;
  }

  /** Every pending line of the batch ends with `result(customId)` (cancel, expiry). */
  failPending(batchId: string, result: (customId: string, index: number) => string): number {
    return this.#db.transaction(() => {
      const rows = this.#db
        .prepare("SELECT idx, custom_id FROM lines WHERE batch_id = ? AND state = 'pending'")
        .all(batchId) as { idx: number; custom_id: string }[];
      const end = this.#db.prepare(
        "UPDATE lines SET state = 'failed', result = ? WHERE batch_id = ? AND idx = ? AND state = 'pending'",
      );
      for (const r of rows) end.run(result(r.custom_id, r.idx), batchId, r.idx);
      return rows.length;
    })();
  }

  /** The results of ended lines in input order: the output file's lines, then the error file's. */
  results(batchId: string): { readonly output: string[]; readonly errors: string[] } {
    const rows = this.#db
      .prepare("SELECT state, result FROM lines WHERE batch_id = ? AND result IS NOT NULL ORDER BY idx")
      .all(batchId) as { state: LineState; result: string }[];
    return {
      output: rows.filter((r) => r.state === "completed").map((r) => r.result),
      errors: rows.filter((r) => r.state === "failed").map((r) => r.result),
    };
  }
}

interface FileRow {
  id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  created_at: number;
}

interface LineRow {
  batch_id: string;
  idx: number;
  custom_id: string;
  body: string;
  attempts: number;
  reruns: number;
  not_before: number;
}

function fileOf(r: FileRow): StoredFile {
  return { id: r.id, purpose: r.purpose, filename: r.filename, bytes: r.bytes, createdAtS: r.created_at };
}

function lineOf(r: LineRow): StoredLine {
  return {
    batchId: r.batch_id,
    index: r.idx,
    customId: r.custom_id,
    body: r.body,
    attempts: r.attempts,
    reruns: r.reruns,
    notBeforeMs: r.not_before,
  };
}

function batchOf(r: BatchRow): StoredBatch {
  return {
    id: r.id,
    endpoint: r.endpoint,
    inputFileId: r.input_file_id,
    completionWindow: r.completion_window,
    status: r.status,
    requester: r.requester,
    metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as Record<string, string>),
    errors: JSON.parse(r.errors) as BatchProblem[],
    outputFileId: r.output_file_id,
    errorFileId: r.error_file_id,
    createdAtS: r.created_at,
    expiresAtS: r.expires_at,
    inProgressAtS: r.in_progress_at,
    finalizingAtS: r.finalizing_at,
    completedAtS: r.completed_at,
    failedAtS: r.failed_at,
    expiredAtS: r.expired_at,
    cancellingAtS: r.cancelling_at,
    cancelledAtS: r.cancelled_at,
  };
}
