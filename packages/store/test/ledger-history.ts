// Ledger histories for the store contract suite: a scripted one that touches every kind of record,
// and random operations turned into ledger inputs (for the restart property).
import fc from "fast-check";
import { expect } from "vitest";
import type { HostingEvent, Instant } from "@pair/provision";
import {
  decide,
  emptyLedgerState,
  type LedgerDecision,
  type LedgerEntry,
  type LedgerInput,
  type LedgerState,
  type LedgerStore,
  type WorkloadCost,
} from "@pair/ledger";

export const T0 = Date.UTC(2026, 0, 14, 10);
export const MIN = 60_000;
export const at = (ms: number): Instant => ({ wallMs: ms, monoMs: ms - T0 });
export const CAPS = {
  provider: "huggingface-endpoint",
  idempotencyKeys: false,
  pauseResume: true,
  billingEndedStatuses: ["paused"],
  chargingStatuses: ["running"],
  idleStatuses: ["scaledToZero"],
  billingGranularityMs: MIN,
  maxListingLagMs: 30_000,
  stopSettleMs: 120_000,
  stopLatencyMs: 20_000,
  stopMode: "pause",
} as const;
const key = (id: string) => ({
  provider: CAPS.provider,
  account: "me",
  name: `pair-${id}`,
  incarnation: `i-${id}`,
});
const observed = (id: string, charging: boolean, ms: number): HostingEvent => ({
  type: "ResourceObserved",
  id,
  key: key(id),
  status: charging ? "running" : "scaledToZero",
  charging,
  atMs: ms,
});

/** Inputs touching every kind of record: reservations, bindings, episodes (open and closed), requests, entries. */
export function script(): LedgerInput[] {
  const budget = {
    budgetMicroUsdPerDay: 5_000_000,
    budgetMicroUsdPerMonth: 50_000_000,
    timeZone: "Europe/Berlin",
    stopLeadMs: 0,
  };
  const tokens = {
    kind: "per-token",
    microUsdPerMillionInputTokens: 200_000,
    microUsdPerMillionOutputTokens: 600_000,
  } as const;
  return [
    {
      type: "OpenReservation",
      reservationId: "res-l4",
      nodeId: "l4",
      pricing: { kind: "hourly", priceMicroUsdPerHour: 800_000 },
      budget,
      at: at(T0),
    },
    {
      type: "OpenReservation",
      reservationId: "res-router",
      nodeId: "router",
      pricing: tokens,
      budget,
      at: at(T0),
    },
    { type: "Authorize", reservationId: "res-l4", deploymentId: "d1", capabilities: CAPS, at: at(T0) },
    { type: "HostingEventReported", event: observed("d1", true, T0 + 1_000), at: at(T0 + 1_000) },
    {
      type: "ReserveRequest",
      requestId: "h1",
      route: { kind: "rented", nodeId: "l4" },
      attribution: { originNodeId: "mac", requesterId: "alice" },
      at: at(T0 + MIN),
    },
    {
      type: "ReserveRequest",
      requestId: "q1",
      route: { kind: "rented", nodeId: "router" },
      estimate: { inputTokens: 1_000, outputTokens: 2_000 },
      at: at(T0 + MIN),
    },
    {
      type: "ReserveRequest",
      requestId: "q2",
      route: { kind: "rented", nodeId: "router" },
      estimate: { inputTokens: 5_000, outputTokens: 9_000 },
      at: at(T0 + MIN),
    },
    { type: "Tick", at: at(T0 + 10 * MIN) },
    {
      type: "SettleRequest",
      requestId: "q1",
      usage: { inputTokens: 1_000, outputTokens: 1_500 },
      at: at(T0 + 11 * MIN),
    },
    { type: "ReleaseRequest", requestId: "h1", at: at(T0 + 12 * MIN) },
    {
      type: "HostingEventReported",
      event: {
        type: "OrphanRecorded",
        id: "o1",
        key: key("o1"),
        reason: "orphan",
        createdAtMs: T0 - 30 * MIN,
        status: "running",
        charging: true,
        atMs: T0 + 13 * MIN,
      },
      bind: { reservationId: "res-l4", capabilities: CAPS },
      at: at(T0 + 13 * MIN),
    },
    {
      type: "ConfirmStopped",
      deploymentId: "d1",
      evidence: { kind: "stop-accepted", mode: "pause", observedAtMs: T0 + 14 * MIN },
      at: at(T0 + 14 * MIN),
    },
    { type: "Tick", at: at(T0 + 20 * MIN) },
  ];
}

