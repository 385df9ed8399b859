// The indexed reconciliation pass says exactly what the quadratic one said, on states and listings
// drawn from small domains so that keys, slots and request ids collide often (duplicates, records of
// every phase, foreign owners, other accounts), and it stays linear in the number of records.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  PHASES,
  reconcile,
  type DeploymentRecord,
  type HostingState,
  type Listing,
  type ResourceKey,
  type ResourceReport,
  type StopObligation,
} from "@pair/provision";
import { CAPS, OWNER, at } from "./fixtures.js";
import { reconcileReference } from "./reconcile-reference.js";

const NOW = at(10_000).wallMs;
const scope = {
  provider: "fake",
  account: "acct",
  ownerTag: OWNER,
  capabilities: { ...CAPS, stopSettleMs: 1_000 },
  busyRequeueMs: 5_000,
  idleRequeueMs: 60_000,
};

const slotArb = fc.record({
  provider: fc.constantFrom("fake", "other"),
  account: fc.constantFrom("acct", "acct", "x"),
  name: fc.constantFrom("a", "b", "c"),
});
const keyArb: fc.Arbitrary<ResourceKey> = fc
  .tuple(slotArb, fc.constantFrom("1", "2"))
  .map(([slot, incarnation]) => ({ ...slot, incarnation }));
const requestIdArb = fc.constantFrom("r1", "r2", "r3");

const recordArb = fc.record(
  {
    slot: slotArb,
    key: keyArb,
    phase: fc.constantFrom(...PHASES),
    intent: fc.record(
      { requestId: requestIdArb, retryInFlight: fc.boolean() },
      { requiredKeys: ["requestId"] },
    ),
    closedAtOffsetMs: fc.integer({ min: -2_000, max: 500 }),
  },
  { requiredKeys: ["slot", "phase", "closedAtOffsetMs"] },
);

const reportArb: fc.Arbitrary<ResourceReport> = fc.record(
  {
    key: keyArb,
    status: fc.constantFrom("RUNNING", "IDLE", "TERMINATED"),
    ownerTag: fc.constantFrom(OWNER, OWNER, "someone-else"),
    requestId: requestIdArb,
  },
  { requiredKeys: ["key", "status"] },
);

const caseArb = fc.record({
  records: fc.array(recordArb, { maxLength: 12 }),
  reports: fc.array(reportArb, { maxLength: 12 }),
  complete: fc.boolean(),
  withObligation: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { state: HostingState; listing: Listing } {
  const deployments: Record<string, DeploymentRecord> = {};
  const obligations: Record<string, StopObligation> = {};
  c.records.forEach((r, i) => {
    const id = `d${i}`;
    // Only the fields reconciliation reads; the rest of a record does not enter the pass.
    deployments[id] = {
      id,
      slot: r.slot,
      phase: r.phase,
      ...(r.key === undefined ? {} : { key: r.key }),
      ...(r.intent === undefined ? {} : { intent: r.intent }),
    } as unknown as DeploymentRecord;
    if (c.withObligation[i] === true)
      obligations[id] = { deploymentId: id, closedAtMs: NOW + r.closedAtOffsetMs } as StopObligation;
  });
  return {
    state: { version: 1, deployments, obligations },
    listing: { complete: c.complete, startedAtMs: NOW, resources: c.reports },
  };
}

describe("reconcile (indexed)", () => {
  it("returns the same plan as the quadratic reference on every state and listing", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { state, listing } = build(c);
        expect(reconcile(state, listing, scope, NOW)).toEqual(reconcileReference(state, listing, scope, NOW));
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps the first record in order when two live records share a key", () => {
    const key = { provider: "fake", account: "acct", name: "a", incarnation: "1" };
    const rec = (id: string) => ({ id, slot: key, key, phase: "Active" }) as unknown as DeploymentRecord;
    const state = { version: 1, deployments: { x: rec("x"), y: rec("y") }, obligations: {} };
    const plan = reconcile(
      state,
      { complete: true, startedAtMs: NOW, resources: [{ key, status: "RUNNING", ownerTag: OWNER }] },
      scope,
      NOW,
    );
    expect(plan.observe.map((o) => o.id)).toEqual(["x"]);
    expect(plan.absent).toEqual(["y"]);
  });

  it("grows about linearly: 20,000 records take well under 40× the time of 500", () => {
    const time = (n: number) => {
      const deployments: Record<string, DeploymentRecord> = {};
      const resources: ResourceReport[] = [];
      for (let i = 0; i < n; i++) {
        const key = { provider: "fake", account: "acct", name: `n${i}`, incarnation: "1" };
        deployments[`d${i}`] = {
          id: `d${i}`,
          slot: key,
          key,
          phase: "Active",
        } as unknown as DeploymentRecord;
        resources.push({ key, status: "RUNNING", ownerTag: OWNER });
      }
      const state = { version: 1, deployments, obligations: {} };
      const listing = { complete: true, startedAtMs: NOW, resources };
      reconcile(state, listing, scope, NOW);
      const t0 = performance.now();
      const plan = reconcile(state, listing, scope, NOW);
      expect(plan.observe).toHaveLength(n);
      return performance.now() - t0;
    };
    const small = Math.max(time(500), 0.5);
    // Quadratic would be 1,600×; linear 40×. Allow a loaded machine a wide margin either side.
    expect(time(20_000) / small).toBeLessThan(400);
  });
});
