import { describe, expect, it } from "vitest";
import { EVIDENCE_KINDS, restore, type Input } from "@pair/provision";
import { AUTH, CAPS, OWNER, POLICY, SPEC, at } from "./fixtures.js";
import { Driver, keyOf } from "./harness.js";

describe("declaring", () => {
  it("is refused without a ComputeAuthorization", () => {
    const d = new Driver();
    const base = {
      type: "Declare",
      id: "d1",
      spec: SPEC,
      ownerTag: OWNER,
      capabilities: CAPS,
      policy: POLICY,
      at: at(0),
    } as const;
    expect(d.try({ ...base, authorization: undefined })).toEqual({
      ok: false,
      error: { code: "authorization-required", id: "d1" },
    });
    expect(d.try({ ...base, authorization: { ledgerId: "", reservationId: "r" } }).ok).toBe(false);
    expect(d.try({ ...base, authorization: AUTH }).ok).toBe(true);
    expect(d.phase()).toBe("Declared");
    expect(d.obligation()).toBeUndefined();
  });

  it("is refused beyond maxActiveResources", () => {
    const d = new Driver();
    for (let i = 0; i < POLICY.maxActiveResources; i += 1) d.created(`d${i}`);
    const result = d.try({
      type: "Declare",
      id: "dx",
      spec: SPEC,
      ownerTag: OWNER,
      capabilities: CAPS,
      authorization: AUTH,
      policy: POLICY,
      at: at(3),
    });
    expect(result).toEqual({
      ok: false,
      error: { code: "max-active-exceeded", limit: POLICY.maxActiveResources },
    });
  });

  it("can be cancelled only before a create is sent", () => {
    const d = new Driver();
    d.declare("a");
    const la = d.lease("a");
    expect(d.try({ type: "Cancel", id: "a", lease: la, at: at(1) }).ok).toBe(true);
    expect(d.phase("a")).toBe("Cancelled");
    d.declare("b");
    const lb = d.lease("b");
    d.must({ type: "BeginCreate", id: "b", lease: lb, requestId: "r", at: at(1) });
    expect(d.try({ type: "Cancel", id: "b", lease: lb, at: at(2) })).toMatchObject({
      ok: false,
      error: { code: "wrong-phase" },
    });
  });
});

describe("creating", () => {
  it("opens the obligation with the intent, before the create command", () => {
    const d = new Driver();
    d.declare();
    const lease = d.lease();
    const decision = d.must({ type: "BeginCreate", id: "d1", lease, requestId: "req-1", at: at(1) });
    expect(decision.state.obligations.d1).toMatchObject({ state: "open", openedBecause: "create-intent" });
    expect(decision.state.deployments.d1?.intent).toMatchObject({ requestId: "req-1", epoch: lease.epoch });
    expect(decision.commands).toEqual([
      {
        type: "CreateResource",
        id: "d1",
        request: { spec: SPEC, requestId: "req-1", ownerTag: OWNER, epoch: lease.epoch },
      },
    ]);
  });

  it.each(["lost", "refused"] as const)(
    "a %s answer makes the deployment Uncertain, and a blind retry is refused",
    (kind) => {
      const d = new Driver();
      d.declare();
      const lease = d.lease();
      d.must({ type: "BeginCreate", id: "d1", lease, requestId: "req-1", at: at(1) });
      const outcome =
        kind === "lost" ? { kind, cause: "reset" } : { kind, code: "capacity", message: "none" };
      d.must({ type: "CreateAnswered", id: "d1", lease, outcome, at: at(2) });
      expect(d.phase()).toBe("Uncertain");
      expect(d.obligation()?.state).toBe("open");
      expect(d.try({ type: "RetryCreate", id: "d1", lease, at: at(3) })).toEqual({
        ok: false,
        error: { code: "blind-retry-refused", id: "d1" },
      });
    },
  );

  it("retries an Uncertain create only with the provider's idempotency key", () => {
    const d = new Driver();
    d.declare("d1", { ...CAPS, idempotencyKeys: true });
    const lease = d.lease();
    d.must({ type: "BeginCreate", id: "d1", lease, requestId: "req-1", at: at(1) });
    d.must({ type: "CreateAnswered", id: "d1", lease, outcome: { kind: "lost", cause: "reset" }, at: at(2) });
    const retry = d.must({ type: "RetryCreate", id: "d1", lease, at: at(3) });
    expect(retry.commands).toMatchObject([
      { type: "CreateResource", request: { requestId: "req-1", idempotencyKey: "req-1" } },
    ]);
    d.must({
      type: "CreateAnswered",
      id: "d1",
      lease,
      outcome: { kind: "created", report: { key: keyOf("d1"), status: "RUNNING", ready: true } },
      at: at(4),
    });
    expect(d.phase()).toBe("Active");
  });

  it("resolves an Uncertain create only by our owner tag and its request id", () => {
    const d = new Driver();
    d.declare();
    const lease = d.lease();
    d.must({ type: "BeginCreate", id: "d1", lease, requestId: "req-1", at: at(1) });
    d.must({ type: "CreateAnswered", id: "d1", lease, outcome: { kind: "lost", cause: "reset" }, at: at(2) });
    const observe = (report: object) =>
      d.try({
        type: "Observed",
        id: "d1",
        lease,
        report: { key: keyOf("d1"), status: "RUNNING", ...report },
        source: "listing",
        at: at(3),
      });
    expect(observe({ ownerTag: "someone-else", requestId: "req-1" })).toMatchObject({
      ok: false,
      error: { code: "key-mismatch" },
    });
    expect(observe({ ownerTag: OWNER, requestId: "req-2" })).toMatchObject({
      ok: false,
      error: { code: "key-mismatch" },
    });
    expect(observe({ ownerTag: OWNER, requestId: "req-1", ready: true }).ok).toBe(true);
    expect(d.phase()).toBe("Active");
    expect(d.state.deployments.d1?.key).toEqual(keyOf("d1"));
    expect(d.obligation()?.key).toEqual(keyOf("d1"));
  });
});

