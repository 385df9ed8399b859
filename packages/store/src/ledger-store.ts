/**
 * The spending ledger in SQLite (better-sqlite3, WAL, synchronous FULL, STRICT tables): one row per
 * reservation, binding, episode and request in flight, as JSON beside the columns queries need; the
 * entries and workload costs as an append-only history; and the state version used for
 * compare-and-set. A commit writes only the records changed since the version it expects, deletes
 * requests that ended, and appends the new history, in one IMMEDIATE
 * transaction, and refuses a stale writer. Guards that hold even against a buggy caller: entries
 * continue the sequence without a gap and are never updated or deleted (triggers); a closed episode
 * is never written again; reservations, bindings and episodes are never forgotten.
 * Its schema version lives in its own table, so it can share a database file with the hosting store.
 * Must not know: the ledger's rules beyond those guards (they live in @pair/ledger).
 */

import type Database from "better-sqlite3";
import { openPrivateDatabase } from "./private-database.js";
import {
  LedgerStoreGuardError,
  entrySequenceProblem,
  type BillingEpisode,
  type CommitResult,
  type DeploymentBinding,
  type EntryQuery,
  type InFlightRequest,
  type LedgerCommit,
  type LedgerEntry,
  type LedgerState,
  type LedgerStore,
  type Reservation,
  type WorkloadCost,
  type WorkloadQuery,
} from "@pair/ledger";

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ledger_meta (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     version INTEGER NOT NULL CHECK (version >= 0),
     ledger_id TEXT NOT NULL,
     clock_ms INTEGER NOT NULL,
     session_started_at_ms INTEGER NOT NULL,
     next_entry_seq INTEGER NOT NULL CHECK (next_entry_seq >= 0)
   ) STRICT;
   INSERT INTO ledger_meta (id, version, ledger_id, clock_ms, session_started_at_ms, next_entry_seq)
     VALUES (1, 0, '', 0, 0, 0);
   CREATE TABLE ledger_reservations (
     reservation_id TEXT PRIMARY KEY,
     node_id TEXT NOT NULL UNIQUE,
     rev INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE TABLE ledger_bindings (
     deployment_id TEXT PRIMARY KEY,
     reservation_id TEXT NOT NULL,
     rev INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE TABLE ledger_episodes (
     deployment_id TEXT PRIMARY KEY,
     node_id TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('open', 'closed')),
     rev INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE TABLE ledger_in_flight (
     request_id TEXT PRIMARY KEY,
     node_id TEXT NOT NULL,
     rev INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE TABLE ledger_entries (
     seq INTEGER PRIMARY KEY CHECK (seq >= 0),
     kind TEXT NOT NULL CHECK (kind IN ('billed-time', 'token-usage')),
     node_id TEXT NOT NULL,
     reservation_id TEXT NOT NULL,
     at_ms INTEGER NOT NULL,
     amount_micro_usd INTEGER NOT NULL CHECK (amount_micro_usd > 0),
     recorded_at_ms INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE INDEX ledger_entries_by_node ON ledger_entries (node_id, seq);
   CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
     BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
   CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
     BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
   CREATE TABLE ledger_workloads (
     ordinal INTEGER PRIMARY KEY,
     request_id TEXT NOT NULL,
     node_id TEXT NOT NULL,
     ended_at_ms INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE INDEX ledger_workloads_by_node ON ledger_workloads (node_id, ordinal);`,
];

export interface SqliteLedgerStoreOptions {
  /** Path of the database file (created if absent), or ":memory:". */
  readonly path: string;
  /** How long to wait for another process's write lock. */
  readonly busyTimeoutMs?: number;
}

interface MetaRow {
  readonly version: number;
  readonly ledger_id: string;
  readonly clock_ms: number;
  readonly session_started_at_ms: number;
  readonly next_entry_seq: number;
}

type Commit = (next: LedgerCommit, expectedVersion: number) => CommitResult;

export class SqliteLedgerStore implements LedgerStore {
  readonly #db: Database.Database;
  readonly #meta: Database.Statement<[], MetaRow>;
  readonly #setMeta: Database.Statement<[number, string, number, number, number]>;
  readonly #commit: Database.Transaction<Commit>;

  constructor(options: SqliteLedgerStoreOptions) {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    if (!(busyTimeoutMs >= 0)) throw new RangeError("busyTimeoutMs: must be >= 0");
    this.#db = openPrivateDatabase(options.path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = FULL");
    this.#db.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`);
    migrate(this.#db);
    this.#meta = this.#db.prepare(
      "SELECT version, ledger_id, clock_ms, session_started_at_ms, next_entry_seq FROM ledger_meta WHERE id = 1",
    );
    this.#setMeta = this.#db.prepare(
      `UPDATE ledger_meta SET version = ?, ledger_id = ?, clock_ms = ?, session_started_at_ms = ?, next_entry_seq = ?
       WHERE id = 1`,
    );
    const putReservation = this.#db.prepare<[string, string, number, string]>(
      `INSERT INTO ledger_reservations (reservation_id, node_id, rev, record) VALUES (?, ?, ?, ?)
       ON CONFLICT (reservation_id) DO UPDATE SET node_id = excluded.node_id, rev = excluded.rev, record = excluded.record`,
    );
    const putBinding = this.#db.prepare<[string, string, number, string]>(
      `INSERT INTO ledger_bindings (deployment_id, reservation_id, rev, record) VALUES (?, ?, ?, ?)
       ON CONFLICT (deployment_id) DO UPDATE SET reservation_id = excluded.reservation_id, rev = excluded.rev,
         record = excluded.record`,
    );
    // A closed episode is final: the upsert changes nothing, and the commit is refused.
    const putEpisode = this.#db.prepare<[string, string, string, number, string]>(
      `INSERT INTO ledger_episodes (deployment_id, node_id, state, rev, record) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (deployment_id) DO UPDATE SET node_id = excluded.node_id, state = excluded.state,
         rev = excluded.rev, record = excluded.record
       WHERE ledger_episodes.state = 'open'`,
    );
    const putRequest = this.#db.prepare<[string, string, number, string]>(
      `INSERT INTO ledger_in_flight (request_id, node_id, rev, record) VALUES (?, ?, ?, ?)
       ON CONFLICT (request_id) DO UPDATE SET node_id = excluded.node_id, rev = excluded.rev, record = excluded.record`,
    );
    // Requests leave the state when they end; reservations, bindings and episodes never do.
    const dropRequests = this.#db.prepare<[string]>(
      "DELETE FROM ledger_in_flight WHERE request_id NOT IN (SELECT value FROM json_each(?))",
    );
    const missing = (table: string, key: string) =>
      this.#db.prepare<[string], { id: string }>(
        `SELECT ${key} AS id FROM ${table} WHERE ${key} NOT IN (SELECT value FROM json_each(?)) LIMIT 1`,
      );
    const kept = [
      ["reservation", missing("ledger_reservations", "reservation_id"), (s: LedgerState) => s.reservations],
      ["binding", missing("ledger_bindings", "deployment_id"), (s: LedgerState) => s.bindings],
      ["episode", missing("ledger_episodes", "deployment_id"), (s: LedgerState) => s.episodes],
    ] as const;
    const addEntry = this.#db.prepare<[number, string, string, string, number, number, number, string]>(
      `INSERT INTO ledger_entries (seq, kind, node_id, reservation_id, at_ms, amount_micro_usd, recorded_at_ms, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const addWorkload = this.#db.prepare<[string, string, number, string]>(
      "INSERT INTO ledger_workloads (request_id, node_id, ended_at_ms, record) VALUES (?, ?, ?, ?)",
    );

    this.#commit = this.#db.transaction((next: LedgerCommit, expectedVersion: number) => {
      const stored = this.#meta.get();
      const storedVersion = stored?.version ?? 0;
      const { state } = next;
      if (storedVersion !== expectedVersion || state.version <= expectedVersion) return "conflict" as const;
      const problem = entrySequenceProblem(next.entries, stored?.next_entry_seq ?? 0, state.nextEntrySeq);
      if (problem !== undefined) throw new LedgerStoreGuardError(`SqliteLedgerStore.commit: ${problem}`);
      const changed = <T extends { readonly rev: number }>(records: Readonly<Record<string, T>>) =>
        Object.values(records).filter((r) => r.rev > expectedVersion);
      for (const r of changed(state.reservations))
        putReservation.run(r.reservationId, r.nodeId, r.rev, JSON.stringify(r));
      for (const b of changed(state.bindings))
        putBinding.run(b.deploymentId, b.reservationId, b.rev, JSON.stringify(b));
      for (const e of changed(state.episodes))
        if (putEpisode.run(e.deploymentId, e.nodeId, e.state, e.rev, JSON.stringify(e)).changes !== 1)
          throw new LedgerStoreGuardError(`episode ${e.deploymentId}: a closed episode is final`);
      for (const q of changed(state.inFlight))
        putRequest.run(q.requestId, q.nodeId, q.rev, JSON.stringify(q));
      for (const [what, query, records] of kept) {
        const lost = query.get(JSON.stringify(Object.keys(records(state))));
        if (lost !== undefined)
          throw new LedgerStoreGuardError(`${what} ${lost.id}: the state may not forget it`);
      }
      dropRequests.run(JSON.stringify(Object.keys(state.inFlight)));
      for (const e of next.entries)
        addEntry.run(
          e.seq,
          e.kind,
          e.nodeId,
          e.reservationId,
          e.atMs,
          e.amountMicroUsd,
          e.recordedAtMs,
          JSON.stringify(e),
        );
      for (const w of next.workloads) addWorkload.run(w.requestId, w.nodeId, w.endedAtMs, JSON.stringify(w));
      this.#setMeta.run(
        state.version,
        state.ledgerId,
        state.clockMs,
        state.sessionStartedAtMs,
        state.nextEntrySeq,
      );
      return "committed" as const;
    });
  }

  load(): LedgerState | undefined {
    const meta = this.#meta.get();
    if (meta === undefined || meta.version === 0) return undefined;
    return {
      version: meta.version,
      ledgerId: meta.ledger_id,
      clockMs: meta.clock_ms,
      sessionStartedAtMs: meta.session_started_at_ms,
      nextEntrySeq: meta.next_entry_seq,
      reservations: this.#records<Reservation>(
        "ledger_reservations",
        "reservation_id",
        (r) => r.reservationId,
      ),
      bindings: this.#records<DeploymentBinding>("ledger_bindings", "deployment_id", (b) => b.deploymentId),
      episodes: this.#records<BillingEpisode>("ledger_episodes", "deployment_id", (e) => e.deploymentId),
      inFlight: this.#records<InFlightRequest>("ledger_in_flight", "request_id", (q) => q.requestId),
    };
  }

  commit(next: LedgerCommit, expectedVersion: number): CommitResult {
    // IMMEDIATE: take the write lock before reading the version, so two processes serialize.
    return this.#commit.immediate(next, expectedVersion);
  }

  entries(query: EntryQuery = {}): LedgerEntry[] {
    const rows = this.#db
      .prepare<{ node: string | null; after: number; limit: number }, { record: string }>(
        `SELECT record FROM ledger_entries WHERE (@node IS NULL OR node_id = @node) AND seq > @after
         ORDER BY seq LIMIT @limit`,
      )
      .all({ node: query.nodeId ?? null, after: query.afterSeq ?? -1, limit: query.limit ?? -1 });
    return rows.map((r) => JSON.parse(r.record) as LedgerEntry);
  }

  workloads(query: WorkloadQuery = {}): WorkloadCost[] {
    const rows = this.#db
      .prepare<{ node: string | null; limit: number }, { record: string }>(
        `SELECT record FROM ledger_workloads WHERE (@node IS NULL OR node_id = @node) ORDER BY ordinal LIMIT @limit`,
      )
      .all({ node: query.nodeId ?? null, limit: query.limit ?? -1 });
    return rows.map((r) => JSON.parse(r.record) as WorkloadCost);
  }

  close(): void {
    this.#db.close();
  }

  #records<T>(table: string, key: string, idOf: (record: T) => string): Record<string, T> {
    const out: Record<string, T> = {};
    for (const row of this.#db
      .prepare<[], { record: string }>(`SELECT record FROM ${table} ORDER BY ${key}`)
      .all()) {
      const record = JSON.parse(row.record) as T;
      out[idOf(record)] = record;
    }
    return out;
  }
}

/** Ledger tables carry their schema version in `ledger_schema`, not `user_version` (the file may be shared). */
function migrate(db: Database.Database): void {
  const apply = db.transaction(() => {
    db.exec(
      "CREATE TABLE IF NOT EXISTS ledger_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT",
    );
    const row = db.prepare<[], { version: number }>("SELECT version FROM ledger_schema WHERE id = 1").get();
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length)
      throw new Error(
        `ledger store schema version ${current} is newer than this PAIR (${MIGRATIONS.length}); upgrade PAIR`,
      );
    for (let v = current; v < MIGRATIONS.length; v += 1) db.exec(MIGRATIONS[v] ?? "");
    db.prepare(
      "INSERT INTO ledger_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
    ).run(MIGRATIONS.length);
  });
  apply.immediate();
}
