/**
 * The frame every accepted input runs in, so every input is also a tick: bring accrual and shares up
 * to the input's time, settle marks and due stops, apply the input's own change, and evaluate caps
 * again. Time never runs backwards inside the ledger: an input stamped before the ledger's clock acts
 * at the clock.
 * Must not know: what any particular input means.
 */

import { err, ok, type Result } from "@pair/provision";
import { advance } from "./accrual.js";
import { evaluateBudgets } from "./budget.js";
import { Draft } from "./draft.js";
import type { LedgerDecision, LedgerRefusal } from "./inputs.js";
import type { LedgerState } from "./state.js";
import { isWallMs } from "./validate.js";

export type Outcome = Result<LedgerDecision, LedgerRefusal>;

/** Run `change` on a draft advanced to `atMs` (or the ledger's clock, if later). */
export function step(
  state: LedgerState,
  atMs: number,
  change: (draft: Draft, atMs: number) => Result<unknown, LedgerRefusal>,
): Outcome {
  if (!isWallMs(atMs)) return invalid(`time ${atMs}: must be integer epoch milliseconds`);
  const at = Math.max(atMs, state.clockMs);
  const draft = new Draft(state);
  advance(draft, at);
  evaluateBudgets(draft, at);
  const changed = change(draft, at);
  if (!changed.ok) return changed;
  evaluateBudgets(draft, at);
  return ok(draft.finish());
}

/** A decision that changes nothing (an event the ledger has no use for). */
export function unchanged(state: LedgerState): Outcome {
  return ok({ state, commands: [], events: [], entries: [], workloads: [] });
}

export function invalid(detail: string): { readonly ok: false; readonly error: LedgerRefusal } {
  return err({ code: "invalid-input", detail });
}

export const DONE: Result<undefined, never> = ok(undefined);
