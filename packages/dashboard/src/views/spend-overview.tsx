/**
 * The top of the Nodes page: spend now, today and this month (against caps only where they exist),
 * how much of today's traffic left the LAN, and each managed rented node's billed spend per hour over
 * the last 24 h and per day over the last 30 days. Text first; the bars only add to it.
 * Must not know: how the numbers were gathered (spend-summary.ts).
 */

import { SpendChart, SpendSeriesChart } from "../charts.js";
import type { PeriodSpend, SpendSummary } from "../spend-summary.js";
import type { SpendSeries } from "../wire.js";

export function SpendOverview({
  summary,
  spend,
}: {
  readonly summary: SpendSummary;
  readonly spend: readonly SpendSeries[];
}) {
  const s = summary;
  const uncapped = [...new Set([...s.today.uncapped, ...s.month.uncapped])];
  return (
    <section class="overview" aria-labelledby="overview-title">
      <h2 id="overview-title" class="sr-only">
        Spend and traffic overview
      </h2>
      <dl class="overview-facts">
        <div data-overview="now">
          <dt>Spending now</dt>
          <dd>
            {s.billingNow.length === 0
              ? "$0/hr — no rented node is billing"
              : `$${s.usdPerHourNow.toFixed(2)}/hr (${s.billingNow.join(", ")})`}
          </dd>
        </div>
        <div data-overview="off-lan">
          <dt>Off-LAN requests today</dt>
          <dd>
            {s.offLanToday} of {s.requestsToday}
          </dd>
        </div>
      </dl>
      <SpendChart
        title="Rented GPUs' cost"
        rows={[row("Today", s.today, "per day"), row("This month", s.month, "per month")]}
        {...(uncapped.length === 0
          ? {}
          : {
              warning: `No cap known here for ${uncapped.join(", ")}: the sums above include uncapped spend.`,
            })}
      />
      {spend.length === 0 ? null : (
        <div class="series">
          {[...new Set(spend.map((series) => series.name))].map((name) => (
            <div key={name} class="series-node" data-series={name}>
              <h3 class="series-title">{name}</h3>
              {spend
                .filter((series) => series.name === name)
                .map((series) => (
                  <SpendSeriesChart key={series.range} points={series.points} range={series.range} />
                ))}
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

function row(label: string, p: PeriodSpend, capLabel: string) {
  return { label, usd: p.usd, capUsd: p.capUsd, capLabel };
}