describe("observing", () => {
  it("never adopts another incarnation of the same name", () => {
    const d = new Driver();
    const lease = d.created();
    const result = d.try({
      type: "Observed",
      id: "d1",
      lease,
      report: { key: keyOf("d1", "other"), status: "TERMINATED" },
      source: "listing",
      at: at(5),
    });
    expect(result).toMatchObject({ ok: false, error: { code: "key-mismatch" } });
    expect(d.obligation()?.state).toBe("open");
  });

  it("a healthy observation never withdraws StopRequired", () => {
    const d = new Driver();
    const lease = d.created();
    d.must({ type: "RequireStop", id: "d1", lease, reason: "idle", at: at(3) });
    d.must({
      type: "Observed",
      id: "d1",
      lease,
      report: { key: keyOf("d1"), status: "RUNNING", ready: true },
      source: "listing",
      at: at(4),
    });
    expect(d.phase()).toBe("StopRequired");
    expect(d.state.deployments.d1?.stopReason).toBe("idle");
  });

  it("a report of a billing-ended state is evidence", () => {
    const d = new Driver();
    const lease = d.created();
    d.must({
      type: "Observed",
      id: "d1",
      lease,
      report: { key: keyOf("d1"), status: "TERMINATED" },
      source: "describe",
      at: at(9),
    });
    expect(d.phase()).toBe("Stopped");
    expect(d.obligation()).toMatchObject({
      state: "discharged",
      evidence: { kind: "provider-reported-billing-ended", status: "TERMINATED" },
    });
  });

  it("an idle or unknown state is not evidence", () => {
    const d = new Driver();
    const lease = d.created();
    for (const status of ["IDLE", "EXITED", "SOMETHING_NEW"]) {
      d.must({
        type: "Observed",
        id: "d1",
        lease,
        report: { key: keyOf("d1"), status },
        source: "listing",
        at: at(5),
      });
      expect(d.obligation()?.state).toBe("open");
    }
  });
});

