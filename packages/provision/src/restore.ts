/**
 * What a restart does to the contract's state. Identity, phase and every obligation survive; leases
 * and liveness (observations) do not. A create (or resume) whose answer was never recorded is Uncertain now.
 * Nothing acts on a restored record until a lease is granted again, with an epoch above the
 * durable high-water mark.
 * Must not know: how the state was read back.
 */

import { outcomeUncertain } from "./decide-draft.js";
import type { HostingEvent } from "./inputs.js";
import type { DeploymentRecord, HostingState } from "./state.js";

export function restore(state: HostingState, atMs: number): { state: HostingState; events: HostingEvent[] } {
  const version = state.version + 1;
  const events: HostingEvent[] = [];
  const deployments: Record<string, DeploymentRecord> = {};
  for (const [id, record] of Object.entries(state.deployments)) {
    const { lease: _lease, observed: _observed, ...kept } = record;
    let next: DeploymentRecord = kept;
    if (kept.phase === "Declared" && kept.intent !== undefined && kept.intent.answer === undefined) {
      next = { ...kept, phase: "Uncertain", intent: { ...kept.intent, answer: "lost" } };
      events.push({ type: "PhaseChanged", id, from: "Declared", to: "Uncertain", atMs });
      const what = kept.origin === "resume" ? "resume" : "create";
      events.push(outcomeUncertain(kept, "lost", `restarted while the ${what} was in flight`));
    } else if (kept.intent?.retryInFlight === true) {
      const { retryInFlight: _r, ...intent } = kept.intent;
      next = { ...kept, intent };
    }
    deployments[id] = { ...next, rev: version };
  }
  return { state: { version, deployments, obligations: state.obligations }, events };
}
