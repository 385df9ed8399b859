/**
 * The workloads table as SQL: its schema, the one upsert that writes a row, the prune statements,
 * and a workload turned into that upsert's positional values. Shared by the writer on the event
 * loop (`:memory:` databases) and the writer thread, so both write exactly the same rows.
 * Must not know: threads, timers, when rows are written.
 */

/** The columns, in the order of `rowValues`. */
export const COLUMN_NAMES =
  "id, model, route, origin_node, requester, started_at_ms, serving_node, engine, sponsor, off_lan, " +
  "status, first_byte_ms, duration_ms, tokens_in, tokens_out, est_cost_micro_usd, error_code, attempts, " +
  "est_prompt_tokens, route_reason";

const COLUMNS = `
  id TEXT NOT NULL,
  model TEXT NOT NULL,
  route TEXT NOT NULL,
  origin_node TEXT NOT NULL,
  requester TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL,
  serving_node TEXT,
  engine TEXT,
  sponsor TEXT,
  off_lan INTEGER NOT NULL,
  status TEXT NOT NULL,
  first_byte_ms INTEGER,
  duration_ms INTEGER,
  tokens_in INTEGER,
  tokens_out INTEGER,
  est_cost_micro_usd INTEGER NOT NULL,
  error_code TEXT,
  attempts TEXT,
  est_prompt_tokens INTEGER,
  route_reason TEXT`;

/**
 * Keyed by start time, then id: new rows land at the end of the one B-tree (ids are random, and a
 * table keyed by id alone wrote all over its index: 4× the cost per row at 100,000 rows). The key
 * is also the order of `history()` and of pruning, so no other index is needed.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS workloads (${COLUMNS},
  PRIMARY KEY (started_at_ms, id)
) STRICT, WITHOUT ROWID;
`;

const PLACEHOLDERS = COLUMN_NAMES.split(", ")
  .map(() => "?")
  .join(", ");

export const UPSERT_SQL = `INSERT INTO workloads (${COLUMN_NAMES})
  VALUES (${PLACEHOLDERS})
  ON CONFLICT (started_at_ms, id) DO UPDATE SET serving_node = excluded.serving_node, engine = excluded.engine,
    sponsor = excluded.sponsor, off_lan = excluded.off_lan, status = excluded.status,
    first_byte_ms = excluded.first_byte_ms, duration_ms = excluded.duration_ms, tokens_in = excluded.tokens_in,
    tokens_out = excluded.tokens_out, est_cost_micro_usd = excluded.est_cost_micro_usd, error_code = excluded.error_code,
    attempts = excluded.attempts, est_prompt_tokens = excluded.est_prompt_tokens,
    route_reason = excluded.route_reason`;

/** Deletes finished rows started before `?`. */
export const PRUNE_BEFORE_SQL = "DELETE FROM workloads WHERE status != 'running' AND started_at_ms < ?";

/** The `?` oldest finished rows: what is over maxRows, found from the old end (cost: the rows deleted). */
export const DELETE_OLDEST_SQL =
  "DELETE FROM workloads WHERE (started_at_ms, id) IN (SELECT started_at_ms, id FROM workloads WHERE status != 'running' ORDER BY started_at_ms, id LIMIT ?)";

/** Finished rows, counted once when the event-loop writer opens the database. */
export const COUNT_FINISHED_SQL = "SELECT COUNT(*) AS n FROM workloads WHERE status != 'running'";

/** The start time of the `?`-th newest finished row (0-based): rows older than it are over maxRows. */
export const NTH_NEWEST_SQL =
  "SELECT started_at_ms FROM workloads WHERE status != 'running' ORDER BY started_at_ms DESC LIMIT 1 OFFSET ?";

/** One row's values for `UPSERT_SQL`, positional (cheaper to bind than named, and to post to a thread). */
export type RowValues = (string | number | null)[];

/** The fields of a workload that reach its row (kept structural so this file needs no workload type). */
export interface RowSource {
  readonly id: string;
  readonly model: string;
  readonly route: string;
  readonly originNode: string;
  readonly requester: string;
  readonly startedAtMs: number;
  readonly servingNode?: string;
  readonly engine?: string;
  readonly sponsor?: string;
  readonly offLan: boolean;
  readonly status: string;
  readonly firstByteMs?: number;
  readonly durationMs?: number;
  readonly tokensIn?: number;
  readonly tokensOut?: number;
  readonly estCostMicroUsd: number;
  readonly errorCode?: string;
  readonly attempts: readonly unknown[];
  readonly estPromptTokens?: number;
  readonly routeReason?: string;
}

export function rowValues(w: RowSource): RowValues {
  return [
    w.id,
    w.model,
    w.route,
    w.originNode,
    w.requester,
    w.startedAtMs,
    w.servingNode ?? null,
    w.engine ?? null,
    w.sponsor ?? null,
    w.offLan ? 1 : 0,
    w.status,
    w.firstByteMs ?? null,
    w.durationMs ?? null,
    w.tokensIn ?? null,
    w.tokensOut ?? null,
    w.estCostMicroUsd,
    w.errorCode ?? null,
    w.attempts.length === 0 ? null : JSON.stringify(w.attempts),
    w.estPromptTokens ?? null,
    w.routeReason ?? null,
  ];
}
