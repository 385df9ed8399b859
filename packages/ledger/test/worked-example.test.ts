// The seed's validation step 4, as arithmetic: a $0.10/day cap on a Hugging Face L4 at $0.80/hr.
// Continuous spend would reach $0.10 after 7½ minutes. Hugging Face bills per started minute, so the
// 8th minute (which starts at 7:00) would take spend to $0.1067: the ledger requires the pause before
// it starts, and the node is paid for 7 minutes, $0.093334, within the cap.
import { describe, expect, it } from "vitest";
import { formatMicroUsd, remainingBudget, routeEligibility, spendOf, stopDeadline } from "@pair/ledger";
import { HF_CAPS, L4, Ledger, MIN, SEC, T0, usd } from "./fixtures.js";

describe("worked example: $0.10/day on an L4 at $0.80/hr", () => {
  const budget = { budgetMicroUsdPerDay: usd(0.1), timeZone: "UTC", stopLeadMs: 0 };

  it("pauses after about 7½ minutes, before the minute that would cross the cap starts", () => {
    const ledger = new Ledger().open("l4", { pricing: L4, budget });
    ledger.start("ep1", T0);

    // The continuous projection the seed quotes: $0.10 / $0.80 per hour = 7.5 minutes.
    const continuousMs = (usd(0.1) / L4.priceMicroUsdPerHour) * 60 * MIN;
    expect(continuousMs).toBe(7.5 * MIN);

    // The ledger's answer: the 8th billed minute starts at 7:00; the stop is due then.
    const deadline = stopDeadline(ledger.state, "l4", T0);
    expect(deadline).toEqual({
      kind: "stop",
      window: "day",
      granuleStartMs: T0 + 7 * MIN,
      issueStopAtMs: T0 + 7 * MIN,
      wakeAtMs: T0 + 7 * MIN,
    });
    if (deadline?.kind !== "stop") throw new Error("no stop scheduled");
    // "About 7½ minutes": within one billed minute before the continuous crossing.
    expect(deadline.issueStopAtMs).toBeGreaterThan(T0 + continuousMs - HF_CAPS.billingGranularityMs);
    expect(deadline.issueStopAtMs).toBeLessThanOrEqual(T0 + continuousMs);

    // A timer fires just before: nothing to do yet.
    ledger.tick(T0 + 7 * MIN - SEC);
    expect(ledger.commands).toEqual([]);
    expect(spendOf(ledger.state, "l4", T0)?.todayMicroUsd).toBe(93_334);

    // At 7:00 the ledger requires the pause and marks the node ineligible, with the reason.
    ledger.tick(T0 + 7 * MIN);
    expect(ledger.commands).toEqual([
      { type: "RequireStop", deploymentId: "ep1", reason: "budget-exceeded" },
    ]);
    expect(routeEligibility(ledger.state, { kind: "rented", nodeId: "l4" }, T0 + 7 * MIN)).toEqual({
      eligible: false,
      reason: "budget-exceeded",
      window: "day",
      untilMs: Date.UTC(2026, 0, 15),
    });

    // Hugging Face reports the pause at once: 7 minutes billed, within the cap.
    ledger.confirmStopped("ep1", T0 + 7 * MIN);
    ledger.tick(T0 + 60 * MIN);
    expect(ledger.entered()).toBe(93_334);
    expect(formatMicroUsd(ledger.entered())).toBe("$0.093334");
    expect(remainingBudget(ledger.state, "l4", T0 + 60 * MIN)?.[0]).toMatchObject({
      capMicroUsd: 100_000,
      spentMicroUsd: 93_334,
      remainingMicroUsd: 6_666,
    });
  });

  it("overshoots by at most the minute under way when the pause lands late", () => {
    const ledger = new Ledger().open("l4", { pricing: L4, budget });
    ledger.start("ep1", T0);
    ledger.tick(T0 + 7 * MIN);
    // The pause is confirmed 20 s into the 8th minute: that minute is billed (per started minute).
    ledger.confirmStopped("ep1", T0 + 7 * MIN + 20 * SEC);
    expect(ledger.entered()).toBe(106_667);
    expect(ledger.entered() - usd(0.1)).toBeLessThanOrEqual(Math.ceil(L4.priceMicroUsdPerHour / 60));
  });
});
