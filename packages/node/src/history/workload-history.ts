/**
 * The Jobs list and the workload history. A workload is one routed request: who asked (origin node,
 * requester), what for (model, route), who served it (node, engine, sponsor, off-LAN), how it went
 * (status, first-byte latency, duration, tokens, estimated cost). Running workloads live in memory;
 * rows reach SQLite in batches off the request path (one transaction every `flushIntervalMs` or
 * `maxBatch` rows), so a crash loses at most that window — rows still `running` at the next start
 * become `interrupted`. Prompt and completion text are never given to this module. Retention is
 * bounded in rows and days, pruned on a timer by an indexed cutoff.
 * Must not know: HTTP, dialects, scheduling.
 */

import Database from "better-sqlite3";

export type WorkloadStatus = "running" | "completed" | "failed" | "cancelled" | "interrupted";

export interface Workload {
  readonly id: string;
  readonly model: string;
  readonly route: string;
  readonly originNode: string;
  /** API key id, `local` for a loopback caller without a key, or a peer's requester id. */
  readonly requester: string;
  readonly startedAtMs: number;
  servingNode?: string;
  engine?: string;
  sponsor?: string;
  offLan: boolean;
  status: WorkloadStatus;
  firstByteMs?: number;
  durationMs?: number;
  tokensIn?: number;
  tokensOut?: number;
  estCostMicroUsd: number;
  errorCode?: string;
  /** Waiting for a rented node to start (a 503 "warming" within its cold-start budget). */
  warming?: boolean;
  /** Where the request was tried, in order (a failover adds one per failed upstream). */
  attempts: WorkloadAttempt[];
}

/** One upstream tried for a workload: `engine NAME` or `node NAME`, and the code it failed with. */
export interface WorkloadAttempt {
  readonly target: string;
  readonly error?: string;
}

/** The `--json` shape of `pair jobs` / `pair history` (interface.md). */
export interface WorkloadJson {
  id: string;
  model: string;
  origin_node: string;
  serving_node: string | null;
  sponsor: string | null;
  off_lan: boolean;
  status: WorkloadStatus;
  started_at: string;
  first_byte_ms: number | null;
  duration_ms: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  est_cost_usd: number;
  requester: string;
  engine: string | null;
  route: string;
  error_code: string | null;
  attempts: WorkloadAttempt[];
  /** Running and waiting for a rented node to start. */
  warming: boolean;
}

export function workloadJson(w: Workload): WorkloadJson {
  return {
    id: w.id,
    model: w.model,
    origin_node: w.originNode,
    serving_node: w.servingNode ?? null,
    sponsor: w.sponsor ?? null,
    off_lan: w.offLan,
    status: w.status,
    started_at: new Date(w.startedAtMs).toISOString(),
    first_byte_ms: w.firstByteMs ?? null,
    duration_ms: w.durationMs ?? null,
    tokens_in: w.tokensIn ?? null,
    tokens_out: w.tokensOut ?? null,
    est_cost_usd: w.estCostMicroUsd / 1_000_000,
    requester: w.requester,
    engine: w.engine ?? null,
    route: w.route,
    error_code: w.errorCode ?? null,
    attempts: [...w.attempts],
    warming: w.status === "running" && w.warming === true,
  };
}

export interface HistoryOptions {
  /** SQLite file path, or ":memory:". */
  readonly path: string;
  /** Keep at most this many finished rows. */
  readonly maxRows: number;
  /** Keep finished rows at most this many days. */
  readonly maxDays: number;
  /** Wall clock, epoch ms. */
  readonly nowMs: () => number;
  /** Write queued rows at least this often (0: only on flush(), history() and close()). */
  readonly flushIntervalMs?: number;
  /** Write at once when this many rows are queued. */
  readonly maxBatch?: number;
  /** Prune this often (0: only on prune()). */
  readonly pruneIntervalMs?: number;
}

interface Row {
  id: string;
  model: string;
  route: string;
  origin_node: string;
  requester: string;
  started_at_ms: number;
  serving_node: string | null;
  engine: string | null;
  sponsor: string | null;
  off_lan: number;
  status: string;
  first_byte_ms: number | null;
  duration_ms: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  est_cost_micro_usd: number;
  error_code: string | null;
  attempts: string | null;
}

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
  attempts TEXT`;

/**
 * Keyed by start time, then id: new rows land at the end of the one B-tree (ids are random, and a
 * table keyed by id alone wrote all over its index: 4× the cost per row at 100,000 rows). The key
 * is also the order of `history()` and of pruning, so no other index is needed.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS workloads (${COLUMNS},
  PRIMARY KEY (started_at_ms, id)
) STRICT, WITHOUT ROWID;
`;

