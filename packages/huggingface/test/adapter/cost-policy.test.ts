// The sponsor's cost controls as pure functions: idle pause (never with a stream open), the budget
// verdict and the resume gate read from the ledger's state, and the ComputeAuthorization a create needs.
import { describe, expect, it } from "vitest";
import type { Instant } from "@pair/provision";
import { decide, emptyLedgerState, type Budget, type LedgerInput, type LedgerState } from "@pair/ledger";
import {
  HF_ENDPOINT_CAPABILITIES,
  MAX_IDLE_PAUSE_MS,
  authorizeCreate,
  budgetVerdict,
  idlePauseDueAtMs,
  resumeAllowed,
  shouldIdlePause,
} from "../../src/index.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 14, 10, 0, 0);
const at = (wallMs: number): Instant => ({ wallMs, monoMs: wallMs - T0 });

describe("idle pause", () => {
  const IDLE = 10 * MIN;

  it("falls due idlePauseMs after the last workload ended, not a millisecond before", () => {
    expect(idlePauseDueAtMs(T0, 0, IDLE)).toBe(T0 + IDLE);
    expect(shouldIdlePause(T0, 0, IDLE, T0 + IDLE - 1)).toBe(false);
    expect(shouldIdlePause(T0, 0, IDLE, T0 + IDLE)).toBe(true);
    expect(shouldIdlePause(T0, 0, IDLE, T0 + 5 * IDLE)).toBe(true);
  });

  it("never pauses while a stream is open, however long it has been", () => {
    expect(idlePauseDueAtMs(T0, 1, IDLE)).toBeUndefined();
    expect(shouldIdlePause(T0, 1, IDLE, T0 + 100 * IDLE)).toBe(false);
    expect(shouldIdlePause(T0, 3, IDLE, T0 + IDLE)).toBe(false);
  });

  it("refuses nonsense limits", () => {
    expect(() => shouldIdlePause(T0, -1, IDLE, T0)).toThrow(/openStreams/);
    expect(() => shouldIdlePause(T0, 0.5, IDLE, T0)).toThrow(/openStreams/);
    expect(() => shouldIdlePause(T0, 0, 0, T0)).toThrow(/idlePauseMs/);
    expect(() => shouldIdlePause(T0, 0, MAX_IDLE_PAUSE_MS + 1, T0)).toThrow(/idlePauseMs/);
  });
});

/** A ledger with one L4 node ($0.80/h) under `budget`. */
function ledgerWith(budget: Budget): { state: LedgerState; apply(input: LedgerInput): void } {
  const ledger = {
    state: emptyLedgerState("ledger-1"),
    apply(input: LedgerInput) {
      const decided = decide(ledger.state, input);
      if (!decided.ok) throw new Error(JSON.stringify(decided.error));
      ledger.state = decided.value.state;
    },
  };
  ledger.apply({
    type: "OpenReservation",
    reservationId: "res-1",
    nodeId: "l4",
    pricing: { kind: "hourly", priceMicroUsdPerHour: 800_000 },
    budget,
    at: at(T0),
  });
  return ledger;
}

function running(ledger: ReturnType<typeof ledgerWith>, id: string, atMs: number): void {
  const auth = authorizeCreate(ledger.state, { reservationId: "res-1", deploymentId: id, at: at(atMs) });
  if (!auth.ok) throw new Error(JSON.stringify(auth.error));
  ledger.state = auth.value.decision.state;
  const key = { provider: "huggingface-endpoint", account: "alice", name: id, incarnation: "i-1" };
  ledger.apply({
    type: "HostingEventReported",
    event: { type: "ResourceObserved", id, key, status: "running", charging: true, atMs },
    at: at(atMs),
  });
}

describe("budget", () => {
  const DAILY_10_CENTS: Budget = { budgetMicroUsdPerDay: 100_000, timeZone: "UTC", stopLeadMs: 0 };

  it("authorizeCreate issues the ComputeAuthorization and binds the deployment with HF's minute", () => {
    const ledger = ledgerWith(DAILY_10_CENTS);
    const auth = authorizeCreate(ledger.state, { reservationId: "res-1", deploymentId: "d-1", at: at(T0) });
    expect(auth).toMatchObject({
      ok: true,
      value: { authorization: { ledgerId: "ledger-1", reservationId: "res-1" } },
    });
    if (!auth.ok) return;
    expect(auth.value.decision.state.bindings["d-1"]).toMatchObject({
      billingGranularityMs: HF_ENDPOINT_CAPABILITIES.billingGranularityMs,
    });
    expect(
      authorizeCreate(ledger.state, { reservationId: "nope", deploymentId: "d-2", at: at(T0) }),
    ).toMatchObject({
      ok: false,
      error: { code: "unknown-reservation" },
    });
  });

  it("within budget: no pause, and when to look again; at the 8th minute ($0.80/h, $0.10/day): pause", () => {
    const ledger = ledgerWith(DAILY_10_CENTS);
    running(ledger, "d-1", T0);
    expect(budgetVerdict(ledger.state, "l4", T0 + 3 * MIN)).toEqual({
      action: "none",
      checkAgainAtMs: T0 + 7 * MIN,
    });
    expect(resumeAllowed(ledger.state, "l4", T0 + 3 * MIN)).toEqual({ ok: true, value: true });
    ledger.apply({ type: "Tick", at: at(T0 + 7 * MIN) });
    expect(budgetVerdict(ledger.state, "l4", T0 + 7 * MIN)).toEqual({
      action: "pause",
      code: "budget_exceeded",
      window: "day",
      untilMs: Date.UTC(2026, 0, 15),
    });
  });

  it("resume is refused while the budget is exhausted, and allowed again after the window resets", () => {
    const ledger = ledgerWith(DAILY_10_CENTS);
    running(ledger, "d-1", T0);
    ledger.apply({ type: "Tick", at: at(T0 + 7 * MIN) });
    ledger.apply({
      type: "ConfirmStopped",
      deploymentId: "d-1",
      evidence: { kind: "stop-accepted", mode: "pause", observedAtMs: T0 + 7 * MIN },
      at: at(T0 + 7 * MIN),
    });
    const refused = resumeAllowed(ledger.state, "l4", T0 + 8 * MIN);
    expect(refused).toMatchObject({ ok: false, error: { code: "budget_exceeded", window: "day" } });
    if (!refused.ok) expect(refused.error.message).toMatch(/raise usd_per_day or wait/);
    expect(resumeAllowed(ledger.state, "l4", Date.UTC(2026, 0, 15, 0, 1))).toEqual({ ok: true, value: true });
  });

  it("resume is refused when not even one billed minute fits, before any mark exists", () => {
    // $0.01/day: a minute at $0.80/h is $0.013334.
    const ledger = ledgerWith({ budgetMicroUsdPerDay: 10_000, timeZone: "UTC", stopLeadMs: 0 });
    expect(resumeAllowed(ledger.state, "l4", T0)).toMatchObject({
      ok: false,
      error: { code: "budget_exceeded", window: "day", untilMs: Date.UTC(2026, 0, 15) },
    });
  });

  it("a node without a reservation is paused and never resumed", () => {
    const ledger = ledgerWith(DAILY_10_CENTS);
    expect(budgetVerdict(ledger.state, "other", T0)).toEqual({ action: "pause", code: "no_reservation" });
    expect(resumeAllowed(ledger.state, "other", T0)).toMatchObject({
      ok: false,
      error: { code: "no_reservation" },
    });
  });
});
