/**
 * The ledger against the Hugging Face emulator's meter, at minute granularity, as docs/ledger.md states
 * it: the ledger is never under the meter, and over it by at most the granules covering the gap between
 * the idle look before each billing stretch began and the look that saw it charging (the cautious
 * start). These tests look at a waking endpoint less than a minute apart (10 s passes, 20 ms polls while
 * virtual time moves 5 s per 20 ms), so that is at most one billed minute per stretch.
 * Must not know: how the test moved time or which stages it ran.
 */

import type { HuggingFaceEmulator } from "@pair/emulators";
import { granulesCostMicroUsd } from "@pair/ledger";
import { expect } from "vitest";

const MIN = 60_000;

/** The meter's started minutes per billing stretch of one endpoint (a stretch still open counts up to now). */
export function stretchMinutes(hf: HuggingFaceEmulator, namespace: string, name: string): number[] {
  const now = hf.nowMs();
  const minutes = hf.meter
    .stretches()
    .filter((s) => s.namespace === namespace && s.name === name)
    .map((s) => Math.ceil(((s.endMs ?? now) - s.startMs) / MIN));
  expect(minutes.reduce((a, b) => a + b, 0)).toBe(hf.meter.billedMinutes(namespace, name));
  return minutes;
}

/**
 * What the ledger may hold for these stretches: each stretch costed on its own (the ledger rounds up
 * once per run), with 0 or 1 extra minute each. The smallest is the meter itself.
 */
export function allowedLedgerMicroUsd(minutes: readonly number[], microUsdPerHour: number): number[] {
  const allowed = new Set<number>();
  for (let extra = 0; extra < 1 << minutes.length; extra += 1)
    allowed.add(
      minutes.reduce(
        (sum, m, i) => sum + granulesCostMicroUsd(m + ((extra >> i) & 1), MIN, microUsdPerHour),
        0,
      ),
    );
  return [...allowed].sort((a, b) => a - b);
}

/** The ledger's total (USD, as node detail shows it) is the meter or at most one minute per stretch above it. */
export function expectLedgerCoversMeter(
  ledgerUsd: number | undefined,
  minutes: readonly number[],
  microUsdPerHour: number,
): void {
  expect(minutes.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  const spent = Math.round((ledgerUsd ?? Number.NaN) * 1e6);
  const allowed = allowedLedgerMicroUsd(minutes, microUsdPerHour);
  const meter = allowed[0] ?? 0;
  expect(
    spent,
    `ledger ${spent} µUSD ≥ meter ${meter} µUSD (${minutes.join("+")} min)`,
  ).toBeGreaterThanOrEqual(meter);
  expect(allowed, `ledger ${spent} µUSD within one minute per stretch of the meter`).toContain(spent);
}
