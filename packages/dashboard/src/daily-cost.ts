/**
 * The daily cost chart's numbers: finished workloads' estimated costs summed per local calendar day,
 * for the last `days` days up to today (days without work are zero).
 * Must not know: the DOM, where the workloads come from.
 */

import type { Workload } from "./wire.js";

export interface DayCost {
  /** `YYYY-MM-DD`, local time. */
  readonly day: string;
  readonly usd: number;
  readonly workloads: number;
}

export function dayKey(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export function dailyCosts(history: readonly Workload[], nowMs: number, days = 14): DayCost[] {
  const out: { day: string; usd: number; workloads: number }[] = [];
  const index = new Map<string, number>();
  const today = new Date(nowMs);
  for (let i = days - 1; i >= 0; i--) {
    // Noon avoids a daylight-saving shift moving a day by one.
    const day = dayKey(new Date(today.getFullYear(), today.getMonth(), today.getDate() - i, 12).getTime());
    index.set(day, out.length);
    out.push({ day, usd: 0, workloads: 0 });
  }
  for (const w of history) {
    const at = Date.parse(w.started_at);
    if (Number.isNaN(at)) continue;
    const i = index.get(dayKey(at));
    if (i === undefined) continue;
    const row = out[i];
    if (row === undefined) continue;
    row.usd += w.est_cost_usd;
    row.workloads += 1;
  }
  return out;
}
