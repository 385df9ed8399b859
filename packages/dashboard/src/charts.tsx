/**
 * Two small SVG charts, no library: a rented node's spend (this session, today, this month) each
 * against its cap, and the cost per day. Each has a text equivalent (the SVG is `role="img"` with a
 * label; the numbers are also written out), so colour and shape only add to what the text says.
 * Must not know: where the numbers come from.
 */

import type { ComponentChildren } from "preact";
import { formatCost, formatTime } from "./format.js";
import type { DayCost } from "./daily-cost.js";

export interface SpendRow {
  readonly label: string;
  readonly usd: number;
  /** The cap for this period, or null when none. */
  readonly capUsd: number | null;
  /** `per day`, `per month`. */
  readonly capLabel?: string;
}

const BAR_W = 300;
const BAR_H = 14;

/**
 * One row per period: the spend in words and, only where the period has a cap, a bar against it
 * (red past 80 %). Without a cap there is nothing to be "nearly full" of, so no bar is drawn.
 */
export function SpendChart({
  rows,
  title,
  warning,
}: {
  readonly rows: readonly SpendRow[];
  readonly title: string;
  /** Said under the title (a billed node without caps). */
  readonly warning?: string;
}) {
  const summary = rows.map(spendText).join("; ");
  return (
    <figure class="chart spend-chart">
      <figcaption>{title}</figcaption>
      {warning === undefined ? null : (
        <p class="spend-warning" role="note">
          {warning}
        </p>
      )}
      <ul class="spend-rows">
        {rows.map((r) => (
          <li key={r.label} data-spend={r.label} data-capped={r.capUsd === null ? "no" : "yes"}>
            <span class="spend-label">{spendText(r)}</span>
            {r.capUsd === null ? null : <CapBar usd={r.usd} capUsd={r.capUsd} />}
          </li>
        ))}
      </ul>
      <p class="sr-only">{summary}</p>
    </figure>
  );
}

function CapBar({ usd, capUsd }: { readonly usd: number; readonly capUsd: number }) {
  const scale = Math.max(usd, capUsd) * 1.1 || 1;
  const width = Math.max(usd > 0 ? 2 : 0, (usd / scale) * BAR_W);
  const capX = (capUsd / scale) * BAR_W;
  const near = usd >= 0.8 * capUsd;
  return (
    <svg
      viewBox={`0 0 ${BAR_W + 2} ${BAR_H + 4}`}
      width="100%"
      height={BAR_H + 4}
      preserveAspectRatio="none"
      aria-hidden="true"
      focusable="false"
    >
      <rect x="1" y="2" width={BAR_W} height={BAR_H} class="track" rx="3" />
      <rect x="1" y="2" width={width} height={BAR_H} class={near ? "bar near" : "bar"} rx="3" />
      <line x1={capX + 1} x2={capX + 1} y1="0" y2={BAR_H + 4} class="cap" />
    </svg>
  );
}

function spendText(r: SpendRow): string {
  if (r.capUsd === null) return `${r.label}: ${formatCost(r.usd)} (no cap)`;
  const pct = r.capUsd > 0 ? Math.round((r.usd / r.capUsd) * 100) : 100;
  return (
    `${r.label}: ${formatCost(r.usd)} of ${formatCost(r.capUsd)} ${r.capLabel ?? ""}`.trimEnd() + ` (${pct}%)`
  );
}

const COL_W = 40;
const CHART_H = 90;

export interface Bar {
  /** Unique within the chart; also `data-bar`. */
  readonly key: string;
  readonly usd: number;
  /** Under the bar where a tick falls. */
  readonly tick: string;
  /** The bar's tooltip. */
  readonly title: string;
}

/** Vertical bars, oldest left, a tick every `tickEvery` bars counted from the newest. */
function BarsChart(props: {
  readonly bars: readonly Bar[];
  readonly caption: ComponentChildren;
  readonly label: string;
  readonly tickEvery: number;
  readonly class: string;
  readonly colW?: number;
}) {
  const { bars } = props;
  const colW = props.colW ?? COL_W;
  const max = Math.max(...bars.map((b) => b.usd), 0);
  const width = bars.length * colW;
  return (
    <figure class={`chart ${props.class}`}>
      <figcaption>{props.caption}</figcaption>
      <svg
        viewBox={`0 0 ${width} ${CHART_H + 16}`}
        width={width}
        height={CHART_H + 16}
        role="img"
        aria-label={props.label}
      >
        <line x1="0" x2={width} y1={CHART_H} y2={CHART_H} class="axis" />
        {bars.map((b, i) => {
          const h = max === 0 ? 0 : Math.max(b.usd > 0 ? 2 : 0, (b.usd / max) * (CHART_H - 4));
          return (
            <g key={b.key}>
              <title>{b.title}</title>
              <rect
                x={i * colW + 3}
                y={CHART_H - h}
                width={colW - 6}
                height={h}
                class="bar"
                data-bar={b.key}
              />
              {(bars.length - 1 - i) % props.tickEvery === 0 ? (
                <text x={i * colW + colW / 2} y={CHART_H + 13} text-anchor="middle" class="tick">
                  {b.tick}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

/** Vertical bars, one per day, oldest left; the total and the busiest day are said in text. */
export function DailyCostChart({ days }: { readonly days: readonly DayCost[] }) {
  const max = Math.max(...days.map((d) => d.usd), 0);
  const total = days.reduce((s, d) => s + d.usd, 0);
  const first = days[0]?.day ?? "";
  const last = days[days.length - 1]?.day ?? "";
  return (
    <BarsChart
      class="daily-chart"
      caption={
        <>
          Estimated cost per day (last {days.length} days): <strong>{formatCost(total)}</strong>
        </>
      }
      label={`Estimated cost per day, ${first} to ${last}: ${formatCost(total)} in all${
        max > 0 ? `, most on one day ${formatCost(max)}` : ""
      }`}
      tickEvery={7}
      bars={days.map((d) => ({
        key: d.day,
        usd: d.usd,
        tick: d.day.slice(5),
        title: `${d.day}: ${formatCost(d.usd)}, ${d.workloads} workload(s)`,
      }))}
    />
  );
}

export interface SpendPoint {
  /** ISO start of the bucket. */
  readonly start: string;
  readonly usd: number;
}

/** A rented node's billed spend per hour (24 h) or per day (30 d), from its sponsor's ledger. */
export function SpendSeriesChart({
  points,
  range,
}: {
  readonly points: readonly SpendPoint[];
  readonly range: "24h" | "30d";
}) {
  const total = points.reduce((s, p) => s + p.usd, 0);
  const hourly = range === "24h";
  const what = hourly ? "per hour, last 24 h" : "per day, last 30 days (UTC)";
  return (
    <BarsChart
      class={`series-chart series-${range}`}
      caption={
        <>
          Billed {what}: <strong>{formatCost(total)}</strong>
        </>
      }
      label={`Billed ${what}: ${formatCost(total)} in all`}
      tickEvery={hourly ? 6 : 7}
      colW={hourly ? 14 : 12}
      bars={points.map((p) => {
        const at = hourly ? formatTime(p.start).slice(11, 16) : p.start.slice(5, 10);
        return { key: p.start, usd: p.usd, tick: at, title: `${at}: ${formatCost(p.usd)}` };
      })}
    />
  );
}
