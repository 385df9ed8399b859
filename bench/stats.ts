/**
 * Order statistics for the benchmark: nearest-rank percentiles of one run's samples, and the
 * median across runs. Pure functions over numbers.
 * Must not know: what the numbers measure.
 */

/** Nearest-rank percentile (p in (0, 100]) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile: p must be in (0, 100], got ${p}`);
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Median of unsorted values (mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function min(values: readonly number[]): number {
  return values.reduce((a, b) => Math.min(a, b), Infinity);
}

export function max(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), -Infinity);
}
