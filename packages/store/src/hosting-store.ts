/**
 * The hosting contract's state in SQLite (better-sqlite3, WAL, synchronous FULL): one row per
 * deployment and per obligation, as JSON, plus the state version used for compare-and-set. A commit
 * writes only the records changed since the version it expects, in one transaction, and refuses a
 * stale writer. Two guards hold even against a buggy caller: a lease high-water mark never goes
 * down, and a closed obligation never reopens. The schema and the records' shape move forward by
 * `MIGRATIONS` (SQLite's user_version), in one transaction when a store opens.
 * Must not know: the contract's rules beyond those two guards (they live in @pair/provision).
 */

import type Database from "better-sqlite3";
import { openPrivateDatabase } from "./private-database.js";
import type { DeploymentRecord, HostingState, HostingStore, StopObligation } from "@pair/provision";
import { EMPTY_STATE } from "@pair/provision";

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE hosting_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT;
   INSERT INTO hosting_meta (id, version) VALUES (1, 0);
   CREATE TABLE hosting_deployments (
     id TEXT PRIMARY KEY,
     rev INTEGER NOT NULL,
     phase TEXT NOT NULL,
     lease_high_water INTEGER NOT NULL,
     record TEXT NOT NULL
   ) STRICT;
   CREATE TABLE hosting_obligations (
     deployment_id TEXT PRIMARY KEY,
     rev INTEGER NOT NULL,
     state TEXT NOT NULL,
     record TEXT NOT NULL
   ) STRICT;`,
  // Resume became a contract command. Before, bringing an existing endpoint into use was a create
  // whose spec said `hardware: "adopted"`: those records (and their obligations) now read as resumes.
  `UPDATE hosting_obligations SET record = json_set(record, '$.openedBecause', 'resume-intent')
     WHERE json_extract(record, '$.openedBecause') = 'create-intent' AND deployment_id IN (
       SELECT id FROM hosting_deployments
       WHERE json_extract(record, '$.origin') = 'create' AND json_extract(record, '$.spec.hardware') = 'adopted');
   UPDATE hosting_deployments SET record = json_set(record, '$.intent.answer', 'resumed')
     WHERE json_extract(record, '$.origin') = 'create' AND json_extract(record, '$.spec.hardware') = 'adopted'
       AND json_extract(record, '$.intent.answer') = 'created';
   UPDATE hosting_deployments SET record = json_set(json_remove(record, '$.spec'), '$.origin', 'resume')
     WHERE json_extract(record, '$.origin') = 'create' AND json_extract(record, '$.spec.hardware') = 'adopted';`,
];

export class StoreGuardError extends Error {
  override readonly name = "StoreGuardError";
}

export interface SqliteHostingStoreOptions {
  /** Path of the database file (created if absent), or ":memory:". */
  readonly path: string;
  /** How long to wait for another process's write lock. */
  readonly busyTimeoutMs?: number;
}

export class SqliteHostingStore implements HostingStore {
  readonly #db: Database.Database;
  readonly #version: Database.Statement<[], { version: number }>;
  readonly #deployments: Database.Statement<[], { record: string }>;
  readonly #obligations: Database.Statement<[], { record: string }>;
  readonly #putDeployment: Database.Statement<[string, number, string, number, string]>;
  readonly #putObligation: Database.Statement<[string, number, string, string]>;
  readonly #setVersion: Database.Statement<[number]>;
  readonly #commit: Database.Transaction<
    (next: HostingState, expectedVersion: number) => "committed" | "conflict"
  >;

  constructor(options: SqliteHostingStoreOptions) {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    if (!(busyTimeoutMs >= 0)) throw new RangeError("busyTimeoutMs: must be >= 0");
    this.#db = openPrivateDatabase(options.path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = FULL");
    this.#db.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`);
    migrate(this.#db);
    this.#version = this.#db.prepare("SELECT version FROM hosting_meta WHERE id = 1");
    this.#deployments = this.#db.prepare("SELECT record FROM hosting_deployments ORDER BY id");
    this.#obligations = this.#db.prepare("SELECT record FROM hosting_obligations ORDER BY deployment_id");
    this.#putDeployment = this.#db.prepare(
      `INSERT INTO hosting_deployments (id, rev, phase, lease_high_water, record) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET rev = excluded.rev, phase = excluded.phase,
         lease_high_water = excluded.lease_high_water, record = excluded.record
       WHERE excluded.lease_high_water >= hosting_deployments.lease_high_water`,
    );
    this.#putObligation = this.#db.prepare(
      `INSERT INTO hosting_obligations (deployment_id, rev, state, record) VALUES (?, ?, ?, ?)
       ON CONFLICT (deployment_id) DO UPDATE SET rev = excluded.rev, state = excluded.state, record = excluded.record
       WHERE hosting_obligations.state = 'open' OR excluded.state = hosting_obligations.state`,
    );
    this.#setVersion = this.#db.prepare("UPDATE hosting_meta SET version = ? WHERE id = 1");
    this.#commit = this.#db.transaction((next: HostingState, expectedVersion: number) => {
      const stored = this.#version.get()?.version ?? 0;
      if (stored !== expectedVersion || next.version <= expectedVersion) return "conflict" as const;
      for (const d of Object.values(next.deployments)) if (d.rev > expectedVersion) this.#writeDeployment(d);
      for (const o of Object.values(next.obligations)) if (o.rev > expectedVersion) this.#writeObligation(o);
      this.#setVersion.run(next.version);
      return "committed" as const;
    });
  }

  load(): HostingState {
    const version = this.#version.get()?.version ?? 0;
    if (version === 0) return EMPTY_STATE;
    const deployments: Record<string, DeploymentRecord> = {};
    for (const row of this.#deployments.all()) {
      const record = JSON.parse(row.record) as DeploymentRecord;
      deployments[record.id] = record;
    }
    const obligations: Record<string, StopObligation> = {};
    for (const row of this.#obligations.all()) {
      const record = JSON.parse(row.record) as StopObligation;
      obligations[record.deploymentId] = record;
    }
    return { version, deployments, obligations };
  }

  commit(next: HostingState, expectedVersion: number): "committed" | "conflict" {
    // IMMEDIATE: take the write lock before reading the version, so two processes serialize.
    return this.#commit.immediate(next, expectedVersion);
  }

  close(): void {
    this.#db.close();
  }

  #writeDeployment(d: DeploymentRecord): void {
    const changed = this.#putDeployment.run(
      d.id,
      d.rev,
      d.phase,
      d.leaseHighWater,
      JSON.stringify(d),
    ).changes;
    if (changed !== 1) throw new StoreGuardError(`deployment ${d.id}: lease high-water mark would go down`);
  }

  #writeObligation(o: StopObligation): void {
    const changed = this.#putObligation.run(o.deploymentId, o.rev, o.state, JSON.stringify(o)).changes;
    if (changed !== 1)
      throw new StoreGuardError(`obligation ${o.deploymentId}: a closed obligation cannot reopen`);
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length)
    throw new Error(
      `hosting store schema version ${current} is newer than this PAIR (${MIGRATIONS.length}); upgrade PAIR`,
    );
  const apply = db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v += 1) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  apply.immediate();
}
