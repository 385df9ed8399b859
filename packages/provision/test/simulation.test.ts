// The hosting contract under random schedules: two controllers (processes) on one store, a
// FakeProvider with seeded faults, restarts at any step. Invariants are checked by name after
// every step; at the end the faults stop and everything of ours must be stopped with evidence.
// Replay a failure with SIM_SEED=<seed> (and SIM_PATH=<path>) as fast-check prints them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  EVIDENCE_KINDS,
  HostingController,
  ManualClock,
  MemoryHostingStore,
  formatKey,
  liveRecords,
  mayBill,
  sameResource,
  type ControllerOptions,
  type HostingEvent,
  type HostingState,
} from "@pair/provision";
import {
  CountingIds,
  FakeProvider,
  FaultyProvider,
  NO_FAULTS,
  type FakeStatus,
  type FaultRates,
} from "@pair/testkit";
import { AUTH, OWNER, POLICY, SPEC } from "./fixtures.js";

const RUNS = Number(process.env.SIM_RUNS ?? 10_000);
const FOREIGN = "someone-else";

type Op =
  | { readonly t: "declare-start"; readonly c: 0 | 1; readonly name: number }
  | { readonly t: "stop"; readonly c: 0 | 1; readonly pick: number }
  | { readonly t: "reconcile"; readonly c: 0 | 1 }
  | { readonly t: "retry-create"; readonly c: 0 | 1; readonly pick: number }
  | { readonly t: "resume"; readonly c: 0 | 1; readonly pick: number }
  | { readonly t: "advance"; readonly ms: number }
  | { readonly t: "restart"; readonly c: 0 | 1 }
  | { readonly t: "together"; readonly a: Op; readonly b: Op };

const controllerIndex = fc.constantFrom<0 | 1>(0, 1);
const simpleOp: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant("declare-start" as const), c: controllerIndex, name: fc.nat(2) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant("stop" as const), c: controllerIndex, pick: fc.nat(7) }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("reconcile" as const), c: controllerIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("retry-create" as const), c: controllerIndex, pick: fc.nat(7) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant("resume" as const), c: controllerIndex, pick: fc.nat(7) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 90_000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("restart" as const), c: controllerIndex }) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 9, arbitrary: simpleOp },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("together" as const), a: simpleOp, b: simpleOp }) },
);
const rate = fc.constantFrom(0, 0, 0.05, 0.2, 0.5);
const rates: fc.Arbitrary<FaultRates> = fc.record({
  lostCreateAnswer: rate,
  create5xx: rate,
  createRefused: rate,
  slowVisibility: rate,
  partialListing: rate,
  listFailure: rate,
  stopFailure: rate,
  stopAcceptedStillBilling: rate,
  lostResumeAnswer: rate,
});
const scenario = fc.record({
  seed: fc.integer(),
  rates,
  idempotent: fc.boolean(),
  plantForeign: fc.boolean(),
  plantOrphan: fc.boolean(),
  plantPaused: fc.boolean(),
  ops: fc.array(op, { minLength: 4, maxLength: 40 }),
});

class Violation extends Error {}
/** How often each event happened over all schedules: proof that the faults were exercised. */
const coverage = new Map<string, number>();
function check(name: string, holds: boolean, detail: () => string): void {
  if (!holds) throw new Violation(`invariant "${name}" violated: ${detail()}`);
}

