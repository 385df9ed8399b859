/**
 * The sponsor's one spending ledger (`<data_dir>/managed/ledger.db`), shared by every manager of
 * rented nodes (Hugging Face endpoints, Runpod pods): opened at the first `open()`, with one
 * `SessionStarted` per process, closed once at exit.
 * Must not know: which providers use it, HTTP, timers.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@pair/provision";
import { SqliteLedgerStore } from "@pair/store";
import { ManagedLedger } from "./managed-ledger.js";

export class SharedLedger {
  readonly #dataDir: string;
  readonly #clock: Clock;
  readonly #ledgerId: string;
  #store: SqliteLedgerStore | undefined;
  #ledger: ManagedLedger | undefined;

  constructor(options: { dataDir: string; clock: Clock; ledgerId: string }) {
    this.#dataDir = options.dataDir;
    this.#clock = options.clock;
    this.#ledgerId = options.ledgerId;
  }

  open(): ManagedLedger {
    if (this.#ledger !== undefined) return this.#ledger;
    const dir = join(this.#dataDir, "managed");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#store = new SqliteLedgerStore({ path: join(dir, "ledger.db") });
    this.#ledger = new ManagedLedger(this.#store, this.#clock, this.#ledgerId);
    this.#ledger.sessionStarted();
    return this.#ledger;
  }

  /** The ledger if a manager opened it (reading spend must not create a ledger for nobody). */
  opened(): ManagedLedger | undefined {
    return this.#ledger;
  }

  /** The sponsor's wall clock now, as the ledger reads it. */
  nowMs(): number {
    return this.#clock.now().wallMs;
  }

  close(): void {
    this.#store?.close();
    this.#store = undefined;
    this.#ledger = undefined;
  }
}
