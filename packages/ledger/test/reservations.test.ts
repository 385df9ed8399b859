// Reservations and the ComputeAuthorization issued against them.
import { EMPTY_STATE, decide as decideHosting } from "@pair/provision";
import { describe, expect, it } from "vitest";
import { issuedAuthorization } from "@pair/ledger";
import { HF_CAPS, L4, Ledger, MIN, PER_TOKEN, T0, UTC_BUDGET, at, usd } from "./fixtures.js";

describe("reservations", () => {
  it("open one budget envelope per rented node", () => {
    const ledger = new Ledger().open("l4");
    expect(ledger.state.reservations["res-l4"]).toMatchObject({
      nodeId: "l4",
      pricing: L4,
      budget: UTC_BUDGET,
      spentTotalMicroUsd: 0,
    });
    const again = {
      type: "OpenReservation",
      nodeId: "l4",
      pricing: L4,
      budget: UTC_BUDGET,
      at: at(T0),
    } as const;
    expect(ledger.refusal({ ...again, reservationId: "other" })).toEqual({
      code: "duplicate-reservation",
      reservationId: "res-l4",
      nodeId: "l4",
    });
    expect(ledger.refusal({ ...again, reservationId: "res-l4", nodeId: "x" }).code).toBe(
      "duplicate-reservation",
    );
  });

  it("check every limit where it enters, and name each problem", () => {
    const ledger = new Ledger();
    const refusal = ledger.refusal({
      type: "OpenReservation",
      reservationId: "r",
      nodeId: "n",
      pricing: { kind: "hourly", priceMicroUsdPerHour: 0.5 },
      budget: {
        budgetMicroUsdPerDay: -1,
        budgetMicroUsdPerMonth: 1.5,
        timeZone: "Mars/Olympus_Mons",
        stopLeadMs: -5,
      },
      at: at(T0),
    });
    expect(refusal.code).toBe("invalid-input");
    const detail = refusal.code === "invalid-input" ? refusal.detail : "";
    for (const field of [
      "priceMicroUsdPerHour",
      "budgetMicroUsdPerDay",
      "budgetMicroUsdPerMonth",
      "timeZone",
      "stopLeadMs",
    ])
      expect(detail).toContain(field);
  });

  it("refuse a time that is not integer epoch milliseconds", () => {
    const ledger = new Ledger().open();
    expect(ledger.refusal({ type: "Tick", at: { wallMs: 1.5, monoMs: 0 } }).code).toBe("invalid-input");
  });
});

describe("ComputeAuthorization", () => {
  it("is issued against a reservation as ledger id + reservation id, and the contract accepts it", () => {
    const ledger = new Ledger().open("l4");
    const decision = ledger.authorize("dep-1");
    const authorization = issuedAuthorization(decision.events);
    expect(authorization).toEqual({ ledgerId: "ledger-1", reservationId: "res-l4" });
    expect(ledger.state.bindings["dep-1"]).toMatchObject({
      reservationId: "res-l4",
      billingGranularityMs: MIN,
      boundBy: "authorization",
    });

    const declare = {
      type: "Declare",
      id: "dep-1",
      spec: { provider: HF_CAPS.provider, account: "me", name: "pair-l4", model: "m", hardware: "nvidia-l4" },
      ownerTag: "pair-test",
      capabilities: HF_CAPS,
      policy: { maxActiveResources: 2, maxLifetimeMs: 3_600_000 },
      at: at(T0),
    } as const;
    expect(decideHosting(EMPTY_STATE, { ...declare, authorization }).ok).toBe(true);
    expect(decideHosting(EMPTY_STATE, { ...declare, authorization: undefined })).toMatchObject({
      ok: false,
      error: { code: "authorization-required" },
    });
  });

  it("is refused for an unknown reservation, a per-token route, a bound deployment or a bad granularity", () => {
    const ledger = new Ledger().open("l4").open("router", { pricing: PER_TOKEN });
    const base = { type: "Authorize", deploymentId: "d", capabilities: HF_CAPS, at: at(T0) } as const;
    expect(ledger.refusal({ ...base, reservationId: "nope" })).toEqual({
      code: "unknown-reservation",
      reservationId: "nope",
    });
    expect(ledger.refusal({ ...base, reservationId: "res-router" }).code).toBe("invalid-input");
    ledger.authorize("d");
    expect(ledger.refusal({ ...base, reservationId: "res-l4" })).toEqual({
      code: "already-bound",
      deploymentId: "d",
    });
    expect(
      ledger.refusal({
        ...base,
        deploymentId: "e",
        reservationId: "res-l4",
        capabilities: { ...HF_CAPS, billingGranularityMs: 0 },
      }).code,
    ).toBe("invalid-input");
  });

  it("is refused when not even one billed granule fits in the budget", () => {
    // A minute on the L4 costs 13 334 µUSD; the cap is one cent.
    const ledger = new Ledger().open("l4", { budget: { ...UTC_BUDGET, budgetMicroUsdPerDay: usd(0.01) } });
    expect(
      ledger.refusal({
        type: "Authorize",
        reservationId: "res-l4",
        deploymentId: "d",
        capabilities: HF_CAPS,
        at: at(T0),
      }),
    ).toEqual({
      code: "budget-exceeded",
      nodeId: "l4",
      window: "day",
      capMicroUsd: 10_000,
      spentMicroUsd: 0,
      heldMicroUsd: 0,
      neededMicroUsd: 13_334,
      untilMs: Date.UTC(2026, 0, 15),
    });
  });

  it("is refused while the route is marked ineligible", () => {
    const ledger = new Ledger()
      .open("l4", { budget: { ...UTC_BUDGET, budgetMicroUsdPerDay: usd(0.05) } })
      .start("d1", T0);
    ledger.tick(T0 + 3 * MIN);
    ledger.confirmStopped("d1", T0 + 3 * MIN);
    expect(
      ledger.refusal({
        type: "Authorize",
        reservationId: "res-l4",
        deploymentId: "d2",
        capabilities: HF_CAPS,
        at: at(T0 + 4 * MIN),
      }),
    ).toMatchObject({
      code: "budget-exceeded",
      window: "day",
      neededMicroUsd: 13_334,
    });
  });
});