interface World {
  clock: ManualClock;
  fake: FakeProvider;
  faulty: FaultyProvider;
  store: MemoryHostingStore;
  controllers: [HostingController, HostingController];
  options: [ControllerOptions, ControllerOptions];
  grants: Map<string, number[]>;
  /** Foreign resources as planted: key → status. Nothing may change them. */
  foreign: Map<string, FakeStatus>;
  /** Discharges whose evidence was false, found as they happened. */
  truth: string[];
  steps: number;
}

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function build(sc: Scenario): World {
  const clock = new ManualClock();
  const fake = new FakeProvider({ account: "acct", clock, capabilities: { idempotencyKeys: sc.idempotent } });
  const faulty = new FaultyProvider(fake, { seed: sc.seed, rates: sc.rates, clock });
  if (sc.plantForeign) {
    fake.plant({ name: `${SPEC.name}-0`, ownerTag: FOREIGN });
    fake.plant({ name: `${SPEC.name}-1`, ownerTag: FOREIGN, status: "STARTING" });
    fake.plant({ name: `${SPEC.name}-2` }); // no owner tag at all
  }
  const foreign = new Map(fake.resources.map((r) => [formatKey(r.key), r.status]));
  if (sc.plantOrphan) fake.plant({ name: `${SPEC.name}-0`, ownerTag: OWNER, requestId: "from-a-crash" });
  // Paused resources a resume may bring into use: one of ours, one a user made (no owner tag).
  if (sc.plantPaused) {
    fake.plant({ name: `${SPEC.name}-p0`, ownerTag: OWNER, status: "PAUSED" });
    fake.plant({ name: `${SPEC.name}-p1`, status: "PAUSED" });
  }
  const store = new MemoryHostingStore();
  const grants = new Map<string, number[]>();
  const truth: string[] = [];
  const onEvent = (e: HostingEvent) => {
    if (e.type === "ObligationDischarged") {
      // Evidence must be true: the resource it names is not billing, unless the provider lied to us.
      const record = store.load().deployments[e.id];
      const key = e.key ?? record?.key;
      const requestId = record?.intent?.requestId;
      const billing = fake
        .billing()
        .filter(
          (r) =>
            (key !== undefined && sameResource(r.key, key)) ||
            (key === undefined && requestId !== undefined && r.requestId === requestId),
        );
      const lied = billing.every(
        (r) => e.evidence.kind === "stop-accepted" && faulty.liedAboutStops.has(formatKey(r.key)),
      );
      if (billing.length > 0 && !lied)
        truth.push(
          `${e.id} discharged by ${e.evidence.kind} while ${billing.map((r) => formatKey(r.key)).join(",")} bills`,
        );
    }
    const label =
      e.type === "ObligationDischarged"
        ? `evidence:${e.evidence.kind}`
        : e.type === "OrphanRecorded"
          ? `orphan:${e.reason}`
          : e.type;
    coverage.set(label, (coverage.get(label) ?? 0) + 1);
    if (e.type === "LeaseGranted") grants.set(e.id, [...(grants.get(e.id) ?? []), e.epoch]);
  };
  const make = (n: 0 | 1): ControllerOptions => ({
    controllerId: `controller-${n}`,
    ownerTag: OWNER,
    account: "acct",
    provider: faulty,
    store,
    clock,
    ids: new CountingIds(`c${n}-`),
    policy: POLICY,
    leaseTtlMs: 60_000,
    busyRequeueMs: 5_000,
    idleRequeueMs: 60_000,
    stopRetryMs: 10_000,
    onEvent,
  });
  const options: [ControllerOptions, ControllerOptions] = [make(0), make(1)];
  const controllers: [HostingController, HostingController] = [
    HostingController.open(options[0]),
    HostingController.open(options[1]),
  ];
  return { clock, fake, faulty, store, controllers, options, grants, foreign, truth, steps: 0 };
}

function pick(state: HostingState, n: number) {
  const live = liveRecords(state);
  return live.length === 0 ? undefined : live[n % live.length];
}

async function perform(w: World, o: Op): Promise<void> {
  switch (o.t) {
    case "declare-start": {
      const c = w.controllers[o.c];
      const declared = c.declare({ ...SPEC, name: `${SPEC.name}-${o.name}` }, AUTH);
      if (declared.ok) await c.start(declared.value);
      return;
    }
    case "stop": {
      const c = w.controllers[o.c];
      const target = pick(c.state, o.pick);
      if (target !== undefined && target.phase !== "Declared") await c.requireStop(target.id, "user-request");
      return;
    }
    case "reconcile":
      await w.controllers[o.c].reconcileOnce();
      return;
    case "retry-create": {
      const c = w.controllers[o.c];
      const target = pick(c.state, o.pick);
      if (target?.phase === "Uncertain") {
        const result = await c.retryCreate(target.id);
        if (!w.fake.capabilities.idempotencyKeys)
          check("no blind create retry", !result.ok && result.error.code !== "invalid-input", () =>
            JSON.stringify(result),
          );
      }
      return;
    }
    case "resume": {
      const c = w.controllers[o.c];
      const paused = w.fake.resources.filter((r) => r.status === "PAUSED");
      const target = paused[o.pick % Math.max(1, paused.length)];
      if (target === undefined) return;
      const declared = c.declareResume(target.key, AUTH);
      if (declared.ok) await c.resume(declared.value);
      return;
    }
    case "advance":
      w.clock.advance(o.ms);
      return;
    case "restart": {
      const before = openObligationIds(w.store.load());
      w.clock.restartProcess();
      w.controllers[o.c] = HostingController.open(w.options[o.c]);
      // The other controller's process did not restart, but its monotonic clock is shared here:
      // reopen it too so its leases are judged on the same clock.
      const other = o.c === 0 ? 1 : 0;
      w.controllers[other] = HostingController.open(w.options[other]);
      const after = openObligationIds(w.store.load());
      check(
        "restart loses no obligation",
        before.every((id) => after.includes(id)),
        () => `${before.join(",")} → ${after.join(",")}`,
      );
      return;
    }
    case "together":
      await Promise.all([perform(w, o.a), perform(w, o.b)]);
      return;
  }
}

