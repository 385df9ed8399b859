/**
 * A `--rent auto` batch's rental, durable beside its batch in `batches.db`: what it may rent (the
 * model, the deadline, the budget, the credential), what it rented (the node, the flavor, its price),
 * what it has spent, and where it is (watching → renting → serving → stopping → stopped, or
 * unavailable). A restart finds a rental it has to watch or stop again.
 * Must not know: how a GPU is rented or stopped (batch-rental.ts), HTTP.
 */

import type Database from "better-sqlite3";

export type RentalState = "watching" | "renting" | "serving" | "stopping" | "stopped" | "unavailable";

export interface StoredRental {
  readonly batchId: string;
  readonly model: string;
  readonly credential: string | null;
  /** Unix seconds. */
  readonly deadlineAtS: number;
  readonly budgetUsd: number | null;
  readonly state: RentalState;
  readonly node: string | null;
  readonly flavor: string | null;
  readonly gpu: string | null;
  readonly usdPerHour: number | null;
  readonly rentedAtS: number | null;
  readonly servingAtS: number | null;
  readonly stoppedAtS: number | null;
  readonly stopReason: string | null;
  readonly spentUsd: number;
  /** Output tokens per second the rented node gave this batch's model, once it served lines. */
  readonly measuredTokensPerS: number | null;
  /** The last plan's words (why nothing is rented, why none could be). */
  readonly note: string | null;
}

interface RentalRow {
  batch_id: string;
  model: string;
  credential: string | null;
  deadline_at: number;
  budget_usd: number | null;
  state: RentalState;
  node: string | null;
  flavor: string | null;
  gpu: string | null;
  usd_per_hour: number | null;
  rented_at: number | null;
  serving_at: number | null;
  stopped_at: number | null;
  stop_reason: string | null;
  spent_usd: number;
  measured_tokens_per_s: number | null;
  note: string | null;
}

/** The fields a change may set, by their column. */
const COLUMN: Readonly<Record<keyof Omit<StoredRental, "batchId">, keyof RentalRow>> = {
  model: "model",
  credential: "credential",
  deadlineAtS: "deadline_at",
  budgetUsd: "budget_usd",
  state: "state",
  node: "node",
  flavor: "flavor",
  gpu: "gpu",
  usdPerHour: "usd_per_hour",
  rentedAtS: "rented_at",
  servingAtS: "serving_at",
  stoppedAtS: "stopped_at",
  stopReason: "stop_reason",
  spentUsd: "spent_usd",
  measuredTokensPerS: "measured_tokens_per_s",
  note: "note",
};

export class RentalStore {
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /** A batch's rental to watch (created with its batch, before its first plan). */
  add(r: Pick<StoredRental, "batchId" | "model" | "credential" | "deadlineAtS" | "budgetUsd">): void {
    this.#db
      .prepare(
        `INSERT INTO rentals (batch_id, model, credential, deadline_at, budget_usd, state)
         VALUES (?, ?, ?, ?, ?, 'watching')`,
      )
      .run(r.batchId, r.model, r.credential, r.deadlineAtS, r.budgetUsd);
  }

  get(batchId: string): StoredRental | undefined {
    const row = this.#db.prepare("SELECT * FROM rentals WHERE batch_id = ?").get(batchId) as
      RentalRow | undefined;
    return row === undefined ? undefined : rentalOf(row);
  }

  /** Every node a batch rented (running or long stopped): never part of "the cluster alone". */
  nodes(): Set<string> {
    const rows = this.#db.prepare("SELECT node FROM rentals WHERE node IS NOT NULL").all() as {
      node: string;
    }[];
    return new Set(rows.map((r) => r.node));
  }

  /** Nodes a batch stopped for good (stopping or stopped): gone from routing. */
  retiredNodes(): Set<string> {
    const rows = this.#db
      .prepare("SELECT node FROM rentals WHERE node IS NOT NULL AND state IN ('stopping', 'stopped')")
      .all() as { node: string }[];
    return new Set(rows.map((r) => r.node));
  }

  /** Rentals that may still rent, or whose node may still bill. */
  active(): StoredRental[] {
    const rows = this.#db
      .prepare("SELECT * FROM rentals WHERE state IN ('watching', 'renting', 'serving', 'stopping')")
      .all() as RentalRow[];
    return rows.map(rentalOf);
  }

  update(batchId: string, change: Partial<Omit<StoredRental, "batchId">>): StoredRental | undefined {
    const keys = Object.keys(change) as (keyof typeof COLUMN)[];
    if (keys.length > 0)
      this.#db
        .prepare(`UPDATE rentals SET ${keys.map((k) => `${COLUMN[k]} = ?`).join(", ")} WHERE batch_id = ?`)
        .run(...keys.map((k) => change[k] ?? null), batchId);
    return this.get(batchId);
  }
}

function rentalOf(r: RentalRow): StoredRental {
  return {
    batchId: r.batch_id,
    model: r.model,
    credential: r.credential,
    deadlineAtS: r.deadline_at,
    budgetUsd: r.budget_usd,
    state: r.state,
    node: r.node,
    flavor: r.flavor,
    gpu: r.gpu,
    usdPerHour: r.usd_per_hour,
    rentedAtS: r.rented_at,
    servingAtS: r.serving_at,
    stoppedAtS: r.stopped_at,
    stopReason: r.stop_reason,
    spentUsd: r.spent_usd,
    measuredTokensPerS: r.measured_tokens_per_s,
    note: r.note,
  };
}
