/**
 * The deployment lifecycle: one literal table, exactly as the hosting contract states it. Every edge
 * not in the table is refused with a result.
 * Must not know: why a transition happens (decide.ts) or who asked (leases).
 */

import { err, ok, type Result } from "./result.js";

export const PHASES = [
  "Declared",
  "Requested",
  "Uncertain",
  "Active",
  "StopRequired",
  "Stopped",
  "Cancelled",
  "Disowned",
] as const;

export type Phase = (typeof PHASES)[number];

/**
 * Declared     -> Requested | Uncertain | Cancelled
 * Requested    -> Requested | Active | StopRequired | Stopped | Disowned
 * Active       -> Active | StopRequired | Stopped | Disowned
 * Uncertain    -> Uncertain | Requested | Active | StopRequired | Stopped | Disowned
 * StopRequired -> StopRequired | Stopped | Disowned
 * Stopped, Cancelled, Disowned are terminal
 */
export const TRANSITIONS: { readonly [From in Phase]: readonly Phase[] } = {
  Declared: ["Requested", "Uncertain", "Cancelled"],
  Requested: ["Requested", "Active", "StopRequired", "Stopped", "Disowned"],
  Active: ["Active", "StopRequired", "Stopped", "Disowned"],
  Uncertain: ["Uncertain", "Requested", "Active", "StopRequired", "Stopped", "Disowned"],
  StopRequired: ["StopRequired", "Stopped", "Disowned"],
  Stopped: [],
  Cancelled: [],
  Disowned: [],
};

export interface IllegalTransition {
  readonly code: "illegal-transition";
  readonly from: Phase;
  readonly to: Phase;
}

export function canTransition(from: Phase, to: Phase): boolean {
  return TRANSITIONS[from].includes(to);
}

export function transition(from: Phase, to: Phase): Result<Phase, IllegalTransition> {
  return canTransition(from, to) ? ok(to) : err({ code: "illegal-transition", from, to });
}

export function isTerminal(phase: Phase): boolean {
  return TRANSITIONS[phase].length === 0;
}