const COLUMN_NAMES =
  "id, model, route, origin_node, requester, started_at_ms, serving_node, engine, sponsor, off_lan, " +
  "status, first_byte_ms, duration_ms, tokens_in, tokens_out, est_cost_micro_usd, error_code, attempts";

const PLACEHOLDERS = COLUMN_NAMES.split(", ")
  .map(() => "?")
  .join(", ");

/** Databases made before the table was keyed by start time: move their rows to the new table once. */
function migrateKeyedById(db: Database.Database): void {
  const idKey = db.prepare("SELECT pk FROM pragma_table_info('workloads') WHERE name = 'id'").get() as
    { pk: number } | undefined;
  if (idKey?.pk !== 1) return;
  db.transaction(() => {
    db.exec("ALTER TABLE workloads RENAME TO workloads_keyed_by_id");
    db.exec(SCHEMA);
    db.exec(`INSERT INTO workloads (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM workloads_keyed_by_id`);
    db.exec("DROP TABLE workloads_keyed_by_id");
  })();
}

export class WorkloadHistory {
  readonly #o: HistoryOptions;
  readonly #db: Database.Database;
  readonly #running = new Map<string, Workload>();
  readonly #upsert: Database.Statement;
  readonly #finishedSince: Database.Statement<[number, number], Row>;
  readonly #pruneDays: Database.Statement<[number]>;
  readonly #cutoffRow: Database.Statement<[number], { started_at_ms: number }>;
  readonly #writeBatch: (rows: IterableIterator<Workload>) => void;
  /** Rows to write, by id: the latest state of each wins. */
  readonly #queued = new Map<string, Workload>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #maxBatch: number;

