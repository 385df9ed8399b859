/**
 * What batches' SQLite rows are: the tables' schema, the stored objects (files, batches, lines) the
 * rest of batch/ reads, and the mapping from a row to its object. Kept apart from the store's
 * operations so a new column is one change here, not a hunt through the queries.
 * Must not know: how rows are queried or changed (batch-store.ts), HTTP.
 */

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

export const SCHEMA = `
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
  not_before INTEGER NOT NULL DEFAULT 0, result TEXT, served_by TEXT,
  PRIMARY KEY (batch_id, idx)
);
CREATE INDEX IF NOT EXISTS lines_by_state ON lines (batch_id, state, idx);
CREATE TABLE IF NOT EXISTS rentals (
  batch_id TEXT PRIMARY KEY, model TEXT NOT NULL, credential TEXT, deadline_at INTEGER NOT NULL,
  budget_usd REAL, state TEXT NOT NULL, node TEXT, flavor TEXT, gpu TEXT, usd_per_hour REAL,
  rented_at INTEGER, serving_at INTEGER, stopped_at INTEGER, stop_reason TEXT,
  spent_usd REAL NOT NULL DEFAULT 0, measured_tokens_per_s REAL, note TEXT
);
`;

export interface BatchRow {
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

export const STAMP_COLUMN: Partial<Record<BatchStatus, keyof BatchRow>> = {
  in_progress: "in_progress_at",
  finalizing: "finalizing_at",
  completed: "completed_at",
  failed: "failed_at",
  expired: "expired_at",
  cancelling: "cancelling_at",
  cancelled: "cancelled_at",
};

export interface FileRow {
  id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  created_at: number;
}

export interface LineRow {
  batch_id: string;
  idx: number;
  custom_id: string;
  body: string;
  attempts: number;
  reruns: number;
  not_before: number;
}

export function fileOf(r: FileRow): StoredFile {
  return { id: r.id, purpose: r.purpose, filename: r.filename, bytes: r.bytes, createdAtS: r.created_at };
}

export function lineOf(r: LineRow): StoredLine {
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

export function batchOf(r: BatchRow): StoredBatch {
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
