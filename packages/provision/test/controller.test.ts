// The controller shell over FakeProvider: intent before side effect, lost answers, restarts,
// stops that fail, ceilings, and what it refuses.
import { describe, expect, it } from "vitest";
import {
  HostingController,
  ManualClock,
  MemoryHostingStore,
  type CreateRequest,
  type HostingStore,
  type ProviderPort,
} from "@pair/provision";
import { FakeProvider, FaultyProvider, NO_FAULTS } from "@pair/testkit";
import { AUTH, OWNER, SPEC } from "./fixtures.js";
import { controllerWorld as setup } from "./harness.js";

function declared(c: HostingController): string {
  const id = c.declare(SPEC, AUTH);
  if (!id.ok) throw new Error(JSON.stringify(id.error));
  return id.value;
}

describe("HostingController", () => {
  it("commits the intent and the obligation before it calls create", async () => {
    const clock = new ManualClock();
    const fake = new FakeProvider({ account: "acct", clock });
    const store = new MemoryHostingStore();
    let seenAtCreate: ReturnType<HostingStore["load"]> | undefined;
    const spy: ProviderPort = {
      capabilities: fake.capabilities,
      create: (request: CreateRequest) => {
        seenAtCreate = store.load();
        return fake.create(request);
      },
      list: () => fake.list(),
      describe: (k) => fake.describe(k),
      stop: (k, m) => fake.stop(k, m),
    };
    const { c } = setup({ provider: spy, store, clock });
    const id = declared(c);
    await c.start(id);
    expect(seenAtCreate?.obligations[id]?.state).toBe("open");
    expect(seenAtCreate?.deployments[id]?.intent?.requestId).toBe("request-1");
    expect(fake.creates[0]).toMatchObject({ requestId: "request-1", ownerTag: OWNER, epoch: 1 });
    expect(c.state.deployments[id]?.phase).toBe("Requested");
  });

  it("turns a thrown create into Uncertain, never retries it, and resolves it by reconciliation", async () => {
    const { clock, fake, options } = setup();
    const faulty = new FaultyProvider(fake, { seed: 1, rates: { ...NO_FAULTS, lostCreateAnswer: 1 }, clock });
    const c = HostingController.open({ ...options, provider: faulty, store: new MemoryHostingStore() });
    const id = declared(c);
    await c.start(id);
    expect(c.state.deployments[id]?.phase).toBe("Uncertain");
    expect((await c.retryCreate(id)).ok).toBe(false);
    expect(fake.creates).toHaveLength(1);
    clock.advance(fake.capabilities.maxListingLagMs + 10_000);
    await c.reconcileOnce();
    expect(c.state.deployments[id]).toMatchObject({ phase: "Active", key: fake.resources[0]!.key });
  });

  it("a complete listing without the lost create's resource discharges it; a partial one does not", async () => {
    const { clock, fake, options } = setup();
    const faulty = new FaultyProvider(fake, { seed: 1, rates: { ...NO_FAULTS, createRefused: 1 }, clock });
    const c = HostingController.open({ ...options, provider: faulty, store: new MemoryHostingStore() });
    const id = declared(c);
    await c.start(id);
    expect(c.state.deployments[id]?.phase).toBe("Uncertain");
    faulty.rates = { ...NO_FAULTS, partialListing: 1 };
    clock.advance(fake.capabilities.maxListingLagMs);
    await c.reconcileOnce();
    expect(c.state.obligations[id]?.state).toBe("open");
    faulty.rates = NO_FAULTS;
    await c.reconcileOnce();
    expect(c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "absent-from-complete-listing" },
    });
  });

  it("a 'complete' listing that omits a live resource is checked by its own key before it counts", async () => {
    const { clock, fake, options } = setup();
    let hide = true;
    const omitting: ProviderPort = {
      capabilities: fake.capabilities,
      create: (request) => fake.create(request),
      // Claims to be complete, yet drops every resource while `hide` is on (a provider's bad page).
      list: async () => {
        const listing = await fake.list();
        return hide ? { ...listing, resources: [] } : listing;
      },
      describe: (k) => fake.describe(k),
      stop: (k, m) => fake.stop(k, m),
    };
    const c = HostingController.open({ ...options, provider: omitting, store: new MemoryHostingStore() });
    const id = declared(c);
    await c.start(id);
    clock.advance(fake.capabilities.maxListingLagMs + 10_000);
    hide = false;
    await c.reconcileOnce(); // seen in a listing once
    hide = true;
    for (let i = 0; i < 3; i += 1) {
      clock.advance(10_000);
      await c.reconcileOnce();
    }
    expect(c.state.obligations[id]?.state).toBe("open");
    expect(c.state.deployments[id]?.phase).toBe("Active");
    // Gone for real (its own GET says not found): now the listing's absence is evidence.
    fake.resources.splice(0);
    await c.reconcileOnce();
    expect(c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "absent-from-complete-listing" },
    });
  });

  it("a restart during a create leaves it Uncertain with its obligation open", async () => {
    const { c, clock, options, store, fake } = setup();
    const id = declared(c);
    const claim = c.lease(id);
    if (!claim.ok) throw new Error("no lease");
    c.apply({ type: "BeginCreate", id, lease: claim.value, requestId: "r-1", at: clock.now() });
    // The process dies here, after the intent was committed; the provider got the create.
    await fake.create({ spec: SPEC, requestId: "r-1", ownerTag: OWNER, epoch: claim.value.epoch });
    clock.restartProcess();
    const again = HostingController.open({ ...options, store });
    expect(again.state.deployments[id]?.phase).toBe("Uncertain");
    expect(again.state.obligations[id]?.state).toBe("open");
    clock.advance(1_000);
    await again.reconcileOnce();
    expect(again.state.deployments[id]?.key).toEqual(fake.resources[0]!.key);
  });

  it("a failed stop keeps the obligation and is retried after stopRetryMs", async () => {
    const { clock, fake, options } = setup();
    const faulty = new FaultyProvider(fake, { seed: 1, rates: NO_FAULTS, clock });
    const c = HostingController.open({ ...options, provider: faulty, store: new MemoryHostingStore() });
    const id = declared(c);
    await c.start(id);
    faulty.rates = { ...NO_FAULTS, stopFailure: 1 };
    await c.requireStop(id, "user-request");
    expect(c.state.obligations[id]?.state).toBe("open");
    faulty.rates = NO_FAULTS;
    await c.reconcileOnce();
    expect(c.state.obligations[id]?.state).toBe("open"); // not due yet
    clock.advance(5_000);
    await c.reconcileOnce();
    expect(c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted" },
    });
    expect(fake.billing()).toHaveLength(0);
  });

  it("stops a resource past its lifetime with reason lifetime-exceeded", async () => {
    const { c, clock, fake, events } = setup({ policy: { maxActiveResources: 2, maxLifetimeMs: 60_000 } });
    const id = declared(c);
    await c.start(id);
    clock.advance(59_000);
    await c.reconcileOnce();
    expect(c.state.deployments[id]?.phase).not.toBe("Stopped");
    clock.advance(1_000);
    await c.reconcileOnce();
    expect(events).toContainEqual(
      expect.objectContaining({ type: "StopRequired", id, reason: "lifetime-exceeded" }),
    );
    expect(c.state.deployments[id]?.phase).toBe("Stopped");
    expect(fake.billing()).toHaveLength(0);
  });

  it("listing and reconciliation allocate nothing", async () => {
    const { c, fake } = setup();
    fake.plant({ name: "theirs", ownerTag: "someone-else" });
    for (let i = 0; i < 5; i += 1) await c.reconcileOnce();
    expect(fake.creates).toHaveLength(0);
    expect(fake.stops).toHaveLength(0);
  });

  it("refuses to be built with nonsense limits", () => {
    const { options } = setup();
    expect(() => HostingController.open({ ...options, leaseTtlMs: 0 })).toThrow(/leaseTtlMs/);
    expect(() =>
      HostingController.open({ ...options, policy: { maxActiveResources: 0, maxLifetimeMs: 1 } }),
    ).toThrow(/maxActiveResources/);
  });

  it("a second process on the same store is fenced by leases and compare-and-set", async () => {
    const { c, options, store, clock } = setup();
    const id = declared(c);
    await c.start(id);
    const other = HostingController.open({ ...options, controllerId: "c2", store });
    // The reopen dropped c1's lease (restart semantics); c2 takes it, and c1's next act is refused.
    expect(other.lease(id).ok).toBe(true);
    const stale = await c.requireStop(id, "idle");
    expect(stale).toMatchObject({ ok: false });
    expect(["stale-epoch", "lease-held"]).toContain(stale.ok ? "" : stale.error.code);
    clock.advance(1);
    expect(store.load().deployments[id]?.phase).toBe("Requested");
  });
});
