/**
 * The port through which the ledger is made durable. A commit replaces the state and appends the
 * decision's entries and workload costs in one atomic step, only if the stored version is still the
 * one the writer read (compare-and-set): a stale writer is refused and must decide again on fresh
 * state. Entries must continue the stored sequence without a gap, so none can be lost or doubled.
 * Implementations: `MemoryLedgerStore` (here), `SqliteLedgerStore` (@pair/store); one contract suite.
 * Must not know: SQL, files, the clock.
 */

import type { LedgerEntry, WorkloadCost } from "./entries.js";
import type { LedgerDecision } from "./inputs.js";
import type { LedgerState, NodeId } from "./state.js";

/** What one commit writes: a state and what was appended since the stored one. */
export interface LedgerCommit {
  readonly state: LedgerState;
  readonly entries: readonly LedgerEntry[];
  readonly workloads: readonly WorkloadCost[];
}

export interface EntryQuery {
  readonly nodeId?: NodeId;
  /** Only entries with `seq` above this. */
  readonly afterSeq?: number;
  /** At most this many, in `seq` order. */
  readonly limit?: number;
}

export interface WorkloadQuery {
  readonly nodeId?: NodeId;
  readonly limit?: number;
}

export type CommitResult = "committed" | "conflict";

export interface LedgerStore {
  /** The last committed state, or undefined when nothing was ever committed. */
  load(): LedgerState | undefined;
  /**
   * Atomically store `next`, only if the stored version is `expectedVersion` (0 for an empty store)
   * and `next.state.version` is above it. Entries must be numbered from the stored `nextEntrySeq` up
   * to `next.state.nextEntrySeq`, without gaps; a closed episode stays as it was; no reservation,
   * binding or episode disappears. Anything else throws `LedgerStoreGuardError` (a bug, not a race).
   */
  commit(next: LedgerCommit, expectedVersion: number): CommitResult;
  /** The history of entries, in `seq` order. */
  entries(query?: EntryQuery): LedgerEntry[];
  /** Workload costs, in the order they ended. */
  workloads(query?: WorkloadQuery): WorkloadCost[];
  close(): void;
}

/**
 * A commit that would break the ledger's history: entries out of sequence, a closed episode written
 * again, a reservation, binding or episode forgotten. A bug in the caller, never a race; the commit
 * is not applied.
 */
export class LedgerStoreGuardError extends Error {
  override readonly name = "LedgerStoreGuardError";
}

/** A reason `next` may not follow `stored` (the last committed state), or undefined. */
export function historyProblem(stored: LedgerState, next: LedgerState): string | undefined {
  for (const id of Object.keys(stored.reservations))
    if (next.reservations[id] === undefined) return `reservation ${id}: the state may not forget it`;
  for (const id of Object.keys(stored.bindings))
    if (next.bindings[id] === undefined) return `binding ${id}: the state may not forget it`;
  for (const [id, episode] of Object.entries(stored.episodes)) {
    const now = next.episodes[id];
    if (now === undefined) return `episode ${id}: the state may not forget it`;
    if (episode.state === "closed" && now.rev !== episode.rev)
      return `episode ${id}: a closed episode is final`;
  }
  return undefined;
}

/** Check that `entries` continue the sequence `[fromSeq, toSeq)` exactly; a message when they do not. */
export function entrySequenceProblem(
  entries: readonly LedgerEntry[],
  fromSeq: number,
  toSeq: number,
): string | undefined {
  if (entries.length !== toSeq - fromSeq)
    return `expected ${toSeq - fromSeq} entries (seq ${fromSeq}..${toSeq - 1}), got ${entries.length}`;
  for (const [i, entry] of entries.entries())
    if (entry.seq !== fromSeq + i) return `entry ${i} has seq ${entry.seq}, expected ${fromSeq + i}`;
  return undefined;
}

/** Fold decisions made one after another into one commit (their state is the last one's). */
export function commitOf(decisions: readonly LedgerDecision[]): LedgerCommit | undefined {
  const last = decisions.at(-1);
  if (last === undefined) return undefined;
  return {
    state: last.state,
    entries: decisions.flatMap((d) => d.entries),
    workloads: decisions.flatMap((d) => d.workloads),
  };
}
