// Shared test values and a small driver that applies ledger inputs and collects what they produced.
import type { Evidence, HostingEvent, Instant, ProviderCapabilities, ResourceKey } from "@pair/provision";
import {
  decide,
  type Budget,
  type LedgerCommand,
  type LedgerDecision,
  type LedgerEntry,
  type LedgerEvent,
  type LedgerInput,
  type LedgerRefusal,
  type LedgerState,
  type NodePricing,
  type WorkloadCost,
  emptyLedgerState,
} from "@pair/ledger";

export const SEC = 1_000;
export const MIN = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** Wednesday 2026-01-14 10:00 UTC. */
export const T0 = Date.UTC(2026, 0, 14, 10, 0, 0);

export function at(wallMs: number): Instant {
  return { wallMs, monoMs: wallMs - T0 };
}

export const usd = (dollars: number): number => Math.round(dollars * 1_000_000);

/** Hugging Face Inference Endpoints: per started minute while initializing or running. */
export const HF_CAPS: ProviderCapabilities = {
  provider: "huggingface-endpoint",
  idempotencyKeys: false,
  pauseResume: true,
  billingEndedStatuses: ["paused"],
  chargingStatuses: ["pending", "initializing", "running", "updating"],
  idleStatuses: ["scaledToZero"],
  billingGranularityMs: MIN,
  maxListingLagMs: 30 * SEC,
  stopSettleMs: 2 * MIN,
  stopLatencyMs: 20 * SEC,
  stopMode: "pause",
};

/** Runpod pods: per second. */
export const RUNPOD_CAPS: ProviderCapabilities = {
  provider: "runpod",
  idempotencyKeys: false,
  pauseResume: false,
  billingEndedStatuses: ["TERMINATED"],
  chargingStatuses: ["RUNNING"],
  idleStatuses: [],
  billingGranularityMs: SEC,
  maxListingLagMs: 10 * SEC,
  stopSettleMs: MIN,
  stopLatencyMs: 20 * SEC,
  stopMode: "terminate",
};

/** An L4 on Hugging Face: $0.80/hr. */
export const L4 = { kind: "hourly", priceMicroUsdPerHour: 800_000 } as const satisfies NodePricing;
/** Inference Providers style: $0.20 per million input tokens, $0.60 per million output tokens. */
export const PER_TOKEN = {
  kind: "per-token",
  microUsdPerMillionInputTokens: 200_000,
  microUsdPerMillionOutputTokens: 600_000,
} as const satisfies NodePricing;

export const UTC_BUDGET: Budget = { timeZone: "UTC", stopLeadMs: 0 };

export function keyOf(id: string): ResourceKey {
  return { provider: "huggingface-endpoint", account: "me", name: `pair-${id}`, incarnation: `inc-${id}` };
}

export function observedEvent(id: string, charging: boolean, atMs: number): HostingEvent {
  return {
    type: "ResourceObserved",
    id,
    key: keyOf(id),
    status: charging ? "running" : "scaledToZero",
    charging,
    atMs,
  };
}

export function stopAccepted(atMs: number): Evidence {
  return { kind: "stop-accepted", mode: "pause", observedAtMs: atMs };
}

export function dischargedEvent(
  id: string,
  atMs: number,
  evidence: Evidence = stopAccepted(atMs),
): HostingEvent {
  return { type: "ObligationDischarged", id, key: keyOf(id), evidence, atMs };
}

export function orphanEvent(
  id: string,
  createdAtMs: number | undefined,
  atMs: number,
  charging = true,
): HostingEvent {
  const status = charging ? "running" : "scaledToZero";
  return {
    type: "OrphanRecorded",
    id,
    key: keyOf(id),
    reason: "orphan",
    createdAtMs,
    status,
    charging,
    atMs,
  };
}

/** Applies inputs to a ledger state and keeps everything the decisions produced. */
export class Ledger {
  state: LedgerState;
  readonly entries: LedgerEntry[] = [];
  readonly workloads: WorkloadCost[] = [];
  readonly commands: LedgerCommand[] = [];
  readonly events: LedgerEvent[] = [];
  last: LedgerDecision | undefined;

  constructor(state: LedgerState = emptyLedgerState("ledger-1")) {
    this.state = state;
  }

  try(input: LedgerInput): { ok: true; value: LedgerDecision } | { ok: false; error: LedgerRefusal } {
    const result = decide(this.state, input);
    if (result.ok) {
      const d = result.value;
      this.state = d.state;
      this.entries.push(...d.entries);
      this.workloads.push(...d.workloads);
      this.commands.push(...d.commands);
      this.events.push(...d.events);
      this.last = d;
    }
    return result;
  }

  must(input: LedgerInput): LedgerDecision {
    const result = this.try(input);
    if (!result.ok) throw new Error(`refused ${input.type}: ${JSON.stringify(result.error)}`);
    return result.value;
  }

  refusal(input: LedgerInput): LedgerRefusal {
    const result = this.try(input);
    if (result.ok) throw new Error(`${input.type} was accepted, expected a refusal`);
    return result.error;
  }

  open(nodeId = "l4", options: { pricing?: NodePricing; budget?: Budget; atMs?: number } = {}): this {
    this.must({
      type: "OpenReservation",
      reservationId: `res-${nodeId}`,
      nodeId,
      pricing: options.pricing ?? L4,
      budget: options.budget ?? UTC_BUDGET,
      at: at(options.atMs ?? T0),
    });
    return this;
  }

  authorize(
    deploymentId: string,
    nodeId = "l4",
    atMs = T0,
    caps: ProviderCapabilities = HF_CAPS,
  ): LedgerDecision {
    return this.must({
      type: "Authorize",
      reservationId: `res-${nodeId}`,
      deploymentId,
      capabilities: caps,
      at: at(atMs),
    });
  }

  observe(id: string, charging: boolean, atMs: number): LedgerDecision {
    return this.must({
      type: "HostingEventReported",
      event: observedEvent(id, charging, atMs),
      at: at(atMs),
    });
  }

  /** Authorize and observe charging: a running deployment from `atMs`. */
  start(id: string, atMs = T0, nodeId = "l4", caps: ProviderCapabilities = HF_CAPS): this {
    this.authorize(id, nodeId, atMs, caps);
    this.observe(id, true, atMs);
    return this;
  }

  confirmStopped(id: string, atMs: number, evidence: Evidence = stopAccepted(atMs)): LedgerDecision {
    return this.must({ type: "ConfirmStopped", deploymentId: id, evidence, at: at(atMs) });
  }

  tick(atMs: number): LedgerDecision {
    return this.must({ type: "Tick", at: at(atMs) });
  }

  /** Σ entries made so far, for one node or all. */
  entered(nodeId?: string): number {
    return this.entries
      .filter((e) => nodeId === undefined || e.nodeId === nodeId)
      .reduce((s, e) => s + e.amountMicroUsd, 0);
  }

  stopsFor(id: string): number {
    return this.commands.filter((c) => c.deploymentId === id).length;
  }
}

/** Deep equality that names the invariant it checks (for use outside `expect`, inside simulations). */
export function assertEqual(actual: unknown, expected: unknown, invariant: string): void {
  const a = JSON.stringify(sortKeys(actual));
  const b = JSON.stringify(sortKeys(expected));
  if (a !== b) throw new Error(`${invariant}\n  actual:   ${a}\n  expected: ${b}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  return value;
}
