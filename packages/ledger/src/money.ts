/**
 * Money and billed time as integers. Amounts are micro-dollars (1 USD = 1 000 000 µUSD); rates are
 * micro-dollars per hour or per million tokens. Products that could pass 2^53 go through BigInt, and
 * every rounding of a cost rounds up: a budget errs on the side of spending less.
 * Must not know: budgets, windows, providers, the ledger's state.
 */

export const MICRO_USD_PER_USD = 1_000_000;
export const MS_PER_HOUR = 3_600_000;
export const TOKENS_PER_MILLION = 1_000_000;

/** A non-negative safe integer: the only shape an amount of money or a count may take. */
export function isNonNegativeInteger(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** Exact ceil(product of `factors` / `divisor`) for non-negative safe integers. */
export function productDivCeil(factors: readonly number[], divisor: number): number {
  let product = 1n;
  for (const f of factors) product *= BigInt(f);
  const d = BigInt(divisor);
  return Number((product + d - 1n) / d);
}

/** Exact floor(product of `factors` / `divisor`) for non-negative safe integers. */
export function productDivFloor(factors: readonly number[], divisor: number): number {
  let product = 1n;
  for (const f of factors) product *= BigInt(f);
  return Number(product / BigInt(divisor));
}

/**
 * Granules started strictly before `atMs` on a grid anchored at `anchorMs`: a granule that starts at
 * `s` is billed once any time after `s` has passed, so stopping exactly at `s` does not pay for it.
 */
export function granulesStartedBefore(anchorMs: number, granularityMs: number, atMs: number): number {
  if (atMs <= anchorMs) return 0;
  const elapsed = atMs - anchorMs;
  const whole = (elapsed - (elapsed % granularityMs)) / granularityMs;
  return elapsed % granularityMs === 0 ? whole : whole + 1;
}

/** What `granules` whole granules cost at an hourly rate, rounded up once for all of them. */
export function granulesCostMicroUsd(
  granules: number,
  granularityMs: number,
  rateMicroUsdPerHour: number,
): number {
  return productDivCeil([granules, granularityMs, rateMicroUsdPerHour], MS_PER_HOUR);
}

export interface TokenCounts {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface TokenPrices {
  readonly microUsdPerMillionInputTokens: number;
  readonly microUsdPerMillionOutputTokens: number;
}

/** What a request's tokens cost, rounded up to the micro-dollar. */
export function tokenCostMicroUsd(tokens: TokenCounts, prices: TokenPrices): number {
  const millionths =
    BigInt(tokens.inputTokens) * BigInt(prices.microUsdPerMillionInputTokens) +
    BigInt(tokens.outputTokens) * BigInt(prices.microUsdPerMillionOutputTokens);
  const d = BigInt(TOKENS_PER_MILLION);
  return Number((millionths + d - 1n) / d);
}

/** For messages and docs: 93334 → "$0.093334". */
export function formatMicroUsd(microUsd: number): string {
  const sign = microUsd < 0 ? "-" : "";
  const abs = Math.abs(microUsd);
  const dollars = Math.floor(abs / MICRO_USD_PER_USD);
  const micros = String(abs % MICRO_USD_PER_USD).padStart(6, "0");
  return `${sign}$${dollars}.${micros}`;
}
