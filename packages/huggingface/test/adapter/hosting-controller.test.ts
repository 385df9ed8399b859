// The adapter driven by the hosting contract's HostingController over a MemoryHostingStore, with the
// spending ledger fed the controller's events: a create → run → pause cycle whose stop obligation
// closes only on evidence (an accepted pause, or HF reporting `paused`), never on a lost or failed
// pause; a lost create resolved by our request id; others' endpoints left alone; and a budget cap
// the ledger enforces through the controller, with HF's meter within one billed minute of the cap.
import { afterEach, describe, expect, it } from "vitest";
import {
  HostingController,
  type Clock,
  MemoryHostingStore,
  type ControllerOptions,
  type DeploymentId,
  type HostingEvent,
  type IdSource,
} from "@pair/provision";
import {
  decide as ledgerDecide,
  emptyLedgerState,
  granulesCostMicroUsd,
  spendOf,
  type Budget,
  type LedgerCommand,
  type LedgerInput,
  type LedgerState,
} from "@pair/ledger";
import { authorizeCreate } from "../../src/index.js";
import { spec as wireSpec } from "../transport-harness.js";
import {
  MIN,
  NS,
  OWNER,
  deploymentSpec,
  startAdapterHarness,
  type AdapterHarness,
} from "./adapter-harness.js";

const NODE = "hf-l4";
const L4 = { kind: "hourly", priceMicroUsdPerHour: 800_000 } as const;
const STEP_MS = 10_000;

/** Deployment ids chosen up front (the ledger binds its authorization to the id). */
class ChosenIds implements IdSource {
  #n = 0;
  next(kind: "deployment" | "request"): string {
    this.#n += 1;
    return `${kind}-${this.#n}`;
  }
  peek(kind: "deployment" | "request"): string {
    return `${kind}-${this.#n + 1}`;
  }
}

/** The sponsor's ledger, fed every hosting event; keeps the ledger's commands. */
class SponsorLedger {
  state: LedgerState = emptyLedgerState("ledger-test");
  readonly commands: LedgerCommand[] = [];

  constructor(readonly clock: Clock) {}

  apply(input: LedgerInput): void {
    const decided = ledgerDecide(this.state, input);
    if (!decided.ok) throw new Error(`ledger refused ${input.type}: ${JSON.stringify(decided.error)}`);
    this.state = decided.value.state;
    this.commands.push(...decided.value.commands);
  }

  onHostingEvent = (event: HostingEvent): void => {
    this.apply({ type: "HostingEventReported", event, at: this.clock.now() });
  };
}

interface Loop {
  readonly h: AdapterHarness;
  readonly c: HostingController;
  readonly ledger: SponsorLedger;
  readonly ids: ChosenIds;
  readonly events: HostingEvent[];
  /** Authorize with the ledger, declare, and start (create) one endpoint. */
  create(name: string): Promise<DeploymentId>;
  /** Advance virtual time in 10 s steps, reconciling after each (the daemon's periodic pass). */
  run(ms: number): Promise<void>;
}

const opened: AdapterHarness[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((h) => h.close()));
});

async function loop(
  budget: Budget = { timeZone: "UTC", stopLeadMs: 0 },
  overrides: Partial<ControllerOptions> = {},
): Promise<Loop> {
  const h = await startAdapterHarness();
  opened.push(h);
  const ledger = new SponsorLedger(h.clock);
  const at = h.clock.now();
  ledger.apply({ type: "OpenReservation", reservationId: "res-1", nodeId: NODE, pricing: L4, budget, at });
  const ids = new ChosenIds();
  const events: HostingEvent[] = [];
  const c = HostingController.open({
    controllerId: "sponsor-1",
    ownerTag: OWNER,
    account: NS,
    provider: h.provider,
    store: new MemoryHostingStore(),
    clock: h.clock,
    ids,
    policy: { maxActiveResources: 4, maxLifetimeMs: 24 * 3_600_000 },
    leaseTtlMs: 10 * MIN,
    busyRequeueMs: STEP_MS,
    idleRequeueMs: MIN,
    stopRetryMs: 30_000,
    onEvent: (event) => {
      events.push(event);
      ledger.onHostingEvent(event);
    },
    ...overrides,
  });
  return {
    h,
    c,
    ledger,
    ids,
    events,
    async create(name) {
      const deploymentId = ids.peek("deployment");
      const auth = authorizeCreate(ledger.state, { reservationId: "res-1", deploymentId, at: h.clock.now() });
      if (!auth.ok) throw new Error(`ledger refused: ${JSON.stringify(auth.error)}`);
      ledger.state = auth.value.decision.state;
      const id = c.declare(deploymentSpec(name), auth.value.authorization);
      if (!id.ok) throw new Error(`declare refused: ${JSON.stringify(id.error)}`);
      expect(id.value).toBe(deploymentId);
      const started = await c.start(id.value);
      if (!started.ok) throw new Error(`start refused: ${JSON.stringify(started.error)}`);
      return id.value;
    },
    async run(ms) {
      for (let t = 0; t < ms; t += STEP_MS) {
        h.emu.advance(STEP_MS);
        await c.reconcileOnce();
      }
    },
  };
}