  constructor(options: HistoryOptions) {
    if (!Number.isInteger(options.maxRows) || options.maxRows < 1)
      throw new RangeError("maxRows: must be an integer >= 1");
    if (!(options.maxDays > 0)) throw new RangeError("maxDays: must be > 0");
    this.#o = options;
    this.#db = new Database(options.path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = NORMAL");
    // Small, frequent checkpoints: a long one would stall the event loop in the middle of streams.
    this.#db.pragma("wal_autocheckpoint = 128");
    this.#db.exec(SCHEMA);
    // Databases made before attempts were recorded gain the column (NULL: not recorded then).
    const columns = this.#db.prepare("SELECT name FROM pragma_table_info('workloads')").all() as {
      name: string;
    }[];
    if (!columns.some((c) => c.name === "attempts"))
      this.#db.exec("ALTER TABLE workloads ADD COLUMN attempts TEXT");
    migrateKeyedById(this.#db);
    this.#upsert = this.#db.prepare(
      `INSERT INTO workloads (${COLUMN_NAMES})
       VALUES (${PLACEHOLDERS})
       ON CONFLICT (started_at_ms, id) DO UPDATE SET serving_node = excluded.serving_node, engine = excluded.engine,
         sponsor = excluded.sponsor, off_lan = excluded.off_lan, status = excluded.status,
         first_byte_ms = excluded.first_byte_ms, duration_ms = excluded.duration_ms, tokens_in = excluded.tokens_in,
         tokens_out = excluded.tokens_out, est_cost_micro_usd = excluded.est_cost_micro_usd, error_code = excluded.error_code,
         attempts = excluded.attempts`,
    );
    this.#finishedSince = this.#db.prepare(
      "SELECT * FROM workloads WHERE status != 'running' AND started_at_ms >= ? ORDER BY started_at_ms DESC, id DESC LIMIT ?",
    );
    this.#pruneDays = this.#db.prepare(
      "DELETE FROM workloads WHERE status != 'running' AND started_at_ms < ?",
    );
    this.#cutoffRow = this.#db.prepare(
      "SELECT started_at_ms FROM workloads WHERE status != 'running' ORDER BY started_at_ms DESC LIMIT 1 OFFSET ?",
    );
    // Runs synchronously: each workload is read as it is at this moment.
    this.#writeBatch = this.#db.transaction((rows: IterableIterator<Workload>) => {
      for (const w of rows) this.#write(w);
    });
    this.#maxBatch = options.maxBatch ?? 512;
    if (!Number.isInteger(this.#maxBatch) || this.#maxBatch < 1)
      throw new RangeError("maxBatch: must be an integer >= 1");
    const every = (ms: number | undefined, fallback: number, fn: () => void) => {
      const interval = ms ?? fallback;
      if (!(interval >= 0)) throw new RangeError("intervals: must be >= 0");
      if (interval > 0) {
        const t = setInterval(fn, interval);
        t.unref();
        this.#timers.push(t);
      }
    };
    every(options.flushIntervalMs, 250, () => this.flush());
    every(options.pruneIntervalMs, 60_000, () => this.prune());
    // A previous process died with these running: they did not complete.
    this.#db.prepare("UPDATE workloads SET status = 'interrupted' WHERE status = 'running'").run();
    this.prune();
  }

  begin(
    w: Omit<Workload, "status" | "estCostMicroUsd" | "offLan" | "attempts"> & { offLan?: boolean },
  ): Workload {
    const workload: Workload = {
      ...w,
      offLan: w.offLan ?? false,
      status: "running",
      estCostMicroUsd: 0,
      attempts: [],
    };
    this.#running.set(workload.id, workload);
    this.#enqueue(workload);
    return workload;
  }

  finish(
    workload: Workload,
    status: Exclude<WorkloadStatus, "running" | "interrupted">,
    errorCode?: string,
  ): void {
    workload.status = status;
    workload.durationMs = Math.max(0, this.#o.nowMs() - workload.startedAtMs);
    if (errorCode !== undefined) workload.errorCode = errorCode;
    this.#running.delete(workload.id);
    this.#enqueue(workload);
  }

  /** Write every queued row now, in one transaction. */
  flush(): void {
    if (this.#queued.size === 0) return;
    try {
      this.#writeBatch(this.#queued.values());
    } finally {
      this.#queued.clear();
    }
  }

  running(): Workload[] {
    return [...this.#running.values()];
  }

  /** Finished workloads, newest first. */
  history(options: { sinceMs?: number; limit?: number } = {}): Workload[] {
    const limit = Math.min(Math.max(1, options.limit ?? 1000), 100_000);
    this.flush();
    return this.#finishedSince.all(options.sinceMs ?? 0, limit).map(fromRow);
  }

  /** Drop finished rows older than maxDays, then all but the newest maxRows (by an indexed cutoff). */
  prune(): void {
    this.flush();
    const cutoffByAge = this.#o.nowMs() - this.#o.maxDays * 86_400_000;
    const nth = this.#cutoffRow.get(this.#o.maxRows - 1)?.started_at_ms;
    this.#pruneDays.run(nth === undefined ? cutoffByAge : Math.max(cutoffByAge, nth));
  }

  close(): void {
    for (const t of this.#timers) clearInterval(t);
    this.flush();
    this.#db.close();
  }

  #enqueue(w: Workload): void {
    this.#queued.set(w.id, w);
    if (this.#queued.size >= this.#maxBatch) this.flush();
  }

  #write(w: Workload): void {
    // Positional parameters, in COLUMN_NAMES order: cheaper to bind than named ones.
    this.#upsert.run(
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
    );
  }
}

function fromRow(r: Row): Workload {
  return {
    id: r.id,
    model: r.model,
    route: r.route,
    originNode: r.origin_node,
    requester: r.requester,
    startedAtMs: r.started_at_ms,
    offLan: r.off_lan === 1,
    status: r.status as WorkloadStatus,
    estCostMicroUsd: r.est_cost_micro_usd,
    attempts: readAttempts(r.attempts),
    ...(r.serving_node === null ? {} : { servingNode: r.serving_node }),
    ...(r.engine === null ? {} : { engine: r.engine }),
    ...(r.sponsor === null ? {} : { sponsor: r.sponsor }),
    ...(r.first_byte_ms === null ? {} : { firstByteMs: r.first_byte_ms }),
    ...(r.duration_ms === null ? {} : { durationMs: r.duration_ms }),
    ...(r.tokens_in === null ? {} : { tokensIn: r.tokens_in }),
    ...(r.tokens_out === null ? {} : { tokensOut: r.tokens_out }),
    ...(r.error_code === null ? {} : { errorCode: r.error_code }),
  };
}

function readAttempts(text: string | null): WorkloadAttempt[] {
  if (text === null) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((a: unknown) => {
      const o = (typeof a === "object" && a !== null ? a : {}) as Record<string, unknown>;
      if (typeof o["target"] !== "string") return [];
      return [
        typeof o["error"] === "string" ? { target: o["target"], error: o["error"] } : { target: o["target"] },
      ];
    });
  } catch {
    return [];
  }
}
