// A cap holds on the provider's bill, not only in the ledger's exact seconds: the budget stop goes out
// `stopLeadMsFor(latency, pass interval)` before the billed minute that would cross the cap starts, so
// that minute never starts. The worked example: $18/h, a $0.37 daily cap, $0.01 already spent. With
// no lead the stop went out at the first pass into the second minute and landed 67 s after the wake:
// billed $0.61. Passes are simulated every 10 s; a stop lands at the provider `latency` after it is sent.
import { describe, expect, it } from "vitest";
import { stopDeadline, stopLeadMsFor, type Budget } from "@pair/ledger";
import { HF_CAPS, Ledger, MIN, RUNPOD_CAPS, SEC, T0, usd } from "./fixtures.js";

const RATE = { kind: "hourly", priceMicroUsdPerHour: usd(18) } as const;
const CAP = usd(0.37);
const PASS_MS = 10 * SEC;
const MINUTE_USD = usd(0.3);

/** The ledger with $0.01 spent today (two per-second granules at $18/h), and an endpoint woken at `wakeMs`. */
function woken(stopLeadMs: number, wakeMs: number): Ledger {
  const budget: Budget = { budgetMicroUsdPerDay: CAP, timeZone: "UTC", stopLeadMs };
  const ledger = new Ledger().open("gpu", { pricing: RATE, budget });
  ledger.start("earlier", T0, "gpu", RUNPOD_CAPS);
  ledger.confirmStopped("earlier", T0 + 2 * SEC);
  expect(ledger.entered("gpu")).toBe(usd(0.01));
  ledger.start("wake", wakeMs, "gpu", HF_CAPS);
  return ledger;
}

/**
 * Passes every PASS_MS from `firstPassMs`; the pass whose tick requires the stop sends it, and it
 * lands `latencyMs` later. The provider bills every started minute from the wake until it lands.
 */
function providerBill(ledger: Ledger, wakeMs: number, firstPassMs: number, latencyMs: number): number {
  for (let pass = firstPassMs; pass < wakeMs + 10 * MIN; pass += PASS_MS) {
    ledger.tick(pass);
    if (ledger.stopsFor("wake") > 0) {
      const minutes = Math.ceil((pass + latencyMs - wakeMs) / MIN);
      return usd(0.01) + minutes * MINUTE_USD;
    }
  }
  throw new Error("no budget stop within ten minutes");
}

describe("a cap on the provider's bill (per started minute)", () => {
  const wakeMs = T0 + 5 * MIN;

  it("the issue's numbers: the stop goes out before the second minute, billed $0.31 <= $0.37", () => {
    const lead = stopLeadMsFor({ stopLatencyMs: HF_CAPS.stopLatencyMs, passIntervalMs: PASS_MS });
    expect(lead).toBe(30 * SEC);
    const ledger = woken(lead, wakeMs);
    // One minute ($0.30) fits in the $0.36 left; the second would make $0.61.
    expect(stopDeadline(ledger.state, "gpu", wakeMs)).toMatchObject({
      kind: "stop",
      granuleStartMs: wakeMs + MIN,
      issueStopAtMs: wakeMs + MIN - lead,
    });
    const bill = providerBill(ledger, wakeMs, wakeMs, 7 * SEC);
    expect(bill).toBe(usd(0.31));
    expect(bill).toBeLessThanOrEqual(CAP);
  });

  it("without the lead (the old stopLeadMs 0) the same stop lands at 67 s and the bill is $0.61", () => {
    const ledger = woken(0, wakeMs);
    expect(providerBill(ledger, wakeMs, wakeMs, 7 * SEC)).toBe(usd(0.61));
  });

  it("holds for any pass phase and any stop latency within the allowance", () => {
    const lead = stopLeadMsFor({ stopLatencyMs: HF_CAPS.stopLatencyMs, passIntervalMs: PASS_MS });
    for (let phase = 0; phase < PASS_MS; phase += 1_250)
      for (let latency = 0; latency <= HF_CAPS.stopLatencyMs; latency += 2_500) {
        const bill = providerBill(woken(lead, wakeMs), wakeMs, wakeMs + phase, latency);
        expect(bill, `phase ${phase} ms, latency ${latency} ms`).toBeLessThanOrEqual(CAP);
      }
  });

  it("the lead is the latency plus the pass interval, whole ms, at most an hour", () => {
    expect(stopLeadMsFor({ stopLatencyMs: 20_000, passIntervalMs: 0 })).toBe(20_000);
    expect(stopLeadMsFor({ stopLatencyMs: 0.4, passIntervalMs: 10_000 })).toBe(10_001);
    expect(stopLeadMsFor({ stopLatencyMs: -5, passIntervalMs: -5 })).toBe(0);
    expect(stopLeadMsFor({ stopLatencyMs: 3_600_000, passIntervalMs: 10_000 })).toBe(3_600_000);
  });
});
