// In-flight reservation on paid routes, local routes, and attribution of cost to workloads.
import { describe, expect, it } from "vitest";
import { emptyLedgerState, remainingBudget, type LedgerInput } from "@pair/ledger";
import { HOUR, L4, Ledger, MIN, PER_TOKEN, SEC, T0, at, usd } from "./fixtures.js";

const ROUTER = { kind: "rented", nodeId: "router" } as const;
const L4_ROUTE = { kind: "rented", nodeId: "l4" } as const;
const budget = (dollars: number) => ({ budgetMicroUsdPerDay: usd(dollars), timeZone: "UTC", stopLeadMs: 0 });

function reserve(requestId: string, inputTokens: number, outputTokens: number, atMs = T0): LedgerInput {
  return {
    type: "ReserveRequest",
    requestId,
    route: ROUTER,
    estimate: { inputTokens, outputTokens },
    at: at(atMs),
  };
}

describe("in-flight reservation on per-token routes", () => {
  it("reserves the estimate, then enters the reported usage on completion", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    const d = ledger.must(reserve("q1", 10_000, 4_000)); // 2 000 + 2 400 µUSD
    expect(d.events).toContainEqual(
      expect.objectContaining({ type: "RequestReserved", heldMicroUsd: 4_400 }),
    );
    expect(remainingBudget(ledger.state, "router", T0)?.[0]).toMatchObject({
      heldMicroUsd: 4_400,
      remainingMicroUsd: 995_600,
    });
    ledger.must({
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 10_000, outputTokens: 1_000 },
      at: at(T0 + SEC),
    });
    expect(ledger.entries).toEqual([
      expect.objectContaining({
        kind: "token-usage",
        requestId: "q1",
        amountMicroUsd: 2_600,
        estimateMicroUsd: 4_400,
        usageReported: true,
        atMs: T0,
      }),
    ]);
    expect(remainingBudget(ledger.state, "router", T0)?.[0]).toMatchObject({
      spentMicroUsd: 2_600,
      heldMicroUsd: 0,
    });
    expect(ledger.state.inFlight).toEqual({});
  });

  it("enters the estimate when the response reported no usage", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    ledger.must(reserve("q1", 10_000, 4_000));
    ledger.must({ type: "SettleRequest", requestId: "q1", usage: undefined, at: at(T0 + SEC) });
    expect(ledger.entries).toEqual([
      expect.objectContaining({ amountMicroUsd: 4_400, usageReported: false }),
    ]);
  });

  it("releases the hold on failure without entering anything", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    ledger.must(reserve("q1", 10_000, 4_000));
    ledger.must({ type: "ReleaseRequest", requestId: "q1", at: at(T0 + SEC) });
    expect(ledger.entries).toEqual([]);
    expect(remainingBudget(ledger.state, "router", T0)?.[0]).toMatchObject({
      heldMicroUsd: 0,
      remainingMicroUsd: 1_000_000,
    });
    expect(ledger.workloads).toEqual([
      expect.objectContaining({ requestId: "q1", outcome: "released", estimatedCostMicroUsd: 0 }),
    ]);
  });

  it("refuses a request whose estimate does not fit beside what is spent and held", () => {
    // Cap 10 000 µUSD. Each request holds 6 000: the first fits, a concurrent second does not.
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(0.01) });
    ledger.must(reserve("q1", 0, 10_000));
    expect(ledger.refusal(reserve("q2", 0, 10_000))).toEqual({
      code: "budget-exceeded",
      nodeId: "router",
      window: "day",
      capMicroUsd: 10_000,
      spentMicroUsd: 0,
      heldMicroUsd: 6_000,
      neededMicroUsd: 6_000,
      untilMs: Date.UTC(2026, 0, 15),
    });
    // Once the first settles below its estimate, room is back.
    ledger.must({
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 0, outputTokens: 5_000 },
      at: at(T0 + SEC),
    });
    ledger.must(reserve("q2", 0, 10_000, T0 + 2 * SEC));
  });

  it("needs an estimate before dispatch, and refuses unknown or repeated request ids", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    expect(ledger.refusal({ type: "ReserveRequest", requestId: "q", route: ROUTER, at: at(T0) }).code).toBe(
      "invalid-input",
    );
    ledger.must(reserve("q1", 1, 1));
    expect(ledger.refusal(reserve("q1", 1, 1))).toEqual({ code: "duplicate-request", requestId: "q1" });
    expect(
      ledger.refusal({ type: "SettleRequest", requestId: "nope", usage: undefined, at: at(T0) }),
    ).toEqual({ code: "unknown-request", requestId: "nope" });
    expect(ledger.refusal({ type: "ReleaseRequest", requestId: "nope", at: at(T0) }).code).toBe(
      "unknown-request",
    );
    expect(
      ledger.refusal({
        type: "ReserveRequest",
        requestId: "z",
        route: { kind: "rented", nodeId: "ghost" },
        at: at(T0),
      }),
    ).toEqual({
      code: "unknown-node",
      nodeId: "ghost",
    });
  });

  it("dates a usage entry when the request was dispatched, in the window its estimate was held in", () => {
    const late = Date.UTC(2026, 0, 14, 23, 59, 59);
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    ledger.must(reserve("q1", 0, 1_000, late));
    ledger.must({
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 0, outputTokens: 1_000 },
      at: at(late + 2 * SEC),
    });
    expect(ledger.state.reservations["res-router"]?.spentByDayMicroUsd).toEqual({ "2026-01-14": 600 });
  });

  it("a restart enters requests lost in flight at their estimate", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    ledger.must(reserve("q1", 10_000, 4_000));
    const d = ledger.must({ type: "SessionStarted", at: at(T0 + MIN) });
    expect(d.entries).toEqual([
      expect.objectContaining({ requestId: "q1", amountMicroUsd: 4_400, usageReported: false }),
    ]);
    expect(d.workloads).toEqual([expect.objectContaining({ requestId: "q1", outcome: "lost-in-restart" })]);
    expect(ledger.state.inFlight).toEqual({});
  });
});

