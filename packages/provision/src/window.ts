/**
 * Rental windows: a deployment rented for a stretch of time (a batch's Hugging Face Job) must stop
 * when its window ends, whether or not the provider's own timeout would also fire. Pure: the sponsor
 * keeps each deployment's window, asks `windowObligations` on every pass, and feeds `RequireStop`
 * with reason `window-ended` for each one named. `windowVerdict` answers for one window (and when
 * to look again). A window obliges; the controller performs.
 * Must not know: providers, timers, where windows are configured.
 */

import { liveRecords, type DeploymentId, type HostingState } from "./state.js";

/** A window in wall time, epoch ms: it ends at `endMs` (inclusive: at `endMs` it has ended). */
export interface RentalWindow {
  readonly startMs: number;
  readonly endMs: number;
}

export type WindowVerdict =
  | { readonly ended: false; readonly remainingMs: number }
  | { readonly ended: true; readonly reason: "window-ended" };

export function validateWindow(window: RentalWindow): readonly string[] {
  const problems: string[] = [];
  if (!Number.isFinite(window.startMs)) problems.push("startMs: must be a finite epoch ms");
  if (!Number.isFinite(window.endMs)) problems.push("endMs: must be a finite epoch ms");
  if (!(window.endMs > window.startMs)) problems.push("endMs: must be after startMs");
  return problems;
}

/** Whether the window has ended at `nowWallMs`; if not, how long until it does. */
export function windowVerdict(window: RentalWindow, nowWallMs: number): WindowVerdict {
  const problems = validateWindow(window);
  if (problems.length > 0) throw new RangeError(`rental window: ${problems.join("; ")}`);
  return nowWallMs >= window.endMs
    ? { ended: true, reason: "window-ended" }
    : { ended: false, remainingMs: window.endMs - nowWallMs };
}

export interface WindowObligation {
  readonly id: DeploymentId;
  readonly reason: "window-ended";
}

/** Live deployments whose window has ended and that are not yet stopping (nor only declared). */
export function windowObligations(
  state: HostingState,
  windows: ReadonlyMap<DeploymentId, RentalWindow>,
  nowWallMs: number,
): WindowObligation[] {
  const out: WindowObligation[] = [];
  for (const record of liveRecords(state)) {
    if (record.phase === "StopRequired" || record.phase === "Declared") continue;
    const window = windows.get(record.id);
    if (window !== undefined && windowVerdict(window, nowWallMs).ended)
      out.push({ id: record.id, reason: "window-ended" });
  }
  return out;
}
