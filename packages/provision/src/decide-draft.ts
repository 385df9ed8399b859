/**
 * The scratch pad of one decision and the small helpers every part of `decide` shares: records are
 * replaced, never edited in place, and every change is stamped with the new state version.
 * Must not know: the rules (decide-*.ts).
 */

import type { Command, Decision, HostingEvent, Refusal } from "./inputs.js";
import { canTransition, type Phase } from "./lifecycle.js";
import { err, ok, type Result } from "./result.js";
import type { DeploymentRecord, HostingState, StopObligation } from "./state.js";

export type Outcome = Result<Decision, Refusal>;

/** Mutable scratch for one decision; records are replaced, never edited in place. */
export class Draft {
  readonly events: HostingEvent[] = [];
  readonly commands: Command[] = [];
  readonly version: number;
  #deployments: Record<string, DeploymentRecord>;
  #obligations: Record<string, StopObligation>;

  constructor(readonly base: HostingState) {
    this.version = base.version + 1;
    this.#deployments = base.deployments;
    this.#obligations = base.obligations;
  }

  putDeployment(record: Omit<DeploymentRecord, "rev">): DeploymentRecord {
    const next = { ...record, rev: this.version } as DeploymentRecord;
    this.#deployments = { ...this.#deployments, [next.id]: next };
    return next;
  }

  putObligation(obligation: Omit<StopObligation, "rev">): void {
    const next = { ...obligation, rev: this.version } as StopObligation;
    this.#obligations = { ...this.#obligations, [next.deploymentId]: next };
  }

  obligation(id: string): StopObligation | undefined {
    return this.#obligations[id];
  }

  finish(): Decision {
    return {
      state: { version: this.version, deployments: this.#deployments, obligations: this.#obligations },
      commands: this.commands,
      events: this.events,
    };
  }
}

export function obligationOf(draft: Draft, record: DeploymentRecord): StopObligation {
  const obligation = draft.obligation(record.id);
  // Every phase that can reach evidence went through BeginCreate or RecordOrphan, which open one.
  if (obligation === undefined)
    throw new Error(`invariant: deployment ${record.id} in ${record.phase} has no obligation`);
  return obligation;
}

export function moveTo(
  draft: Draft,
  record: DeploymentRecord,
  to: Phase,
  atMs: number,
): Result<DeploymentRecord, Refusal> {
  if (!canTransition(record.phase, to)) return illegal(record, to);
  const next = draft.putDeployment({ ...record, phase: to });
  if (record.phase !== to)
    draft.events.push({ type: "PhaseChanged", id: record.id, from: record.phase, to, atMs });
  return ok(next);
}

export function terminal(phase: Phase): boolean {
  return phase === "Stopped" || phase === "Cancelled" || phase === "Disowned";
}

/** The event for a create's (or a resume's) answer that was refused or never came. */
export function outcomeUncertain(
  record: DeploymentRecord,
  answer: "refused" | "lost",
  detail: string,
): HostingEvent {
  const type = record.origin === "resume" ? "ResumeOutcomeUncertain" : "CreateOutcomeUncertain";
  return { type, id: record.id, answer, detail };
}

export function wrongPhase(record: DeploymentRecord, expected: string): { ok: false; error: Refusal } {
  return err({ code: "wrong-phase", id: record.id, phase: record.phase, expected });
}

export function illegal(record: DeploymentRecord, to: Phase): { ok: false; error: Refusal } {
  return err({ code: "illegal-transition", id: record.id, from: record.phase, to });
}
