// Resume as a contract command: what it opens, what settles it, what a crash in the middle leaves, and
// that a resumed resource is stopped exactly like a created one. Pure decide() first, then the
// controller over FakeProvider (paused and running resources planted as a user would leave them).
import { describe, expect, it } from "vitest";
import {
  HostingController,
  type HostingState,
  type Input,
  type ProviderCapabilities,
  type ProviderPort,
  type ResourceKey,
} from "@pair/provision";
import type { FakeProvider } from "@pair/testkit";
import { AUTH, CAPS, OWNER, POLICY, at } from "./fixtures.js";
import { controllerWorld, Driver, keyOf } from "./harness.js";

const PAUSABLE: ProviderCapabilities = {
  ...CAPS,
  pauseResume: true,
  billingEndedStatuses: ["TERMINATED", "PAUSED"],
};
const KEY = keyOf("r");

function declareResume(id = "r", key: ResourceKey = KEY, caps = PAUSABLE): Input {
  return {
    type: "DeclareResume",
    id,
    key,
    ownerTag: OWNER,
    capabilities: caps,
    authorization: AUTH,
    policy: POLICY,
    at: at(0),
  };
}

/** Declared, leased, resume sent: the driver's record `r` waits for the resume's answer. */
function resumeSent(d: Driver) {
  d.must(declareResume());
  const lease = d.lease("r");
  const begun = d.must({ type: "BeginResume", id: "r", lease, requestId: "req-r", at: at(1) });
  return { lease, begun };
}

describe("declaring a resume", () => {
  it("needs a ledger authorization, a provider with resume, and a key no live record holds", () => {
    const d = new Driver();
    expect(d.try({ ...declareResume(), authorization: undefined } as Input)).toEqual({
      ok: false,
      error: { code: "authorization-required", id: "r" },
    });
    expect(d.try(declareResume("r", KEY, CAPS))).toMatchObject({
      ok: false,
      error: { code: "invalid-input", detail: "fake declares no pause and resume" },
    });
    d.must(declareResume());
    expect(d.state.deployments.r).toMatchObject({ origin: "resume", phase: "Declared", key: KEY });
    expect(d.state.deployments.r?.spec).toBeUndefined();
    expect(d.obligation("r")).toBeUndefined(); // nothing sent: nothing can bill yet
    expect(d.try(declareResume("r2"))).toEqual({
      ok: false,
      error: { code: "already-recorded", key: KEY, by: "r" },
    });
  });

  it("can be cancelled before the resume is sent, not after", () => {
    const d = new Driver();
    d.must(declareResume());
    const lease = d.lease("r");
    expect(d.try({ type: "BeginCreate", id: "r", lease, requestId: "x", at: at(1) })).toMatchObject({
      ok: false,
      error: { code: "wrong-phase" },
    });
    expect(d.try({ type: "Cancel", id: "r", lease, at: at(1) }).ok).toBe(true);
    const e = new Driver();
    const sent = resumeSent(e);
    expect(e.try({ type: "Cancel", id: "r", lease: sent.lease, at: at(2) })).toMatchObject({
      ok: false,
      error: { code: "wrong-phase" },
    });
  });
});

