// What the node and the dashboard ask: spend, remaining budget, open episodes.
import { describe, expect, it } from "vitest";
import { openEpisodes, remainingBudget, spendByNode, spendOf, totalSpendMicroUsd } from "@pair/ledger";
import { DAY, HOUR, Ledger, MIN, PER_TOKEN, T0, at, usd } from "./fixtures.js";

describe("queries for the node and the dashboard", () => {
  it("spend this session, today and this month per rented node", () => {
    const budget = {
      budgetMicroUsdPerDay: usd(50),
      budgetMicroUsdPerMonth: usd(100),
      timeZone: "UTC",
      stopLeadMs: 0,
    };
    const ledger = new Ledger().open("l4", { budget }).start("ep1", T0);
    ledger.must({ type: "SessionStarted", at: at(T0) });
    ledger.tick(T0 + HOUR); // $0.80 on the 14th
    ledger.must({ type: "SessionStarted", at: at(T0 + DAY) }); // down 23 h, charging: billed
    ledger.tick(T0 + DAY + HOUR);
    const spend = spendOf(ledger.state, "l4", T0 + DAY + HOUR);
    expect(spend).toEqual({
      nodeId: "l4",
      reservationId: "res-l4",
      sessionMicroUsd: 800_000,
      todayMicroUsd: usd(0.8 * 11),
      thisMonthMicroUsd: usd(0.8 * 25),
      totalMicroUsd: usd(0.8 * 25),
      asOfMs: T0 + DAY + HOUR,
    });
    expect(spendOf(ledger.state, "l4", Date.UTC(2026, 1, 2))?.thisMonthMicroUsd).toBe(0);
    expect(spendOf(ledger.state, "nope", T0)).toBeUndefined();
  });

  it("remaining budget per window, with what requests in flight hold", () => {
    const budget = {
      budgetMicroUsdPerDay: usd(1),
      budgetMicroUsdPerMonth: usd(10),
      timeZone: "UTC",
      stopLeadMs: 0,
    };
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget });
    ledger.must({
      type: "ReserveRequest",
      requestId: "q",
      route: { kind: "rented", nodeId: "router" },
      estimate: { inputTokens: 0, outputTokens: 1_000_000 },
      at: at(T0),
    });
    expect(remainingBudget(ledger.state, "router", T0)).toEqual([
      expect.objectContaining({
        window: "day",
        key: "2026-01-14",
        capMicroUsd: usd(1),
        spentMicroUsd: 0,
        heldMicroUsd: 600_000,
        remainingMicroUsd: 400_000,
        overMicroUsd: 0,
      }),
      expect.objectContaining({
        window: "month",
        key: "2026-01",
        capMicroUsd: usd(10),
        heldMicroUsd: 600_000,
        remainingMicroUsd: usd(9.4),
      }),
    ]);
  });

  it("open episodes, per node", () => {
    const ledger = new Ledger()
      .open("a")
      .open("b")
      .start("a1", T0, "a")
      .start("b1", T0, "b")
      .start("b2", T0, "b");
    ledger.confirmStopped("b1", T0 + MIN);
    expect(openEpisodes(ledger.state).map((e) => e.deploymentId)).toEqual(["a1", "b2"]);
    expect(openEpisodes(ledger.state, "b").map((e) => e.deploymentId)).toEqual(["b2"]);
  });

  it("spend is the sum of entries, per node and in all", () => {
    const ledger = new Ledger()
      .open("a")
      .open("b")
      .start("a1", T0, "a")
      .start("b1", T0 + 7 * MIN, "b");
    ledger.tick(T0 + 3 * HOUR + 17);
    expect(totalSpendMicroUsd(ledger.state)).toBe(ledger.entered());
    for (const s of spendByNode(ledger.state, T0)) expect(s.totalMicroUsd).toBe(ledger.entered(s.nodeId));
  });
});
