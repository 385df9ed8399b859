// A simulated sponsor around the ledger: it applies random operations, wakes the ledger when
// `nextWakeAtMs` says, obeys every RequireStop with evidence a little later (less than one billing
// granule), commits every decision to a store with compare-and-set, and can restart from the store.
// Invariants are checked by name after every decision; the cap bound is checked at the end.
import type { ProviderCapabilities } from "@pair/provision";
import {
  MemoryLedgerStore,
  dayKey,
  decide,
  emptyLedgerState,
  granulesCostMicroUsd,
  lastGranuleStartMs,
  monthOfDayKey,
  nextWakeAtMs,
  totalSpendMicroUsd,
  type Budget,
  type LedgerDecision,
  type LedgerEntry,
  type LedgerInput,
  type LedgerState,
  type LedgerStore,
} from "@pair/ledger";
import {
  HF_CAPS,
  RUNPOD_CAPS,
  T0,
  assertEqual,
  at,
  observedEvent,
  orphanEvent,
  stopAccepted,
} from "./fixtures.js";

export type Op =
  | { readonly t: "start"; readonly node: number }
  | { readonly t: "observe"; readonly node: number; readonly charging: boolean }
  | { readonly t: "user-stop"; readonly node: number }
  | { readonly t: "orphan"; readonly node: number }
  | { readonly t: "price"; readonly node: number; readonly priceMicroUsdPerHour: number }
  | { readonly t: "request"; readonly inputTokens: number; readonly outputTokens: number }
  | { readonly t: "hourly-request"; readonly node: number }
  | { readonly t: "settle"; readonly pick: number; readonly usagePercent: number; readonly reported: boolean }
  | { readonly t: "release"; readonly pick: number }
  | { readonly t: "restart" };

export interface Step {
  readonly dtMs: number;
  readonly op: Op;
}

export interface Scenario {
  readonly timeZone: string;
  readonly hourly: readonly {
    readonly budget: Budget;
    readonly priceMicroUsdPerHour: number;
    readonly perSecond: boolean;
  }[];
  readonly tokenBudget: Budget;
  /** Evidence arrives this fraction of a billing granule after the stop was required (< 1). */
  readonly latencyFraction: number;
  readonly steps: readonly Step[];
}

interface Pending {
  readonly requestId: string;
  readonly hourly: boolean;
  readonly estimateMicroUsd: number;
  readonly outputTokens: number;
  readonly inputTokens: number;
}

export class Simulation {
  state: LedgerState = emptyLedgerState("sim");
  now = T0;
  readonly entries: LedgerEntry[] = [];
  /** µUSD entered above the estimate held, per `nodeId|windowKey`. */
  readonly excess = new Map<string, number>();
  /** µUSD entered for outages settled as charging (granules before the run's anchor), per `nodeId|windowKey`. */
  readonly outageBilled = new Map<string, number>();
  /**
   * µUSD entered at once when a run was backdated to the idle observation before the charging one
   * (granules started between them), per `nodeId|windowKey`: over-counted in the ledger's favour.
   */
  readonly backdatedBilled = new Map<string, number>();
  readonly maxPrice = new Map<string, number>();
  readonly closedAt = new Map<string, number>();
  readonly granularity = new Map<string, number>();
  readonly restarts: number[] = [];
  #store: LedgerStore = new MemoryLedgerStore();
  #current = new Map<string, string>();
  #stopDue = new Map<string, number>();
  #requests: Pending[] = [];
  #ids = 0;
  #sum = 0;
  readonly #byDay = new Map<string, Record<string, number>>();

  constructor(
    readonly scenario: Scenario,
    readonly reopen: (store: LedgerStore) => LedgerStore = (s) =>
      MemoryLedgerStore.fromSerialized((s as MemoryLedgerStore).serialize()),
  ) {
    scenario.hourly.forEach((h, i) => {
      const nodeId = `n${i}`;
      this.maxPrice.set(nodeId, h.priceMicroUsdPerHour);
      this.must({
        type: "OpenReservation",
        reservationId: `r${i}`,
        nodeId,
        pricing: { kind: "hourly", priceMicroUsdPerHour: h.priceMicroUsdPerHour },
        budget: h.budget,
        at: at(this.now),
      });
    });
    this.must({
      type: "OpenReservation",
      reservationId: "rt",
      nodeId: "tokens",
      pricing: {
        kind: "per-token",
        microUsdPerMillionInputTokens: 300_000,
        microUsdPerMillionOutputTokens: 1_200_000,
      },
      budget: scenario.tokenBudget,
      at: at(this.now),
    });
  }