describe("HostingController + MemoryHostingStore + the Hugging Face adapter", () => {
  it("create → running → pause: the obligation closes on the accepted pause; the ledger bills HF's minutes", async () => {
    const l = await loop();
    const id = await l.create("cycle");
    expect(l.c.state.deployments[id]).toMatchObject({ phase: "Requested" });
    expect(l.c.state.obligations[id]?.state).toBe("open");
    await l.run(4 * MIN + 20_000); // pending 30 s, initializing 2 min, running
    expect(l.c.state.deployments[id]).toMatchObject({ phase: "Active", observed: { status: "running" } });

    const stopped = await l.c.requireStop(id, "user-request");
    expect(stopped.ok).toBe(true);
    expect(l.h.emu.endpoints.get(NS, "cycle")?.state).toBe("paused");
    expect(l.c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted", mode: "pause" },
    });
    await l.run(10 * MIN);
    const meterMinutes = l.h.emu.meter.billedMinutes(NS, "cycle");
    expect(meterMinutes).toBe(4); // charging 0:30 → 4:20
    expect(spendOf(l.ledger.state, NODE, l.h.emu.nowMs())?.totalMicroUsd).toBe(
      granulesCostMicroUsd(meterMinutes, MIN, L4.priceMicroUsdPerHour),
    );
  });

  it("a pause whose answers are lost leaves the obligation open until a listing shows `paused`", async () => {
    const l = await loop();
    const id = await l.create("lostpause");
    await l.run(3 * MIN);
    l.h.emu.faults.loseAnswers(10, { path: "/pause" });
    await l.c.requireStop(id, "user-request");
    expect(l.c.state.deployments[id]?.phase).toBe("StopRequired");
    expect(l.c.state.obligations[id]?.state).toBe("open"); // no answer is not evidence
    l.h.emu.faults.clear();
    await l.run(STEP_MS);
    expect(l.c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "provider-reported-billing-ended", status: "paused" },
    });
  });

  it("a pause refused by HF (5xx) stays open and is retried by reconciliation until accepted", async () => {
    const l = await loop();
    const id = await l.create("flaky");
    await l.run(3 * MIN);
    l.h.emu.faults.failNext(8, 503, { path: "/pause" }); // two stop attempts of four tries each
    await l.c.requireStop(id, "user-request");
    expect(l.c.state.obligations[id]?.state).toBe("open");
    expect(l.h.emu.endpoints.get(NS, "flaky")?.state).toBe("running");
    await l.run(20_000); // before stopRetryMs: no new attempt
    expect(l.c.state.obligations[id]?.state).toBe("open");
    await l.run(20_000); // the second attempt also fails
    expect(l.c.state.obligations[id]?.state).toBe("open");
    await l.run(40_000); // backed off: 2 × stopRetryMs after the second attempt, not yet
    expect(l.c.state.obligations[id]?.state).toBe("open");
    await l.run(40_000); // the third is accepted
    expect(l.h.emu.endpoints.get(NS, "flaky")?.state).toBe("paused");
    expect(l.c.state.obligations[id]).toMatchObject({ state: "discharged" });
  });

  it("a lost create is Uncertain, never resent, and bound to its endpoint by our request id; others' are left alone", async () => {
    const l = await loop();
    await l.h.hf.createEndpoint(NS, wireSpec("someone-elses"));
    l.h.emu.faults.loseAnswers(1, { method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ });
    const id = await l.create("lost");
    expect(l.c.state.deployments[id]?.phase).toBe("Uncertain");
    expect((await l.c.retryCreate(id)).ok).toBe(false); // HF has no idempotency keys
    await l.run(3 * MIN); // past the listing lag and into running
    const endpoint = l.h.emu.endpoints.get(NS, "lost");
    expect(l.c.state.deployments[id]).toMatchObject({
      phase: "Active",
      key: { name: "lost", incarnation: endpoint?.createdAt },
    });
    const report = await l.c.reconcileOnce();
    expect(report.plan?.foreign).toBe(1);
    expect(report.plan?.orphans).toEqual([]);
    expect(l.h.emu.endpoints.list(NS)).toHaveLength(2);
    expect(l.h.emu.endpoints.get(NS, "someone-elses")?.state).toBe("running");
  });

  it("a $0.10/day cap: the ledger requires the pause, the controller pauses, HF's meter stays within a minute of the cap", async () => {
    const l = await loop({ budgetMicroUsdPerDay: 100_000, timeZone: "UTC", stopLeadMs: 0 });
    const id = await l.create("capped");
    const handled = new Set<number>();
    for (let t = 0; t < 20 * MIN; t += STEP_MS) {
      l.h.emu.advance(STEP_MS);
      l.ledger.apply({ type: "Tick", at: l.h.clock.now() });
      await l.c.reconcileOnce();
      for (const [i, command] of l.ledger.commands.entries())
        if (!handled.has(i)) {
          handled.add(i);
          expect(command).toEqual({ type: "RequireStop", deploymentId: id, reason: "budget-exceeded" });
          await l.c.requireStop(command.deploymentId, command.reason);
        }
    }
    expect(handled.size).toBe(1);
    expect(l.h.emu.endpoints.get(NS, "capped")?.state).toBe("paused");
    expect(l.c.state.obligations[id]?.state).toBe("discharged");
    // $0.80/h: 7 minutes are $0.093334; the 8th would cross $0.10, so it is not started.
    expect(l.h.emu.meter.billedMinutes(NS, "capped")).toBe(7);
    expect(l.h.emu.meter.totalMicroUsd(NS, "capped")).toBeLessThanOrEqual(100_000 + 13_334);
    expect(spendOf(l.ledger.state, NODE, l.h.emu.nowMs())?.totalMicroUsd).toBe(93_334);
  });
});
