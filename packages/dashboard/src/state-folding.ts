/**
 * A rented node's state history as rows a person reads: a burst of changes close together that
 * nothing of PAIR's caused (a node flapping at the provider between starting, running and scaled to
 * zero) folds into one row that says how many changes and between which states. A change PAIR caused
 * (a pause, a resume, a wake by a request) always keeps its own row, so its cause stays on the row
 * it belongs to.
 * Must not know: the DOM, where the history comes from.
 */

import type { StateChange } from "./wire.js";

/** Changes at most this far apart belong to one burst. */
export const BURST_GAP_MS = 60_000;
/** A burst folds from this many changes on. */
export const FOLD_FROM = 3;

export type HistoryRow =
  | { readonly kind: "change"; readonly change: StateChange }
  | {
      readonly kind: "burst";
      /** Oldest first. */
      readonly changes: readonly StateChange[];
      /** The states passed through, each once, in the order first seen. */
      readonly states: readonly string[];
    };

/** The node recorded no cause of PAIR's for it: the provider's side (or, from an older node, nothing). */
export function providerSide(c: StateChange): boolean {
  return c.reason === null || c.reason.startsWith("provider-side change");
}

/** `history` oldest first → rows newest first. */
export function foldStateHistory(history: readonly StateChange[]): HistoryRow[] {
  const groups: StateChange[][] = [];
  for (const c of history) {
    const last = groups[groups.length - 1];
    const prev = last?.[last.length - 1];
    const burst =
      providerSide(c) &&
      prev !== undefined &&
      providerSide(prev) &&
      last !== undefined &&
      Date.parse(c.at) - Date.parse(prev.at) <= BURST_GAP_MS;
    if (burst) last.push(c);
    else groups.push([c]);
  }
  const rows: HistoryRow[] = [];
  for (const g of groups) {
    if (g.length < FOLD_FROM) for (const change of g) rows.push({ kind: "change", change });
    else
      rows.push({
        kind: "burst",
        changes: g,
        states: [...new Set(g.map((c) => c.state))],
      });
  }
  return rows.reverse();
}
