/**
 * The Jobs list and the workload history. A workload is one routed request: who asked (origin node,
 * requester), what for (model, route), who served it (node, engine, sponsor, off-LAN), how it went
 * (status, first-byte latency, duration, tokens, estimated cost). Running workloads live in memory;
 * rows reach SQLite in batches off the request path: every `flushIntervalMs` or `maxBatch` rows one
 * transaction writes the batch on the event loop (row-writer.ts), or, with `writeOnThread`, the batch
 * is posted to a writer thread with its own connection (thread-row-writer.ts) and this connection
 * only reads (WAL). A crash loses at most the rows not yet written — rows still
 * `running` at the next start become `interrupted`; `close()` drains every row first. Prompt and
 * completion text are never given to this module. Retention is bounded in rows and days, pruned on
 * a timer by an indexed cutoff.
 * Must not know: HTTP, dialects, scheduling.
 */

import type { Runtime, TimerHandle } from "@pair/cluster";
import { openPrivateDatabase } from "@pair/store";
import type Database from "better-sqlite3";
import { COLUMN_NAMES, SCHEMA, rowValues } from "./history-rows.js";
import { InlineRowWriter, type RowWriter } from "./row-writer.js";
import { ThreadRowWriter } from "./thread-row-writer.js";

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
  /** PAIR's estimate of the prompt's tokens, when the prompt was near a window (docs/context.md). */
  estPromptTokens?: number;
  /** Why the serving node was chosen when not in the usual order (`context`). */
  routeReason?: string;
}

/** What a workload is known by when it begins (the rest is learnt while it runs). */
export type WorkloadStart = Pick<
  Workload,
  "id" | "model" | "route" | "originNode" | "requester" | "startedAtMs"
> & { readonly offLan?: boolean };

/** One upstream tried for a workload: `engine NAME` or `node NAME`, and the code it failed with. */
export interface WorkloadAttempt {
  readonly target: string;
  readonly error?: string;
}

/** The `--json` shape of `pair jobs` / `pair history` (docs/reference.md). */
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
  est_prompt_tokens: number | null;
  route_reason: string | null;
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
    est_prompt_tokens: w.estPromptTokens ?? null,
    route_reason: w.routeReason ?? null,
  };
}