/** Decide the inputs one after another from `state`; every one must be accepted. */
export function run(
  inputs: readonly LedgerInput[],
  state: LedgerState = emptyLedgerState("ledger-1"),
): LedgerDecision[] {
  const out: LedgerDecision[] = [];
  for (const input of inputs) {
    const result = decide(state, input);
    if (!result.ok) throw new Error(`${input.type} refused: ${JSON.stringify(result.error)}`);
    out.push(result.value);
    state = result.value.state;
  }
  return out;
}

export function commitEach(store: LedgerStore, decisions: readonly LedgerDecision[], from: number): number {
  let version = from;
  for (const d of decisions) {
    if (d.state.version === version) continue;
    expect(store.commit(d, version)).toBe("committed");
    version = d.state.version;
  }
  return version;
}

const all = <T>(decisions: readonly LedgerDecision[], pick: (d: LedgerDecision) => readonly T[]): T[] =>
  decisions.flatMap(pick);
export const entriesOf = (ds: readonly LedgerDecision[]): LedgerEntry[] => all(ds, (d) => d.entries);
export const workloadsOf = (ds: readonly LedgerDecision[]): WorkloadCost[] => all(ds, (d) => d.workloads);

export type Op =
  | { readonly t: "advance"; readonly ms: number }
  | { readonly t: "start" | "idle" | "charging" | "stop"; readonly n: number }
  | { readonly t: "reserve"; readonly n: number; readonly tokens: number }
  | { readonly t: "settle" | "release"; readonly n: number }
  | { readonly t: "commit" | "restart" | "session" };

export const SETUP_OPS: readonly Op[] = [{ t: "advance", ms: 0 }];

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 3 * 3_600_000 }) }),
  fc.record({
    t: fc.constantFrom("start" as const, "idle" as const, "charging" as const, "stop" as const),
    n: fc.nat(3),
  }),
  fc.record({
    t: fc.constant("reserve" as const),
    n: fc.nat(5),
    tokens: fc.integer({ min: 0, max: 500_000 }),
  }),
  fc.record({ t: fc.constantFrom("settle" as const, "release" as const), n: fc.nat(5) }),
  fc.record({ t: fc.constantFrom("commit" as const, "restart" as const, "session" as const) }),
);

export function inputOf(op: Op, now: number, state: LedgerState): LedgerInput | undefined {
  const budget = { budgetMicroUsdPerDay: 2_000_000, timeZone: "America/New_York", stopLeadMs: 0 };
  if (Object.keys(state.reservations).length === 0)
    return {
      type: "OpenReservation",
      reservationId: "res-l4",
      nodeId: "l4",
      pricing: { kind: "hourly", priceMicroUsdPerHour: 1_200_000 },
      budget,
      at: at(now),
    };
  if (Object.keys(state.reservations).length === 1) {
    const pricing = {
      kind: "per-token",
      microUsdPerMillionInputTokens: 300_000,
      microUsdPerMillionOutputTokens: 900_000,
    } as const;
    return { type: "OpenReservation", reservationId: "res-tok", nodeId: "tok", pricing, budget, at: at(now) };
  }
  switch (op.t) {
    case "advance":
      return { type: "Tick", at: at(now) };
    case "session":
      return { type: "SessionStarted", at: at(now) };
    case "start":
      return state.bindings[`d${op.n}`] === undefined
        ? {
            type: "Authorize",
            reservationId: "res-l4",
            deploymentId: `d${op.n}`,
            capabilities: CAPS,
            at: at(now),
          }
        : { type: "HostingEventReported", event: observed(`d${op.n}`, true, now), at: at(now) };
    case "idle":
    case "charging":
      return {
        type: "HostingEventReported",
        event: observed(`d${op.n}`, op.t === "charging", now),
        at: at(now),
      };
    case "stop":
      return {
        type: "ConfirmStopped",
        deploymentId: `d${op.n}`,
        evidence: { kind: "external-confirmation", confirmedBy: "op", note: "", observedAtMs: now },
        at: at(now),
      };
    case "reserve":
      return {
        type: "ReserveRequest",
        requestId: `q${op.n}`,
        route: { kind: "rented", nodeId: op.n % 2 === 0 ? "tok" : "l4" },
        estimate: { inputTokens: op.tokens, outputTokens: op.tokens },
        at: at(now),
      };
    case "settle":
      return {
        type: "SettleRequest",
        requestId: `q${op.n}`,
        usage: { inputTokens: 10, outputTokens: 10 },
        at: at(now),
      };
    case "release":
      return { type: "ReleaseRequest", requestId: `q${op.n}`, at: at(now) };
    case "commit":
    case "restart":
      return undefined;
  }
}
