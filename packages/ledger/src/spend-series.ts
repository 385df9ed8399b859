/**
 * Spend over time for a chart: the ledger's entries summed into equal buckets (an hour over the last
 * day, a day over the last month). A billed-time entry covers whole granules; its amount is spread
 * over them, so an hour-long entry lands in the hours it billed, not all in its first one. A
 * token-usage entry lands at its dispatch time. Amounts stay integer micro-USD: a granule's share
 * is the amount divided evenly, the remainder on the first granules, so the buckets sum to the
 * entries exactly.
 * Must not know: where the entries are stored, how the series is drawn.
 */

import type { LedgerEntry } from "./entries.js";

export interface SeriesWindow {
  /** First bucket's start, epoch ms. */
  readonly fromMs: number;
  readonly bucketMs: number;
  readonly buckets: number;
}

export interface SpendPoint {
  readonly startMs: number;
  readonly microUsd: number;
}

export function spendSeries(entries: readonly LedgerEntry[], window: SeriesWindow): SpendPoint[] {
  const { fromMs, bucketMs, buckets } = window;
  if (!(bucketMs > 0) || !Number.isInteger(buckets) || buckets < 1)
    throw new RangeError(`spendSeries: bucketMs > 0 and buckets >= 1, got ${bucketMs} and ${buckets}`);
  const sums = new Array<number>(buckets).fill(0);
  const add = (atMs: number, microUsd: number) => {
    const i = Math.floor((atMs - fromMs) / bucketMs);
    if (i >= 0 && i < buckets) sums[i] = (sums[i] ?? 0) + microUsd;
  };
  for (const e of entries) {
    if (e.kind === "token-usage" || e.granules <= 1) {
      add(e.atMs, e.amountMicroUsd);
      continue;
    }
    const share = Math.floor(e.amountMicroUsd / e.granules);
    const extra = e.amountMicroUsd - share * e.granules;
    for (let g = 0; g < e.granules; g++) add(e.atMs + g * e.granularityMs, share + (g < extra ? 1 : 0));
  }
  return sums.map((microUsd, i) => ({ startMs: fromMs + i * bucketMs, microUsd }));
}
