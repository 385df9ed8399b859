/**
 * An in-memory `LedgerStore`. It keeps everything as JSON text, so what it hands back is exactly what
 * a durable store would read (no shared objects, nothing that does not serialize), and `serialize()` /
 * `fromSerialized()` carry it across a simulated restart.
 * Must not know: anything beyond the store port.
 */

import type { LedgerEntry, WorkloadCost } from "./entries.js";
import type { LedgerState } from "./state.js";
import {
  LedgerStoreGuardError,
  entrySequenceProblem,
  historyProblem,
  type CommitResult,
  type EntryQuery,
  type LedgerCommit,
  type LedgerStore,
  type WorkloadQuery,
} from "./store-port.js";

interface Image {
  readonly state: string | undefined;
  readonly entries: string[];
  readonly workloads: string[];
}

export class MemoryLedgerStore implements LedgerStore {
  #state: string | undefined;
  #version = 0;
  #nextEntrySeq = 0;
  #entries: string[] = [];
  #workloads: string[] = [];
  #closed = false;

  /** A store holding what `serialize()` wrote (a restart from a snapshot). */
  static fromSerialized(text: string): MemoryLedgerStore {
    const image = JSON.parse(text) as Image;
    const store = new MemoryLedgerStore();
    store.#state = image.state;
    if (image.state !== undefined) {
      const state = JSON.parse(image.state) as LedgerState;
      store.#version = state.version;
      store.#nextEntrySeq = state.nextEntrySeq;
    }
    store.#entries = [...image.entries];
    store.#workloads = [...image.workloads];
    return store;
  }

  serialize(): string {
    const image: Image = { state: this.#state, entries: this.#entries, workloads: this.#workloads };
    return JSON.stringify(image);
  }

  load(): LedgerState | undefined {
    this.#open();
    return this.#state === undefined ? undefined : (JSON.parse(this.#state) as LedgerState);
  }

  commit(next: LedgerCommit, expectedVersion: number): CommitResult {
    this.#open();
    if (this.#version !== expectedVersion || next.state.version <= expectedVersion) return "conflict";
    const stored = this.#state === undefined ? undefined : (JSON.parse(this.#state) as LedgerState);
    const problem =
      entrySequenceProblem(next.entries, this.#nextEntrySeq, next.state.nextEntrySeq) ??
      (stored === undefined ? undefined : historyProblem(stored, next.state));
    if (problem !== undefined) throw new LedgerStoreGuardError(`MemoryLedgerStore.commit: ${problem}`);
    this.#state = JSON.stringify(next.state);
    this.#version = next.state.version;
    this.#nextEntrySeq = next.state.nextEntrySeq;
    for (const e of next.entries) this.#entries.push(JSON.stringify(e));
    for (const w of next.workloads) this.#workloads.push(JSON.stringify(w));
    return "committed";
  }

  entries(query: EntryQuery = {}): LedgerEntry[] {
    this.#open();
    const out: LedgerEntry[] = [];
    for (const text of this.#entries) {
      const e = JSON.parse(text) as LedgerEntry;
      if (query.nodeId !== undefined && e.nodeId !== query.nodeId) continue;
      if (query.afterSeq !== undefined && e.seq <= query.afterSeq) continue;
      if (query.limit !== undefined && out.length >= query.limit) break;
      out.push(e);
    }
    return out;
  }

  workloads(query: WorkloadQuery = {}): WorkloadCost[] {
    this.#open();
    const out: WorkloadCost[] = [];
    for (const text of this.#workloads) {
      const w = JSON.parse(text) as WorkloadCost;
      if (query.nodeId !== undefined && w.nodeId !== query.nodeId) continue;
      if (query.limit !== undefined && out.length >= query.limit) break;
      out.push(w);
    }
    return out;
  }

  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new Error("MemoryLedgerStore: closed");
  }
}
