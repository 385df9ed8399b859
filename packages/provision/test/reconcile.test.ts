import { describe, expect, it } from "vitest";
import { reconcile, type Listing, type ResourceReport } from "@pair/provision";
import { CAPS, OWNER, at } from "./fixtures.js";
import { Driver, keyOf } from "./harness.js";

const scope = {
  provider: "fake",
  account: "acct",
  ownerTag: OWNER,
  capabilities: CAPS,
  busyRequeueMs: 5_000,
  idleRequeueMs: 60_000,
};
const listing = (resources: ResourceReport[], complete = true): Listing => ({
  complete,
  startedAtMs: at(10_000).wallMs,
  resources,
});

describe("reconcile", () => {
  it("observes exact keys, and never takes another incarnation of the name", () => {
    const d = new Driver();
    d.created("d1");
    const plan = reconcile(
      d.state,
      listing([
        { key: keyOf("d1"), status: "RUNNING", ownerTag: OWNER },
        { key: keyOf("d1", "older"), status: "RUNNING", ownerTag: "someone-else" },
      ]),
      scope,
      at(10_000).wallMs,
    );
    expect(plan.observe).toEqual([
      { id: "d1", report: { key: keyOf("d1"), status: "RUNNING", ownerTag: OWNER } },
    ]);
    expect(plan.foreign).toBe(1);
    expect(plan.orphans).toEqual([]);
    expect(plan.absent).toEqual([]);
  });

  it("finds orphans only among resources with our owner tag that can still bill", () => {
    const d = new Driver();
    const plan = reconcile(
      d.state,
      listing([
        { key: keyOf("x", "1"), status: "RUNNING", ownerTag: OWNER },
        { key: keyOf("x", "2"), status: "IDLE", ownerTag: OWNER },
        { key: keyOf("x", "3"), status: "TERMINATED", ownerTag: OWNER },
        { key: keyOf("x", "4"), status: "RUNNING" },
        { key: { ...keyOf("x", "5"), account: "another-account" }, status: "RUNNING", ownerTag: OWNER },
      ]),
      scope,
      at(10_000).wallMs,
    );
    expect(plan.orphans.map((o) => o.report.key.incarnation)).toEqual(["1", "2"]);
    expect(plan.foreign).toBe(1);
  });

  it("names absent records only from a complete listing", () => {
    const d = new Driver();
    d.created("d1");
    expect(reconcile(d.state, listing([], false), scope, at(10_000).wallMs).absent).toEqual([]);
    expect(reconcile(d.state, listing([]), scope, at(10_000).wallMs).absent).toEqual(["d1"]);
  });

  it("binds a lost create by request id, and waits while a create is in flight", () => {
    const d = new Driver();
    d.declare("d1");
    const lease = d.lease("d1");
    d.must({ type: "BeginCreate", id: "d1", lease, requestId: "req-d1", at: at(1) });
    const listed = { key: keyOf("d1"), status: "STARTING", ownerTag: OWNER, requestId: "req-d1" };
    const inFlight = reconcile(d.state, listing([listed]), scope, at(10_000).wallMs);
    expect(inFlight).toMatchObject({ observe: [], orphans: [], absent: [] });
    d.must({ type: "CreateAnswered", id: "d1", lease, outcome: { kind: "lost", cause: "reset" }, at: at(2) });
    const lost = reconcile(d.state, listing([listed]), scope, at(10_000).wallMs);
    expect(lost.observe).toEqual([{ id: "d1", report: listed }]);
    expect(lost.requeueAfterMs).toBe(5_000);
  });

  it("records again a resource still billing after an accepted stop, past the settle time", () => {
    const d = new Driver();
    const lease = d.created("d1");
    d.must({ type: "RequireStop", id: "d1", lease, reason: "idle", at: at(3) });
    d.must({
      type: "StopAnswered",
      id: "d1",
      lease,
      mode: "terminate",
      outcome: { kind: "accepted" },
      at: at(4),
    });
    const still = listing([{ key: keyOf("d1"), status: "RUNNING", ownerTag: OWNER }]);
    const settling = reconcile(
      d.state,
      still,
      { ...scope, capabilities: { ...CAPS, stopSettleMs: 30_000 } },
      at(20_000).wallMs,
    );
    expect(settling.orphans).toEqual([]);
    const settled = reconcile(
      d.state,
      still,
      { ...scope, capabilities: { ...CAPS, stopSettleMs: 30_000 } },
      at(40_000).wallMs,
    );
    expect(settled.orphans).toEqual([
      { report: { key: keyOf("d1"), status: "RUNNING", ownerTag: OWNER }, reason: "billing-after-stop" },
    ]);
  });

  it("asks to look again soon while anything is not settled, and rarely when all runs", () => {
    const d = new Driver();
    const lease = d.created("d1");
    d.must({
      type: "Observed",
      id: "d1",
      lease,
      report: { key: keyOf("d1"), status: "RUNNING", ready: true },
      source: "listing",
      at: at(3),
    });
    const quiet = reconcile(
      d.state,
      listing([{ key: keyOf("d1"), status: "RUNNING", ready: true }]),
      scope,
      at(10_000).wallMs,
    );
    expect(quiet.requeueAfterMs).toBe(60_000);
  });
});
