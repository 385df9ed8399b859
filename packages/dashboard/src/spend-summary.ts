/**
 * The Nodes page's overview numbers: what the cluster's rented nodes cost now ($/h of those that
 * bill), today and this month against the caps this node knows (its own rented nodes' budgets), and
 * how many requests left the LAN today. A period's cap is shown only when every node that spent in
 * it has one; otherwise the uncapped nodes are counted, so a sum never looks safer than it is.
 * Must not know: the DOM, where the rows come from.
 */

import { dayKey } from "./daily-cost.js";
import type { NodeRow, RentedRow, SponsoredNode, Workload } from "./wire.js";

/** States in which a rented node bills by the hour. */
const BILLING_STATES: ReadonlySet<string> = new Set(["running", "starting", "warming", "initializing"]);

export interface PeriodSpend {
  readonly usd: number;
  /** The sum of the caps, when every node that bills in the period has one; else null. */
  readonly capUsd: number | null;
  /** Rented nodes with spend or a price and no cap known here for this period. */
  readonly uncapped: readonly string[];
}

export interface SpendSummary {
  readonly usdPerHourNow: number;
  /** Rented nodes billing now. */
  readonly billingNow: readonly string[];
  readonly today: PeriodSpend;
  readonly month: PeriodSpend;
  readonly offLanToday: number;
  readonly requestsToday: number;
}

export function spendSummary(
  nodes: readonly NodeRow[],
  sponsored: readonly SponsoredNode[] | undefined,
  history: readonly Workload[] | undefined,
  nowMs: number,
): SpendSummary {
  const rented = nodes.filter((n): n is RentedRow => n.kind === "rented");
  const billing = rented.filter((n) => BILLING_STATES.has(n.state) && (n.usd_per_hour ?? 0) > 0);
  const caps = new Map((sponsored ?? []).map((s) => [s.name, s.budget] as const));
  const period = (pick: "day" | "month"): PeriodSpend => {
    let usd = 0;
    let cap = 0;
    const uncapped: string[] = [];
    for (const n of rented) {
      const spent = n.spend_usd?.[pick] ?? 0;
      const billed = spent > 0 || (n.usd_per_hour ?? 0) > 0;
      usd += spent;
      const c = pick === "day" ? caps.get(n.name)?.usd_per_day : caps.get(n.name)?.usd_per_month;
      if (c == null) {
        if (billed) uncapped.push(n.name);
      } else cap += c;
    }
    return { usd, capUsd: uncapped.length === 0 && cap > 0 ? cap : null, uncapped };
  };
  const today = dayKey(nowMs);
  const todays = (history ?? []).filter((w) => {
    const at = Date.parse(w.started_at);
    return !Number.isNaN(at) && dayKey(at) === today;
  });
  return {
    usdPerHourNow: billing.reduce((s, n) => s + (n.usd_per_hour ?? 0), 0),
    billingNow: billing.map((n) => n.name),
    today: period("day"),
    month: period("month"),
    offLanToday: todays.filter((w) => w.off_lan).length,
    requestsToday: todays.length,
  };
}