describe("local routes", () => {
  it("cost nothing and are never blocked, even when every rented budget is spent", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(0) });
    expect(ledger.state.reservations["res-router"]?.ineligible).toBeDefined();
    const before = ledger.state;
    const d = ledger.must({
      type: "ReserveRequest",
      requestId: "local-1",
      route: { kind: "local" },
      at: at(T0),
    });
    expect(d.state).toBe(before);
    expect(d.entries).toEqual([]);
    expect(
      new Ledger(emptyLedgerState("x")).try({
        type: "ReserveRequest",
        requestId: "l",
        route: { kind: "local" },
        at: at(T0),
      }).ok,
    ).toBe(true);
  });
});

describe("hourly routes", () => {
  it("hold nothing (the episode bills the time) but refuse while the route is ineligible", () => {
    const ledger = new Ledger().open("l4", { pricing: L4, budget: budget(0.05) }).start("ep1", T0);
    const ok = ledger.must({ type: "ReserveRequest", requestId: "h1", route: L4_ROUTE, at: at(T0 + SEC) });
    expect(ok.events).toContainEqual(expect.objectContaining({ type: "RequestReserved", heldMicroUsd: 0 }));
    ledger.tick(T0 + 3 * MIN);
    expect(
      ledger.refusal({ type: "ReserveRequest", requestId: "h2", route: L4_ROUTE, at: at(T0 + 3 * MIN) }),
    ).toMatchObject({
      code: "budget-exceeded",
      window: "day",
    });
  });
});

describe("attribution", () => {
  it("gives each workload its share of the node's billed time while it ran, with origin and requester", () => {
    const ledger = new Ledger().open("l4", { pricing: L4, budget: budget(100) }).start("ep1", T0);
    const route = L4_ROUTE;
    // A alone for 30 min, then A and B together for 30 min, then B alone for 30 min. $0.80/hr.
    ledger.must({
      type: "ReserveRequest",
      requestId: "A",
      route,
      attribution: { originNodeId: "mac", requesterId: "alice", model: "m" },
      at: at(T0),
    });
    ledger.must({
      type: "ReserveRequest",
      requestId: "B",
      route,
      attribution: { originNodeId: "pc" },
      at: at(T0 + HOUR / 2),
    });
    ledger.must({ type: "SettleRequest", requestId: "A", usage: undefined, at: at(T0 + HOUR) });
    ledger.must({ type: "SettleRequest", requestId: "B", usage: undefined, at: at(T0 + (3 * HOUR) / 2) });
    expect(ledger.workloads).toEqual([
      expect.objectContaining({
        requestId: "A",
        estimatedCostMicroUsd: 600_000,
        attribution: { originNodeId: "mac", requesterId: "alice", model: "m" },
      }),
      expect.objectContaining({
        requestId: "B",
        estimatedCostMicroUsd: 600_000,
        attribution: { originNodeId: "pc" },
        nodeId: "l4",
      }),
    ]);
    // Attribution is not spend: the episode's billed time is.
    expect(ledger.entered()).toBe(1_200_000);
  });

  it("gives nothing for time the node was idle", () => {
    const ledger = new Ledger().open("l4", { pricing: L4, budget: budget(100) }).start("ep1", T0);
    ledger.observe("ep1", false, T0);
    ledger.must({ type: "ReserveRequest", requestId: "A", route: L4_ROUTE, at: at(T0) });
    ledger.must({ type: "SettleRequest", requestId: "A", usage: undefined, at: at(T0 + HOUR) });
    expect(ledger.workloads[0]?.estimatedCostMicroUsd).toBe(0);
  });

  it("a per-token workload costs its tokens", () => {
    const ledger = new Ledger().open("router", { pricing: PER_TOKEN, budget: budget(1) });
    ledger.must({ ...reserve("q1", 1_000, 1_000), attribution: { requesterId: "bob" } } as LedgerInput);
    ledger.must({
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 1_000, outputTokens: 500 },
      at: at(T0 + SEC),
    });
    expect(ledger.workloads).toEqual([
      expect.objectContaining({
        requestId: "q1",
        estimatedCostMicroUsd: 500,
        entrySeq: 0,
        attribution: { requesterId: "bob" },
        outcome: "settled",
      }),
    ]);
  });
});