describe("evidence", () => {
  it("a partial listing proves nothing", () => {
    const d = new Driver();
    const lease = d.created();
    const result = d.try({
      type: "AbsentFromListing",
      id: "d1",
      lease,
      listing: { complete: false, startedAtMs: at(49_999).wallMs },
      at: at(50_000),
    });
    expect(result).toMatchObject({ ok: false, error: { code: "not-evidence" } });
    expect(d.obligation()?.state).toBe("open");
  });

  it("absence counts only after the listing lag, unless the resource was seen listed", () => {
    const d = new Driver();
    const lease = d.created();
    const early = d.try({
      type: "AbsentFromListing",
      id: "d1",
      lease,
      listing: { complete: true, startedAtMs: at(1 + CAPS.maxListingLagMs - 1).wallMs },
      at: at(5_000),
    });
    expect(early).toMatchObject({ ok: false, error: { code: "not-evidence" } });
    d.must({
      type: "AbsentFromListing",
      id: "d1",
      lease,
      listing: { complete: true, startedAtMs: at(1 + CAPS.maxListingLagMs).wallMs },
      at: at(6_000),
    });
    expect(d.obligation()?.evidence?.kind).toBe("absent-from-complete-listing");

    const seen = new Driver();
    const l2 = seen.created();
    seen.must({
      type: "Observed",
      id: "d1",
      lease: l2,
      report: { key: keyOf("d1"), status: "RUNNING" },
      source: "listing",
      at: at(3),
    });
    seen.must({
      type: "AbsentFromListing",
      id: "d1",
      lease: l2,
      listing: { complete: true, startedAtMs: at(4).wallMs },
      at: at(4),
    });
    expect(seen.phase()).toBe("Stopped");
  });

  it("an accepted stop is evidence; a failed one leaves the obligation open", () => {
    const d = new Driver();
    const lease = d.created();
    const required = d.must({ type: "RequireStop", id: "d1", lease, reason: "user-request", at: at(3) });
    expect(required.commands).toEqual([
      { type: "StopResource", id: "d1", key: keyOf("d1"), mode: "terminate" },
    ]);
    d.must({
      type: "StopAnswered",
      id: "d1",
      lease,
      mode: "terminate",
      outcome: { kind: "unknown", cause: "timeout" },
      at: at(4),
    });
    expect(d.obligation()?.state).toBe("open");
    expect(d.state.deployments.d1?.stopAttempts).toBe(1);
    d.must({
      type: "StopAnswered",
      id: "d1",
      lease,
      mode: "terminate",
      outcome: { kind: "accepted" },
      at: at(5),
    });
    expect(d.obligation()).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted", mode: "terminate" },
    });
  });

  it("an external confirmation is evidence and names who confirmed", () => {
    const d = new Driver();
    const lease = d.created();
    expect(
      d.try({ type: "ConfirmExternally", id: "d1", lease, confirmedBy: " ", note: "", at: at(3) }).ok,
    ).toBe(false);
    d.must({
      type: "ConfirmExternally",
      id: "d1",
      lease,
      confirmedBy: "operator",
      note: "deleted in the console",
      at: at(3),
    });
    expect(d.obligation()?.evidence).toMatchObject({
      kind: "external-confirmation",
      confirmedBy: "operator",
    });
  });

  it("every discharge carries one of the four evidence kinds", () => {
    const d = new Driver();
    d.created();
    const kinds = new Set(
      d.events.filter((e) => e.type === "ObligationDischarged").map((e) => e.evidence.kind),
    );
    for (const k of kinds) expect(EVIDENCE_KINDS).toContain(k);
  });

  it("Disowned reports the obligation as transferred, not discharged", () => {
    const d = new Driver();
    const lease = d.created();
    expect(
      d.try({
        type: "Disown",
        id: "d1",
        lease,
        transferredTo: { controllerId: "c2", epoch: lease.epoch },
        at: at(3),
      }).ok,
    ).toBe(false);
    d.must({
      type: "Disown",
      id: "d1",
      lease,
      transferredTo: { controllerId: "c2", epoch: lease.epoch + 1 },
      at: at(3),
    });
    expect(d.phase()).toBe("Disowned");
    expect(d.obligation()).toMatchObject({ state: "transferred", transferredTo: { controllerId: "c2" } });
    expect(d.obligation()?.evidence).toBeUndefined();
  });
});

describe("leases", () => {
  it("every grant has a strictly larger epoch; a stale epoch cannot mutate anything", () => {
    const d = new Driver();
    d.declare();
    const first = d.lease("d1", 0, "c1");
    const second = d.lease("d1", 70_000, "c2"); // c1's lease expired at 60 000
    expect(second.epoch).toBeGreaterThan(first.epoch);
    const stale: Input = { type: "BeginCreate", id: "d1", lease: first, requestId: "r", at: at(70_001) };
    expect(d.try(stale)).toMatchObject({ ok: false, error: { code: "stale-epoch" } });
    expect(
      d.try({ type: "AcquireLease", id: "d1", controllerId: "c3", ttlMs: 1000, at: at(70_002) }),
    ).toMatchObject({
      ok: false,
      error: { code: "lease-held", holder: "c2" },
    });
  });

  it("an expired lease cannot mutate, and a renewal keeps the epoch", () => {
    const d = new Driver();
    d.declare();
    const lease = d.lease("d1", 0);
    expect(d.lease("d1", 10)).toEqual(lease);
    expect(
      d.try({ type: "BeginCreate", id: "d1", lease, requestId: "r", at: at(10 + 60_000) }),
    ).toMatchObject({ ok: false, error: { code: "lease-expired" } });
  });

  it("a grant while a create is in flight makes it Uncertain", () => {
    const d = new Driver();
    d.declare();
    const lease = d.lease("d1", 0, "c1");
    d.must({ type: "BeginCreate", id: "d1", lease, requestId: "r", at: at(1) });
    d.lease("d1", 61_000, "c2");
    expect(d.phase()).toBe("Uncertain");
    expect(
      d.try({
        type: "CreateAnswered",
        id: "d1",
        lease,
        outcome: { kind: "lost", cause: "x" },
        at: at(61_001),
      }).ok,
    ).toBe(false);
  });
});

