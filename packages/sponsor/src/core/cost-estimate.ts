/**
 * A workload's estimated cost on a rented node, in micro-dollars (rounded up): per token when the
 * node is priced per token (counts the response reported), else its hourly price for the time the
 * request held it. The sponsor uses the exact input/output prices it read; a peer only knows what the
 * sponsor published (the highest output price per million tokens, or the hourly price), so its
 * estimate is an upper bound.
 * Must not know: where prices come from, HTTP, the ledger (which accrues what the provider bills).
 */

export interface CostBasis {
  /** USD per million input / output tokens. */
  readonly perMillion?: { readonly input: number; readonly output: number };
  readonly usdPerHour?: number;
}

export function estimateCostMicroUsd(
  basis: CostBasis,
  use: { readonly tokensIn?: number; readonly tokensOut?: number; readonly durationMs: number },
): number {
  const { perMillion, usdPerHour } = basis;
  if (perMillion !== undefined && (use.tokensIn !== undefined || use.tokensOut !== undefined))
    // USD per million tokens = micro-dollars per token.
    return Math.ceil((use.tokensIn ?? 0) * perMillion.input + (use.tokensOut ?? 0) * perMillion.output);
  if (usdPerHour !== undefined && usdPerHour > 0)
    return Math.ceil((Math.max(0, use.durationMs) * usdPerHour * 1_000_000) / 3_600_000);
  return 0;
}

/**
 * The price a peer sees for a per-token node: the highest output price (USD per million tokens) among
 * the models it serves — an upper bound, since output tokens cost the most. Null when none is known.
 */
export function outputPricePerMillion(
  models: readonly string[],
  prices: ReadonlyMap<string, { readonly output: number }>,
): number | null {
  const known = models.flatMap((m) => {
    const p = prices.get(m);
    return p === undefined ? [] : [p.output];
  });
  return known.length === 0 ? null : Math.max(...known);
}