function openObligationIds(state: HostingState): string[] {
  return Object.values(state.obligations)
    .filter((ob) => ob.state === "open")
    .map((ob) => ob.deploymentId);
}

function checkInvariants(w: World): void {
  const state = w.store.load();
  check("evidence is true", w.truth.length === 0, () => w.truth.join("; "));
  for (const record of Object.values(state.deployments)) {
    const ob = state.obligations[record.id];
    if (mayBill(record))
      check(
        "a billing phase has an open obligation",
        ob?.state === "open",
        () => `${record.id} in ${record.phase}: ${JSON.stringify(ob)}`,
      );
  }
  for (const ob of Object.values(state.obligations)) {
    if (ob.state === "discharged")
      check(
        "every closed obligation has evidence",
        ob.evidence !== undefined && EVIDENCE_KINDS.includes(ob.evidence.kind),
        () => JSON.stringify(ob),
      );
    if (ob.state === "transferred")
      check("a transfer names its new owner", ob.transferredTo !== undefined, () => JSON.stringify(ob));
  }
  // Ours: our owner tag, or a key we resumed (a resume brings a resource into our use, to be stopped).
  const resumedKeys = new Set(w.faulty.resumeRequests.map(formatKey));
  for (const stop of w.fake.stops)
    check(
      "no foreign resource was ever stopped",
      !stop.found || stop.targetOwnerTag === OWNER || resumedKeys.has(formatKey(stop.key)),
      () => formatKey(stop.key),
    );
  for (const request of w.faulty.stopRequests) {
    const target = w.fake.resources.find((r) => sameResource(r.key, request.key));
    check(
      "no stop aimed at a resource we do not own",
      target === undefined || target.ownerTag === OWNER || resumedKeys.has(formatKey(request.key)),
      () => formatKey(request.key),
    );
  }
  const ids = w.faulty.createRequests.map((r) => r.requestId);
  if (!w.fake.capabilities.idempotencyKeys)
    check("no blind create retry", new Set(ids).size === ids.length, () => ids.join(","));
  else {
    const perKey = new Map<string, number>();
    for (const r of w.fake.resources)
      if (r.idempotencyKey !== undefined)
        perKey.set(r.idempotencyKey, (perKey.get(r.idempotencyKey) ?? 0) + 1);
    check(
      "an idempotency key creates at most one resource",
      [...perKey.values()].every((n) => n === 1),
      () => JSON.stringify([...perKey]),
    );
  }
  for (const [id, epochs] of w.grants)
    check(
      "epochs strictly increase",
      epochs.every((e, i) => i === 0 || e > epochs[i - 1]!),
      () => `${id}: ${epochs.join(",")}`,
    );
  // Every resource we created that bills is known to the store: by its key or by its request id.
  const ours = new Set(w.faulty.createRequests.map((r) => r.requestId));
  for (const resource of w.fake.billing()) {
    if (resource.requestId === undefined || !ours.has(resource.requestId)) continue;
    const records = Object.values(state.deployments).filter(
      (d) =>
        (d.key !== undefined && sameResource(d.key, resource.key)) ||
        (d.key === undefined && d.intent?.requestId === resource.requestId),
    );
    check("every billing resource has a record", records.length > 0, () => formatKey(resource.key));
    const open = records.some((d) => state.obligations[d.id]?.state === "open");
    check(
      "every billing resource has an open obligation (unless the provider lied about a stop)",
      open || w.faulty.liedAboutStops.has(formatKey(resource.key)),
      () =>
        `${formatKey(resource.key)}: ${records.map((d) => `${d.id}/${d.phase}/${state.obligations[d.id]?.state}`).join(",")}`,
    );
  }
  // Every resource we resumed that bills has a record on its key with an open obligation.
  for (const resource of w.fake.billing()) {
    if (!resumedKeys.has(formatKey(resource.key))) continue;
    const open = Object.values(state.deployments).some(
      (d) =>
        d.key !== undefined && sameResource(d.key, resource.key) && state.obligations[d.id]?.state === "open",
    );
    check(
      "every resumed resource that bills has an open obligation (unless the provider lied about a stop)",
      open || w.faulty.liedAboutStops.has(formatKey(resource.key)),
      () => formatKey(resource.key),
    );
  }
}