describe("restart", () => {
  it("keeps identity, phase and obligations; drops leases and liveness; stale epochs stay stale", () => {
    const d = new Driver();
    const lease = d.created();
    d.must({
      type: "Observed",
      id: "d1",
      lease,
      report: { key: keyOf("d1"), status: "RUNNING", ready: true },
      source: "listing",
      at: at(3),
    });
    const before = d.state;
    const { state } = restore(JSON.parse(JSON.stringify(before)) as typeof before, at(4).wallMs);
    d.state = state;
    expect(state.deployments.d1).toMatchObject({
      phase: "Active",
      key: keyOf("d1"),
      leaseHighWater: lease.epoch,
    });
    expect(state.deployments.d1?.lease).toBeUndefined();
    expect(state.deployments.d1?.observed).toBeUndefined();
    expect(state.obligations).toEqual(before.obligations);
    // Nothing acts until a lease is reacquired, and the old epoch is refused.
    expect(
      d.try({
        type: "RequireStop",
        id: "d1",
        lease,
        reason: "idle",
        at: { wallMs: at(5).wallMs, monoMs: 0 },
      }),
    ).toMatchObject({
      ok: false,
      error: { code: "no-lease" },
    });
    const again = d.lease("d1", 0);
    expect(again.epoch).toBe(lease.epoch + 1);
  });

  it("a create in flight at the restart becomes Uncertain", () => {
    const d = new Driver();
    d.declare();
    const lease = d.lease();
    d.must({ type: "BeginCreate", id: "d1", lease, requestId: "r", at: at(1) });
    const { state, events } = restore(d.state, at(2).wallMs);
    expect(state.deployments.d1?.phase).toBe("Uncertain");
    expect(state.obligations.d1?.state).toBe("open");
    expect(events).toContainEqual({
      type: "PhaseChanged",
      id: "d1",
      from: "Declared",
      to: "Uncertain",
      atMs: at(2).wallMs,
    });
  });
});

describe("orphans", () => {
  const report = { key: keyOf("o1"), status: "RUNNING", ownerTag: OWNER };

  it("records the obligation first, in StopRequired", () => {
    const d = new Driver();
    d.must({
      type: "RecordOrphan",
      id: "o1",
      report,
      ownerTag: OWNER,
      capabilities: CAPS,
      reason: "orphan",
      at: at(1),
    });
    expect(d.phase("o1")).toBe("StopRequired");
    expect(d.obligation("o1")).toMatchObject({ state: "open", openedBecause: "orphan", key: keyOf("o1") });
    expect(d.events.map((e) => e.type)).toEqual(["OrphanRecorded", "ObligationOpened", "StopRequired"]);
  });

  it("refuses another owner's resource and a resource already recorded", () => {
    const d = new Driver();
    expect(
      d.try({
        type: "RecordOrphan",
        id: "o1",
        report: { ...report, ownerTag: "them" },
        ownerTag: OWNER,
        capabilities: CAPS,
        reason: "orphan",
        at: at(1),
      }),
    ).toMatchObject({
      ok: false,
      error: { code: "foreign-resource" },
    });
    d.must({
      type: "RecordOrphan",
      id: "o1",
      report,
      ownerTag: OWNER,
      capabilities: CAPS,
      reason: "orphan",
      at: at(1),
    });
    expect(
      d.try({
        type: "RecordOrphan",
        id: "o2",
        report,
        ownerTag: OWNER,
        capabilities: CAPS,
        reason: "orphan",
        at: at(1),
      }),
    ).toMatchObject({
      ok: false,
      error: { code: "already-recorded", by: "o1" },
    });
  });
});