describe("resuming", () => {
  it("opens the obligation on the key with the intent, before the resume command", () => {
    const d = new Driver();
    const { begun, lease } = resumeSent(d);
    expect(begun.state.obligations.r).toMatchObject({
      state: "open",
      openedBecause: "resume-intent",
      key: KEY,
    });
    expect(begun.state.deployments.r?.intent).toMatchObject({ requestId: "req-r", epoch: lease.epoch });
    expect(begun.commands).toEqual([{ type: "ResumeResource", id: "r", key: KEY }]);
    expect(begun.events.map((e) => e.type)).toEqual(["ResumeIntentRecorded", "ObligationOpened"]);
  });

  it("is settled by a report of the key running: accepted is Requested, ready is Active", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: { kind: "accepted" }, at: at(2) });
    expect(d.phase("r")).toBe("Requested");
    expect(d.state.deployments.r?.intent?.answer).toBe("resumed");
    const report = (status: string) => ({ key: KEY, status, ready: status === "RUNNING" });
    d.must({ type: "Observed", id: "r", lease, report: report("STARTING"), source: "describe", at: at(3) });
    expect(d.phase("r")).toBe("Requested");
    d.must({ type: "Observed", id: "r", lease, report: report("RUNNING"), source: "listing", at: at(4) });
    expect(d.phase("r")).toBe("Active");
    expect(d.obligation("r")?.state).toBe("open"); // running bills: only stop evidence closes it
  });

  it("does not take a paused report just after an accepted resume as evidence (it may be stale)", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: { kind: "accepted" }, at: at(2) });
    const paused = { key: KEY, status: "PAUSED" };
    d.must({ type: "Observed", id: "r", lease, report: paused, source: "describe", at: at(3) });
    expect(d.obligation("r")?.state).toBe("open");
    // Past the listing lag since the resume was sent, the same report is evidence.
    const late = at(1 + PAUSABLE.maxListingLagMs);
    d.must({ type: "Observed", id: "r", lease, report: paused, source: "listing", at: late });
    expect(d.obligation("r")).toMatchObject({
      state: "discharged",
      evidence: { kind: "provider-reported-billing-ended", status: "PAUSED" },
    });
    expect(d.phase("r")).toBe("Stopped");
  });

  it("a refused resume is Uncertain; its key's report settles it at once (paused: discharged)", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    const refused = { kind: "refused", code: "not_found", message: "no such endpoint" } as const;
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: refused, at: at(2) });
    expect(d.phase("r")).toBe("Uncertain");
    expect(d.events.at(-1)).toMatchObject({ type: "ResumeOutcomeUncertain", answer: "refused" });
    d.must({
      type: "Observed",
      id: "r",
      lease,
      report: { key: KEY, status: "PAUSED" },
      source: "listing",
      at: at(3),
    });
    expect(d.obligation("r")?.state).toBe("discharged");
  });

  it("a refused resume of a running resource still owns it: Active, stoppable", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    const refused = { kind: "refused", code: "not_paused", message: "already running" } as const;
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: refused, at: at(2) });
    const running = { key: KEY, status: "RUNNING", ready: true };
    d.must({ type: "Observed", id: "r", lease, report: running, source: "listing", at: at(3) });
    expect(d.phase("r")).toBe("Active");
    expect(d.obligation("r")?.state).toBe("open");
  });

  it("a report of another incarnation of the name never settles it", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: { kind: "accepted" }, at: at(2) });
    const other = { key: keyOf("r", "inc-other"), status: "PAUSED" };
    expect(
      d.try({ type: "Observed", id: "r", lease, report: other, source: "listing", at: at(9_000) }),
    ).toMatchObject({ ok: false, error: { code: "key-mismatch" } });
    expect(d.obligation("r")?.state).toBe("open");
  });

  it("is stopped exactly like a created resource: the stop command on its key, closed by stop evidence", () => {
    const d = new Driver();
    const { lease } = resumeSent(d);
    d.must({ type: "ResumeAnswered", id: "r", lease, outcome: { kind: "accepted" }, at: at(2) });
    const stop = d.must({ type: "RequireStop", id: "r", lease, reason: "idle", at: at(3) });
    expect(stop.commands).toEqual([{ type: "StopResource", id: "r", key: KEY, mode: "terminate" }]);
    expect(d.obligation("r")?.state).toBe("open");
    d.must({
      type: "StopAnswered",
      id: "r",
      lease,
      mode: "terminate",
      outcome: { kind: "accepted" },
      at: at(4),
    });
    expect(d.obligation("r")).toMatchObject({ state: "discharged", evidence: { kind: "stop-accepted" } });
  });

  it("answers only a resume in flight, and only once", () => {
    const d = new Driver();
    const lease = d.created("c");
    expect(
      d.try({ type: "ResumeAnswered", id: "c", lease, outcome: { kind: "accepted" }, at: at(3) }),
    ).toMatchObject({ ok: false, error: { code: "wrong-phase" } });
    const e = new Driver();
    const sent = resumeSent(e);
    e.must({ type: "ResumeAnswered", id: "r", lease: sent.lease, outcome: { kind: "accepted" }, at: at(2) });
    expect(
      e.try({ type: "ResumeAnswered", id: "r", lease: sent.lease, outcome: { kind: "accepted" }, at: at(3) }),
    ).toMatchObject({ ok: false, error: { code: "wrong-phase" } });
  });
});

/** A controller whose provider pauses on stop (as Hugging Face does); `wrap` spies on the fake. */
function setup(wrap?: (fake: FakeProvider) => ProviderPort) {
  return controllerWorld({}, { stopMode: "pause" }, wrap);
}