/** Faults stop; the sponsor stops everything; nothing of ours may bill, every obligation closes with evidence. */
async function quiesce(w: World): Promise<void> {
  w.faulty.rates = NO_FAULTS;
  const c = w.controllers[0];
  for (let round = 0; round < 8; round += 1) {
    w.clock.advance(61_000); // past lease TTL, listing lag, stop retry
    await c.reconcileOnce();
    for (const record of liveRecords(c.state)) {
      if (record.phase === "Declared" && record.intent === undefined) c.cancel(record.id);
      else if (record.phase !== "Declared") await c.requireStop(record.id, "sponsor-exit");
    }
  }
  const state = w.store.load();
  // A resumed resource without our owner tag whose stop the provider lied about is the one case the
  // contract cannot catch (billing-after-stop needs the tag); the daemon adopts such a resource again.
  const resumed = new Set(w.faulty.resumeRequests.map(formatKey));
  const stillBilling = w.fake
    .billing()
    .filter(
      (r) =>
        r.ownerTag === OWNER ||
        (resumed.has(formatKey(r.key)) && !w.faulty.liedAboutStops.has(formatKey(r.key))),
    );
  check("after quiescence nothing of ours bills", stillBilling.length === 0, () =>
    stillBilling.map((r) => formatKey(r.key)).join(", "),
  );
  const open = openObligationIds(state);
  check("after quiescence every obligation is closed", open.length === 0, () => open.join(", "));
  for (const ob of Object.values(state.obligations))
    check("closed by evidence", ob.state === "discharged" && ob.evidence !== undefined, () =>
      JSON.stringify(ob),
    );
  for (const r of w.fake.resources) {
    const planted = w.foreign.get(formatKey(r.key));
    const stopped = (x: FakeStatus) => x === "PAUSED" || x === "TERMINATED";
    if (planted !== undefined)
      check(
        "foreign resources untouched",
        stopped(r.status) === stopped(planted),
        () => `${formatKey(r.key)}: ${planted} → ${r.status}`,
      );
  }
}

describe("hosting contract simulation", () => {
  it(`holds every invariant over ${RUNS} random schedules`, async () => {
    let schedules = 0;
    let steps = 0;
    const seed = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(scenario, async (sc) => {
        const w = build(sc);
        for (const o of sc.ops) {
          await perform(w, o);
          checkInvariants(w);
          w.steps += 1;
        }
        await quiesce(w);
        checkInvariants(w);
        schedules += 1;
        steps += w.steps;
      }),
      {
        numRuns: RUNS,
        ...(seed === undefined ? {} : { seed }),
        ...(process.env.SIM_PATH === undefined ? {} : { path: process.env.SIM_PATH }),
      },
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `hosting contract simulation: ${schedules} schedules, ${steps} steps, all invariants held (${seconds} s)`,
    );
    console.log(
      `  events seen: ${[...coverage]
        .sort()
        .map(([k, n]) => `${k}=${n}`)
        .join(", ")}`,
    );
    expect(schedules).toBeGreaterThanOrEqual(RUNS);
    // The schedules reached every path that matters.
    for (const label of [
      "evidence:absent-from-complete-listing",
      "evidence:provider-reported-billing-ended",
      "evidence:stop-accepted",
      "orphan:orphan",
      "orphan:billing-after-stop",
      "CreateOutcomeUncertain",
      "StopFailed",
      "ResumeIntentRecorded",
      "ResumeOutcomeUncertain",
    ])
      expect(coverage.get(label) ?? 0, label).toBeGreaterThan(0);
  }, 600_000);
});