export interface HistoryOptions {
  /** SQLite file path, or ":memory:". */
  readonly path: string;
  /** Keep at most this many finished rows. */
  readonly maxRows: number;
  /** Keep finished rows at most this many days. */
  readonly maxDays: number;
  /** Durations and the prune horizon read its wall clock (rows hold epoch ms); its timers flush and prune. */
  readonly runtime: Runtime;
  /** Write queued rows at least this often (0: only on flush(), history() and close()). */
  readonly flushIntervalMs?: number;
  /** Write at once when this many rows are queued. */
  readonly maxBatch?: number;
  /** Prune this often (0: only on prune()). */
  readonly pruneIntervalMs?: number;
  /**
   * Write rows on a worker thread (`true`, for a file) or on the event loop (default; always for
   * `:memory:`, which another thread cannot open). The thread took the batches off the event loop
   * but not off the machine's cores, cost about 10 MB of RSS and a structured clone per batch, and
   * showed no latency gain in the quiet benchmark (docs/performance.md, "Settings the measurements
   * decided"): kept as an option.
   */
  readonly writeOnThread?: boolean;
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
  est_prompt_tokens: number | null;
  route_reason: string | null;
}

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
  readonly #writer: RowWriter;
  readonly #running = new Map<string, Workload>();
  #lastFinishedId: string | null = null;
  /** Workloads finished since the last prune (the event-loop writer's row count). */
  #finishedSincePrune = 0;
  readonly #finishedSince: Database.Statement<[number, number], Row>;
  /** Rows to write, by id: the latest state of each wins. */
  readonly #queued = new Map<string, Workload>();
  readonly #timers: TimerHandle[] = [];
  readonly #maxBatch: number;

  constructor(options: HistoryOptions) {
    if (!Number.isInteger(options.maxRows) || options.maxRows < 1)
      throw new RangeError("maxRows: must be an integer >= 1");
    if (!(options.maxDays > 0)) throw new RangeError("maxDays: must be > 0");
    this.#o = options;
    this.#maxBatch = options.maxBatch ?? 512;
    if (!Number.isInteger(this.#maxBatch) || this.#maxBatch < 1)
      throw new RangeError("maxBatch: must be an integer >= 1");
    this.#db = openPrivateDatabase(options.path, { timeout: 5_000 });
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = NORMAL");
    // Small, frequent checkpoints: a long one would stall whichever thread commits.
    this.#db.pragma("wal_autocheckpoint = 128");
    this.#db.exec(SCHEMA);
    // Databases made before attempts were recorded gain the column (NULL: not recorded then).
    const columns = this.#db.prepare("SELECT name FROM pragma_table_info('workloads')").all() as {
      name: string;
    }[];
    if (!columns.some((c) => c.name === "attempts"))
      this.#db.exec("ALTER TABLE workloads ADD COLUMN attempts TEXT");
    // … and the context columns (NULL: not recorded then).
    if (!columns.some((c) => c.name === "est_prompt_tokens"))
      this.#db.exec("ALTER TABLE workloads ADD COLUMN est_prompt_tokens INTEGER");
    if (!columns.some((c) => c.name === "route_reason"))
      this.#db.exec("ALTER TABLE workloads ADD COLUMN route_reason TEXT");
    migrateKeyedById(this.#db);
    // A previous process died with these running: they did not complete.
    this.#db.prepare("UPDATE workloads SET status = 'interrupted' WHERE status = 'running'").run();
    this.#finishedSince = this.#db.prepare(
      "SELECT * FROM workloads WHERE status != 'running' AND started_at_ms >= ? ORDER BY started_at_ms DESC, id DESC LIMIT ?",
    );
    const onThread = options.writeOnThread ?? false;
    this.#writer =
      onThread && options.path !== ":memory:" && options.path !== ""
        ? new ThreadRowWriter(options.path)
        : new InlineRowWriter(this.#db);
    const every = (ms: number | undefined, fallback: number, fn: () => void) => {
      const interval = ms ?? fallback;
      if (!(interval >= 0)) throw new RangeError("intervals: must be >= 0");
      if (interval > 0) {
        this.#timers.push(options.runtime.timers.every(fn, interval));
      }
    };
    every(options.flushIntervalMs, 250, () => this.#post(false));
    every(options.pruneIntervalMs, 60_000, () => this.#prune(false));
    this.#prune(false);
  }

  begin(w: WorkloadStart): Workload {
    // A literal, not `{ ...w, status, … }`: on Node 20's V8 a spread followed by more properties
    // takes a slow path (about 10 µs here, per request), a literal well under 1 µs.
    const workload: Workload = {
      id: w.id,
      model: w.model,
      route: w.route,
      originNode: w.originNode,
      requester: w.requester,
      startedAtMs: w.startedAtMs,
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
    workload.durationMs = Math.max(0, this.#o.runtime.clock.now().wallMs - workload.startedAtMs);
    if (errorCode !== undefined) workload.errorCode = errorCode;
    this.#running.delete(workload.id);
    this.#lastFinishedId = workload.id;
    this.#finishedSincePrune += 1;
    this.#enqueue(workload);
  }

  /** The id of the workload that finished last in this process, or null: changes with every finish, read from memory. */
  lastFinishedId(): string | null {
    return this.#lastFinishedId;
  }

  /** Write every queued row now, in one transaction, and return once it is in the database. */
  flush(): void {
    this.#post(true);
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
    this.#prune(true);
  }

  /** Stop the timers, write every row still queued (the writer drains), and close. */
  close(): void {
    for (const t of this.#timers) t.cancel();
    try {
      this.#post(false);
      this.#writer.close();
    } finally {
      this.#db.close();
    }
  }

  #prune(wait: boolean): void {
    this.#post(false);
    const finished = this.#finishedSincePrune;
    this.#finishedSincePrune = 0;
    this.#writer.prune(
      this.#o.runtime.clock.now().wallMs - this.#o.maxDays * 86_400_000,
      this.#o.maxRows,
      wait,
      finished,
    );
  }

  /** Hand the queued rows to the writer, each as it is at this moment. */
  #post(wait: boolean): void {
    if (this.#queued.size === 0) {
      if (wait) this.#writer.write([], true);
      return;
    }
    const rows = [];
    for (const w of this.#queued.values()) rows.push(rowValues(w));
    this.#queued.clear();
    this.#writer.write(rows, wait);
  }

  #enqueue(w: Workload): void {
    this.#queued.set(w.id, w);
    if (this.#queued.size >= this.#maxBatch) this.#post(false);
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
    ...(r.est_prompt_tokens === null || r.est_prompt_tokens === undefined
      ? {}
      : { estPromptTokens: r.est_prompt_tokens }),
    ...(r.route_reason === null || r.route_reason === undefined ? {} : { routeReason: r.route_reason }),
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