/** A paused resource declared for resume, the intent committed, and the process killed before the answer. */
function crashedMidResume(w: ReturnType<typeof setup>, reachedProvider: boolean) {
  const paused = w.fake.plant({ name: "mine", status: "PAUSED" });
  const id = declaredResume(w.c, paused.key);
  const claim = w.c.lease(id);
  if (!claim.ok) throw new Error("no lease");
  w.c.apply({ type: "BeginResume", id, lease: claim.value, requestId: "r-1", at: w.clock.now() });
  if (reachedProvider) void w.fake.resume(paused.key);
  w.clock.restartProcess();
  return { id, paused, again: HostingController.open({ ...w.options, store: w.store }) };
}

function declaredResume(c: HostingController, key: ResourceKey): string {
  const id = c.declareResume(key, AUTH);
  if (!id.ok) throw new Error(JSON.stringify(id.error));
  return id.value;
}

describe("HostingController.resume", () => {
  it("commits the intent and the obligation before it calls resume, then sees the resource start", async () => {
    let seen: HostingState | undefined;
    const { c, fake, store, events } = setup((f) => ({
      capabilities: f.capabilities,
      create: (r) => f.create(r),
      list: () => f.list(),
      describe: (k) => f.describe(k),
      stop: (k, m) => f.stop(k, m),
      resume: (k) => {
        seen = store.load();
        return f.resume(k);
      },
    }));
    const paused = fake.plant({ name: "mine", status: "PAUSED" });
    const id = declaredResume(c, paused.key);
    await c.resume(id);
    expect(seen?.obligations[id]).toMatchObject({ state: "open", key: paused.key });
    expect(seen?.deployments[id]?.intent?.answer).toBeUndefined();
    expect(paused.status).toBe("STARTING");
    expect(c.state.deployments[id]).toMatchObject({ phase: "Requested", observed: { status: "STARTING" } });
    expect(events.map((e) => e.type)).toContain("ResumeIntentRecorded");
  });

  it("a crash after the intent, before the answer: Uncertain with the obligation open; reconciliation owns it", async () => {
    const w = setup();
    const { id, paused, again } = crashedMidResume(w, true); // the provider got the resume
    const { clock } = w;
    expect(again.state.deployments[id]?.phase).toBe("Uncertain");
    expect(again.state.obligations[id]?.state).toBe("open");
    clock.advance(20_000);
    await again.reconcileOnce();
    expect(again.state.deployments[id]?.phase).toBe("Active"); // RUNNING: billed, and ours to stop
    expect(again.state.obligations[id]?.state).toBe("open");
    await again.requireStop(id, "idle");
    expect(paused.status).toBe("PAUSED");
    expect(again.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted" },
    });
  });

  it("a crash before the resume reached the provider: discharged by the paused report once past the lag", async () => {
    const w = setup();
    const { id, again } = crashedMidResume(w, false);
    const { clock, fake } = w;
    await again.reconcileOnce();
    expect(again.state.obligations[id]?.state).toBe("open"); // within the lag: may be a stale report
    clock.advance(fake.capabilities.maxListingLagMs);
    await again.reconcileOnce();
    expect(again.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "provider-reported-billing-ended", status: "PAUSED" },
    });
    expect(fake.billing()).toEqual([]);
  });

  it("a thrown resume is Uncertain, and a resource left running is still owned and stopped", async () => {
    const { c, clock, fake } = setup((f) => ({
      capabilities: f.capabilities,
      create: (r) => f.create(r),
      list: () => f.list(),
      describe: (k) => f.describe(k),
      stop: (k, m) => f.stop(k, m),
      resume: async (k) => {
        await f.resume(k);
        throw new Error("socket hang up");
      },
    }));
    const paused = fake.plant({ name: "mine", status: "PAUSED" });
    const id = declaredResume(c, paused.key);
    await c.resume(id);
    expect(c.state.deployments[id]?.phase).toBe("Uncertain");
    clock.advance(20_000);
    await c.reconcileOnce();
    expect(c.state.deployments[id]?.phase).toBe("Active");
    await c.requireStop(id, "sponsor-exit");
    expect(fake.billing()).toEqual([]);
    expect(c.state.obligations[id]?.state).toBe("discharged");
  });
});
