// Caps: stops required before the billed unit that would cross a cap, ineligibility, window resets.
import { describe, expect, it } from "vitest";
import { nextWakeAtMs, routeEligibility, stopDeadline, type Budget } from "@pair/ledger";
import { DAY, HF_CAPS, HOUR, Ledger, MIN, PER_TOKEN, SEC, T0, at, usd } from "./fixtures.js";

const L4_ROUTE = { kind: "rented", nodeId: "l4" } as const;
const daily = (dollars: number, extra: Partial<Budget> = {}): Budget => ({
  budgetMicroUsdPerDay: usd(dollars),
  timeZone: "UTC",
  stopLeadMs: 0,
  ...extra,
});

describe("caps: usd_per_day and usd_per_month", () => {
  it("require the stop once, before the billed minute that would cross the cap", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.05) }).start("ep1", T0);
    expect(stopDeadline(ledger.state, "l4", T0)).toMatchObject({
      kind: "stop",
      granuleStartMs: T0 + 3 * MIN,
    });
    ledger.tick(T0 + 3 * MIN - 1);
    expect(ledger.commands).toEqual([]);
    expect(routeEligibility(ledger.state, L4_ROUTE, T0 + 3 * MIN - 1)).toEqual({ eligible: true });
    const d = ledger.tick(T0 + 3 * MIN);
    expect(d.commands).toEqual([{ type: "RequireStop", deploymentId: "ep1", reason: "budget-exceeded" }]);
    expect(d.events).toContainEqual(
      expect.objectContaining({ type: "RouteMarkedIneligible", nodeId: "l4", window: "day" }),
    );
    ledger.tick(T0 + 4 * MIN);
    ledger.tick(T0 + 5 * MIN);
    expect(ledger.stopsFor("ep1")).toBe(1); // the hosting contract retries the stop itself
  });

  it("issue the stop stopLeadMs ahead, so it lands before the minute starts", () => {
    const ledger = new Ledger()
      .open("l4", { budget: daily(0.05, { stopLeadMs: 20 * SEC }) })
      .start("ep1", T0);
    expect(stopDeadline(ledger.state, "l4", T0)).toMatchObject({
      granuleStartMs: T0 + 3 * MIN,
      issueStopAtMs: T0 + 2 * MIN + 40 * SEC,
    });
    ledger.tick(T0 + 2 * MIN + 40 * SEC);
    expect(ledger.stopsFor("ep1")).toBe(1);
  });

  it("keep the route ineligible until the window resets", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.05) }).start("ep1", T0);
    ledger.tick(T0 + 3 * MIN);
    ledger.confirmStopped("ep1", T0 + 3 * MIN);
    const midnight = Date.UTC(2026, 0, 15);
    expect(routeEligibility(ledger.state, L4_ROUTE, midnight - 1)).toMatchObject({
      eligible: false,
      reason: "budget-exceeded",
      untilMs: midnight,
    });
    expect(nextWakeAtMs(ledger.state, T0 + 3 * MIN)).toBe(midnight);
    // Even before an input arrives, a query after the reset says eligible.
    expect(routeEligibility(ledger.state, L4_ROUTE, midnight)).toEqual({ eligible: true });
    const d = ledger.tick(midnight);
    expect(d.events).toContainEqual({
      type: "RouteEligibleAgain",
      nodeId: "l4",
      because: "window-reset",
      atMs: midnight,
    });
    expect(ledger.state.reservations["res-l4"]?.ineligible).toBeUndefined();
    ledger.start("ep2", midnight + MIN);
    expect(ledger.state.episodes.ep2?.state).toBe("open");
  });

  it("lift the mark when the cap is raised, and stop at once when it is lowered below spend", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.05) }).start("ep1", T0);
    ledger.tick(T0 + 3 * MIN);
    ledger.confirmStopped("ep1", T0 + 3 * MIN);
    const raised = ledger.must({
      type: "ChangeBudget",
      nodeId: "l4",
      budget: daily(1),
      at: at(T0 + 10 * MIN),
    });
    expect(raised.events).toContainEqual(
      expect.objectContaining({ type: "RouteEligibleAgain", because: "cap-raised" }),
    );
    ledger.start("ep2", T0 + 10 * MIN);
    ledger.tick(T0 + 12 * MIN + 1);
    const lowered = ledger.must({
      type: "ChangeBudget",
      nodeId: "l4",
      budget: daily(0.05),
      at: at(T0 + 12 * MIN + 1),
    });
    expect(lowered.commands).toEqual([
      { type: "RequireStop", deploymentId: "ep2", reason: "budget-exceeded" },
    ]);
  });

  it("a month cap outlasts the daily reset", () => {
    const budget: Budget = {
      budgetMicroUsdPerDay: usd(10),
      budgetMicroUsdPerMonth: usd(0.05),
      timeZone: "UTC",
      stopLeadMs: 0,
    };
    const ledger = new Ledger().open("l4", { budget }).start("ep1", T0);
    ledger.tick(T0 + 3 * MIN);
    expect(ledger.stopsFor("ep1")).toBe(1);
    expect(ledger.state.reservations["res-l4"]?.ineligible).toMatchObject({
      window: "month",
      untilMs: Date.UTC(2026, 1, 1),
    });
    ledger.confirmStopped("ep1", T0 + 3 * MIN);
    ledger.tick(T0 + DAY);
    expect(routeEligibility(ledger.state, L4_ROUTE, T0 + DAY)).toMatchObject({
      eligible: false,
      window: "month",
    });
    ledger.tick(Date.UTC(2026, 1, 1));
    expect(routeEligibility(ledger.state, L4_ROUTE, Date.UTC(2026, 1, 1))).toEqual({ eligible: true });
  });

  it("count the day in the sponsor's time zone", () => {
    // 04:00 UTC is 23:00 the day before in New York: the New York day still has 1 h to run.
    const start = Date.UTC(2026, 0, 14, 4);
    const ledger = new Ledger()
      .open("l4", { budget: daily(5, { timeZone: "America/New_York" }), atMs: start })
      .start("ep1", start);
    const deadline = stopDeadline(ledger.state, "l4", start);
    // $5 would last 6¼ h, but the window ends at 05:00 UTC first: no stop today, look again then.
    expect(deadline).toEqual({ kind: "none", wakeAtMs: Date.UTC(2026, 0, 14, 5) });
    ledger.tick(Date.UTC(2026, 0, 14, 5));
    expect(stopDeadline(ledger.state, "l4", Date.UTC(2026, 0, 14, 5))).toMatchObject({
      kind: "stop",
      // 375 minutes cost exactly $5.00 (a cap may be reached); the 376th would cross it.
      granuleStartMs: Date.UTC(2026, 0, 14, 5) + 375 * MIN,
    });
  });

  it("wake at a window's end before a stop projected in a longer window", () => {
    // $0.10/day, $10/month at $0.80/hr, started 2 minutes before midnight. The month cap is hours away,
    // but the new day's budget runs out 7 minutes after midnight: the ledger must look at midnight.
    const budget: Budget = {
      budgetMicroUsdPerDay: usd(0.1),
      budgetMicroUsdPerMonth: usd(10),
      timeZone: "UTC",
      stopLeadMs: 0,
    };
    const start = Date.UTC(2026, 0, 14, 23, 58);
    const midnight = Date.UTC(2026, 0, 15);
    const ledger = new Ledger().open("l4", { budget, atMs: start }).start("ep1", start);
    expect(stopDeadline(ledger.state, "l4", start)).toMatchObject({
      kind: "stop",
      window: "month",
      wakeAtMs: midnight,
    });
    expect(nextWakeAtMs(ledger.state, start)).toBe(midnight);
    ledger.tick(midnight);
    expect(stopDeadline(ledger.state, "l4", midnight)).toMatchObject({
      kind: "stop",
      window: "day",
      issueStopAtMs: midnight + 7 * MIN,
    });
  });

  it("project the crossing from every episode billing to the node", () => {
    const ledger = new Ledger()
      .open("l4", { budget: daily(0.1) })
      .start("a", T0)
      .start("b", T0 + 30 * SEC);
    // Two L4s, grids 30 s apart: a0 b0 a1 b1 a2 b2 a3 fit (93 334 µUSD); b3, at 3½ min, would cross $0.10.
    expect(stopDeadline(ledger.state, "l4", T0 + 30 * SEC)).toMatchObject({
      kind: "stop",
      granuleStartMs: T0 + 3 * MIN + 30 * SEC,
    });
    ledger.tick(T0 + 3 * MIN + 30 * SEC - 1);
    expect(ledger.commands).toEqual([]);
    ledger.tick(T0 + 3 * MIN + 30 * SEC);
    expect([ledger.stopsFor("a"), ledger.stopsFor("b")]).toEqual([1, 1]);
  });

  it("stop idle episodes too once the cap is spent (any request would wake them)", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.04) }).start("ep1", T0);
    ledger.observe("ep1", false, T0 + 2 * MIN + 1); // 3 minutes billed: 40 000 = the cap
    expect(ledger.stopsFor("ep1")).toBe(1);
  });

  it("a cap spent by per-token usage marks the route", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: daily(0.001) });
    ledger.must({
      type: "ReserveRequest",
      requestId: "q1",
      route: { kind: "rented", nodeId: "router" },
      estimate: { inputTokens: 1_000, outputTokens: 1_000 },
      at: at(T0),
    });
    // Estimated 800 µUSD, reported 1 600 (above the estimate): the $0.001 cap is spent.
    const d = ledger.must({
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 2_000, outputTokens: 2_000 },
      at: at(T0 + SEC),
    });
    expect(d.events).toContainEqual(
      expect.objectContaining({ type: "RouteMarkedIneligible", nodeId: "router" }),
    );
  });

  it("a restart requires again the stops it required before", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.05) }).start("ep1", T0);
    ledger.tick(T0 + 3 * MIN);
    const d = ledger.must({ type: "SessionStarted", at: at(T0 + 3 * MIN + SEC) });
    expect(d.commands).toEqual([{ type: "RequireStop", deploymentId: "ep1", reason: "budget-exceeded" }]);
  });

  it("a restart that finds the cap spent stops at once", () => {
    const ledger = new Ledger().open("l4", { budget: daily(0.05) }).start("ep1", T0);
    // The sponsor was down past the deadline: the time is billed, and the stop is due now.
    const d = ledger.must({ type: "SessionStarted", at: at(T0 + 10 * MIN) });
    expect(d.commands).toEqual([{ type: "RequireStop", deploymentId: "ep1", reason: "budget-exceeded" }]);
    expect(ledger.entered()).toBe(133_334);
  });

  it("with no cap, nothing is ever stopped", () => {
    const ledger = new Ledger().open("l4", { budget: { timeZone: "UTC", stopLeadMs: 0 } }).start("ep1", T0);
    ledger.tick(T0 + 40 * DAY);
    expect(ledger.commands).toEqual([]);
    expect(stopDeadline(ledger.state, "l4", T0 + 40 * DAY)).toEqual({ kind: "none", wakeAtMs: undefined });
    expect(ledger.entered()).toBe(40 * 24 * 800_000);
  });

  it("an orphan found long after it started may stop the node at once", () => {
    const ledger = new Ledger().open("l4", { budget: daily(1) });
    const bind = { reservationId: "res-l4", capabilities: HF_CAPS };
    const event = {
      type: "OrphanRecorded",
      id: "o1",
      key: { provider: "huggingface-endpoint", account: "me", name: "x", incarnation: "1" },
      reason: "orphan",
      createdAtMs: T0 - 2 * HOUR,
      status: "running",
      charging: true,
      atMs: T0,
    } as const;
    const d = ledger.must({ type: "HostingEventReported", event, bind, at: at(T0) });
    expect(d.commands).toEqual([{ type: "RequireStop", deploymentId: "o1", reason: "budget-exceeded" }]);
  });
});