  run(): void {
    for (const step of this.scenario.steps) {
      this.advanceTo(this.now + step.dtMs);
      this.apply(step.op);
    }
    this.advanceTo(this.now + 1); // deliver what is due now
  }

  caps(nodeId: string): ProviderCapabilities {
    const i = Number(nodeId.slice(1));
    return this.scenario.hourly[i]?.perSecond === true ? RUNPOD_CAPS : HF_CAPS;
  }

  budgetOf(nodeId: string): Budget {
    const r = Object.values(this.state.reservations).find((x) => x.nodeId === nodeId);
    if (r === undefined) throw new Error(nodeId);
    return r.budget;
  }

  /** Wake the ledger at every instant it asked for, and deliver evidence when due, up to `target`. */
  advanceTo(target: number): void {
    for (let guard = 0; ; guard += 1) {
      if (guard > 10_000) throw new Error("the ledger keeps asking to be woken at the same time");
      const wake = nextWakeAtMs(this.state, this.now);
      const evidence = Math.min(...this.#stopDue.values());
      const next = Math.min(wake ?? Infinity, evidence);
      if (!(next <= target)) break;
      this.now = Math.max(this.now, next);
      for (const [dep, dueMs] of [...this.#stopDue].sort((a, b) => a[1] - b[1]))
        if (dueMs <= this.now) {
          this.#stopDue.delete(dep);
          this.closeDeployment(dep, dueMs);
        }
      this.must({ type: "Tick", at: at(this.now) });
    }
    this.now = target;
  }

  apply(op: Op): void {
    switch (op.t) {
      case "start": {
        const nodeId = `n${op.node % this.scenario.hourly.length}`;
        if (this.#current.has(nodeId)) return;
        const dep = `d${(this.#ids += 1)}`;
        const r = this.try({
          type: "Authorize",
          reservationId: `r${nodeId.slice(1)}`,
          deploymentId: dep,
          capabilities: this.caps(nodeId),
          at: at(this.now),
        });
        if (!r.ok) {
          if (r.error.code !== "budget-exceeded") throw new Error(JSON.stringify(r.error));
          return;
        }
        this.granularity.set(dep, this.caps(nodeId).billingGranularityMs);
        this.#current.set(nodeId, dep);
        this.must({
          type: "HostingEventReported",
          event: observedEvent(dep, true, this.now),
          at: at(this.now),
        });
        return;
      }
      case "observe": {
        const dep = this.#current.get(`n${op.node % this.scenario.hourly.length}`);
        // A provider honours a stop: once one is required, it reports nothing new until evidence.
        if (dep === undefined || this.#stopDue.has(dep)) return;
        this.must({
          type: "HostingEventReported",
          event: observedEvent(dep, op.charging, this.now),
          at: at(this.now),
        });
        return;
      }
      case "user-stop": {
        const dep = this.#current.get(`n${op.node % this.scenario.hourly.length}`);
        if (dep === undefined || this.#stopDue.has(dep)) return;
        this.closeDeployment(dep, this.now);
        return;
      }
      case "orphan": {
        const i = op.node % this.scenario.hourly.length;
        const dep = `o${(this.#ids += 1)}`;
        this.granularity.set(dep, this.caps(`n${i}`).billingGranularityMs);
        const bind = { reservationId: `r${i}`, capabilities: this.caps(`n${i}`) };
        this.must({
          type: "HostingEventReported",
          event: orphanEvent(dep, undefined, this.now),
          bind,
          at: at(this.now),
        });
        return;
      }
      case "price": {
        const nodeId = `n${op.node % this.scenario.hourly.length}`;
        this.maxPrice.set(nodeId, Math.max(this.maxPrice.get(nodeId) ?? 0, op.priceMicroUsdPerHour));
        this.must({
          type: "ChangePrice",
          nodeId,
          pricing: { kind: "hourly", priceMicroUsdPerHour: op.priceMicroUsdPerHour },
          at: at(this.now),
        });
        return;
      }
      case "request":
      case "hourly-request": {
        const requestId = `q${(this.#ids += 1)}`;
        const hourly = op.t === "hourly-request";
        const nodeId = hourly ? `n${op.node % this.scenario.hourly.length}` : "tokens";
        const estimate = hourly ? undefined : { inputTokens: op.inputTokens, outputTokens: op.outputTokens };
        const r = this.try({
          type: "ReserveRequest",
          requestId,
          route: { kind: "rented", nodeId },
          ...(estimate ? { estimate } : {}),
          at: at(this.now),
        });
        if (!r.ok) {
          if (r.error.code !== "budget-exceeded") throw new Error(JSON.stringify(r.error));
          return;
        }
        const held = r.value.state.inFlight[requestId]?.heldMicroUsd ?? 0;
        this.#requests.push({
          requestId,
          hourly,
          estimateMicroUsd: held,
          inputTokens: estimate?.inputTokens ?? 0,
          outputTokens: estimate?.outputTokens ?? 0,
        });
        return;
      }
      case "settle":
      case "release": {
        if (this.#requests.length === 0) return;
        const [request] = this.#requests.splice(op.pick % this.#requests.length, 1);
        if (request === undefined) return;
        if (op.t === "release") {
          this.must({ type: "ReleaseRequest", requestId: request.requestId, at: at(this.now) });
          return;
        }
        const usage = op.reported
          ? {
              inputTokens: request.inputTokens,
              outputTokens: Math.round((request.outputTokens * op.usagePercent) / 100),
            }
          : undefined;
        const d = this.must({ type: "SettleRequest", requestId: request.requestId, usage, at: at(this.now) });
        for (const e of d.entries)
          if (e.kind === "token-usage" && e.amountMicroUsd > e.estimateMicroUsd) {
            const over = e.amountMicroUsd - e.estimateMicroUsd;
            const day = dayKey(this.budgetOf("tokens").timeZone, e.atMs);
            for (const key of [`tokens|${day}`, `tokens|${monthOfDayKey(day)}`])
              this.excess.set(key, (this.excess.get(key) ?? 0) + over);
          }
        return;
      }
      case "restart": {
        const before = this.state;
        this.#store = this.reopen(this.#store);
        const loaded = this.#store.load();
        if (loaded === undefined) throw new Error("restart lost the state");
        assertEqual(loaded, before, "a restart loses no reservation, episode or request");
        assertEqual(this.#store.entries(), this.entries, "a restart loses no entry");
        this.state = loaded;
        this.#requests = []; // they died with the process; the ledger enters their estimates
        this.restarts.push(this.now);
        this.must({ type: "SessionStarted", at: at(this.now) });
        return;
      }
      default: {
        const never: never = op;
        throw new Error(`unknown op ${JSON.stringify(never)}`);
      }
    }
  }

  closeDeployment(dep: string, atMs: number): void {
    this.must({ type: "ConfirmStopped", deploymentId: dep, evidence: stopAccepted(atMs), at: at(this.now) });
    for (const [node, current] of this.#current) if (current === dep) this.#current.delete(node);
  }

  try(input: LedgerInput): ReturnType<typeof decide> {
    const result = decide(this.state, input);
    if (result.ok) this.#accept(result.value);
    return result;
  }

  must(input: LedgerInput): LedgerDecision {
    const result = this.try(input);
    if (!result.ok) throw new Error(`${input.type} refused: ${JSON.stringify(result.error)}`);
    return result.value;
  }

  #accept(d: LedgerDecision): void {
    // Never accrue after evidence: no entry for an episode closed by an earlier decision.
    for (const e of d.entries)
      if (e.kind === "billed-time" && this.closedAt.has(e.deploymentId))
        throw new Error(`entry ${e.seq} accrued after evidence closed ${e.deploymentId}`);
    if (d.state.version !== this.state.version) {
      const committed = this.#store.commit(
        { state: d.state, entries: d.entries, workloads: d.workloads },
        this.state.version,
      );
      if (committed !== "committed") throw new Error("the only writer was refused");
    }
    this.state = d.state;
    this.entries.push(...d.entries);
    const backdated = new Map<string, number>();
    for (const e of d.events) if (e.type === "RunBackdated") backdated.set(e.deploymentId, e.observedAtMs);
    for (const e of d.entries) {
      this.#sum += e.amountMicroUsd;
      const tz = d.state.reservations[e.reservationId]?.budget.timeZone ?? "UTC";
      const byDay = this.#byDay.get(e.reservationId) ?? {};
      const k = dayKey(tz, e.atMs);
      byDay[k] = (byDay[k] ?? 0) + e.amountMicroUsd;
      this.#byDay.set(e.reservationId, byDay);
      if (e.kind === "billed-time" && e.firstGranule < 0)
        for (const key of [`${e.nodeId}|${k}`, `${e.nodeId}|${monthOfDayKey(k)}`])
          this.outageBilled.set(key, (this.outageBilled.get(key) ?? 0) + e.amountMicroUsd);
      const seenAtMs = e.kind === "billed-time" ? backdated.get(e.deploymentId) : undefined;
      if (e.kind === "billed-time" && e.firstGranule >= 0 && seenAtMs !== undefined && e.atMs < seenAtMs)
        for (const key of [`${e.nodeId}|${k}`, `${e.nodeId}|${monthOfDayKey(k)}`])
          this.backdatedBilled.set(key, (this.backdatedBilled.get(key) ?? 0) + e.amountMicroUsd);
    }
    for (const e of d.events) if (e.type === "EpisodeClosed") this.closedAt.set(e.deploymentId, e.atMs);
    for (const c of d.commands)
      if (!this.#stopDue.has(c.deploymentId) && !this.closedAt.has(c.deploymentId)) {
        const g = this.granularity.get(c.deploymentId) ?? 1;
        this.#stopDue.set(c.deploymentId, this.now + Math.floor(g * this.scenario.latencyFraction));
      }
    this.checkSpendIsSumOfEntries();
  }

  /** Spend = Σ entries: in all, and per reservation per local day. */
  checkSpendIsSumOfEntries(): void {
    if (totalSpendMicroUsd(this.state) !== this.#sum)
      throw new Error(`spend ${totalSpendMicroUsd(this.state)} != Σ entries ${this.#sum}`);
    for (const r of Object.values(this.state.reservations))
      assertEqual(
        r.spentByDayMicroUsd,
        this.#byDay.get(r.reservationId) ?? {},
        `spend per day of ${r.nodeId} = Σ its entries`,
      );
  }

  /** Never accrue after evidence: every billed granule of a closed episode started before its evidence. */
  checkNothingBilledAfterEvidence(): void {
    for (const e of this.entries) {
      if (e.kind !== "billed-time") continue;
      const closed = this.closedAt.get(e.deploymentId);
      if (closed !== undefined && lastGranuleStartMs(e) >= closed)
        throw new Error(
          `entry ${e.seq} bills a granule starting at ${lastGranuleStartMs(e)}, after evidence at ${closed}`,
        );
    }
  }

  /**
   * Per node and capped window: spend ≤ cap + one billed granule per episode that billed in the window
   * (at the highest price the node had) + what per-token usage entered above its held estimates + what
   * an outage billed when the first observation after a restart found the resource charging (time the
   * sponsor could not control) + what a run backdated to the idle observation before its charging one
   * entered at once (the ledger's cautious start: it over-counts, so it stops earlier, never later).
   */
  overshoots(): string[] {
    const problems: string[] = [];
    for (const r of Object.values(this.state.reservations)) {
      const tz = r.budget.timeZone;
      const groups = new Map<string, { spent: number; episodes: Set<string>; cap: number }>();
      for (const e of this.entries) {
        if (e.reservationId !== r.reservationId) continue;
        const day = dayKey(tz, e.atMs);
        const windows: [string, number | undefined][] = [
          [day, r.budget.budgetMicroUsdPerDay],
          [monthOfDayKey(day), r.budget.budgetMicroUsdPerMonth],
        ];
        for (const [key, cap] of windows) {
          if (cap === undefined) continue;
          const g = groups.get(key) ?? { spent: 0, episodes: new Set<string>(), cap };
          g.spent += e.amountMicroUsd;
          if (e.kind === "billed-time") g.episodes.add(e.deploymentId);
          groups.set(key, g);
        }
      }
      for (const [key, g] of groups) {
        let slack =
          (this.excess.get(`${r.nodeId}|${key}`) ?? 0) +
          (this.outageBilled.get(`${r.nodeId}|${key}`) ?? 0) +
          (this.backdatedBilled.get(`${r.nodeId}|${key}`) ?? 0);
        for (const dep of g.episodes)
          slack += granulesCostMicroUsd(1, this.granularity.get(dep) ?? 1, this.maxPrice.get(r.nodeId) ?? 0);
        if (g.spent > g.cap + slack)
          problems.push(`${r.nodeId} ${key}: spent ${g.spent} > cap ${g.cap} + slack ${slack}`);
      }
    }
    return problems;
  }
}
