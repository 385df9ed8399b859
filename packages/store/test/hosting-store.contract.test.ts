// One contract suite for every HostingStore: the in-memory one and SQLite. Each case gets a
// factory that can "reopen" the same durable state (a new process on the same data).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  EMPTY_STATE,
  HostingController,
  ManualClock,
  MemoryHostingStore,
  type ControllerOptions,
  type HostingState,
  type HostingStore,
} from "@pair/provision";
import { SqliteHostingStore } from "@pair/store";
import { CountingIds, FakeProvider } from "@pair/testkit";

interface Harness {
  /** A handle on the store; a second call is another process on the same data. */
  open(): HostingStore;
  cleanup(): void;
}

const harnesses: Record<string, () => Harness> = {
  memory: () => {
    const store = new MemoryHostingStore();
    return { open: () => store, cleanup: () => undefined };
  },
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-hosting-store-"));
    const handles: SqliteHostingStore[] = [];
    return {
      open: () => {
        const s = new SqliteHostingStore({ path: join(dir, "state.db") });
        handles.push(s);
        return s;
      },
      cleanup: () => {
        for (const h of handles) h.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const SPEC = { provider: "fake", account: "acct", name: "pair-m", model: "m", hardware: "NVIDIA L4" };
const AUTH = { ledgerId: "ledger", reservationId: "res" };

function controller(store: HostingStore, clock: ManualClock, fake: FakeProvider, n = 0): HostingController {
  const options: ControllerOptions = {
    controllerId: `controller-${n}`,
    ownerTag: "pair:node-a",
    account: "acct",
    provider: fake,
    store,
    clock,
    ids: new CountingIds(`p${n}-${clock.now().wallMs}-`),
    policy: { maxActiveResources: 10, maxLifetimeMs: 86_400_000 },
    leaseTtlMs: 30_000,
    busyRequeueMs: 1_000,
    idleRequeueMs: 60_000,
    stopRetryMs: 5_000,
  };
  return HostingController.open(options);
}

/** One deployment declared and started (create answered) by a first controller on `h`. */
async function startedOne(h: Harness) {
  const clock = new ManualClock();
  const fake = new FakeProvider({ account: "acct", clock });
  const first = controller(h.open(), clock, fake);
  const declared = first.declare(SPEC, AUTH);
  if (!declared.ok) throw new Error("declare refused");
  expect((await first.start(declared.value)).ok).toBe(true);
  return { clock, fake, first, id: { ok: true as const, value: declared.value } };
}

describe.each(Object.keys(harnesses))("HostingStore contract: %s", (kind) => {
  let h: Harness;
  afterEach(() => h.cleanup());
  const setup = () => (h = harnesses[kind]!());

  it("starts empty", () => {
    setup();
    expect(h.open().load()).toEqual(EMPTY_STATE);
  });

  it("commits with the expected version and refuses a stale writer", () => {
    setup();
    const a = h.open();
    const b = h.open();
    const clock = new ManualClock();
    const fake = new FakeProvider({ account: "acct", clock });
    const c = controller(a, clock, fake);
    const declared = c.declare(SPEC, AUTH);
    expect(declared.ok).toBe(true);
    const seenByB = b.load();
    expect(seenByB).toEqual(c.state);
    // A moves on; B's view is now stale and its commit is refused.
    c.lease(declared.ok ? declared.value : "");
    const staleNext: HostingState = { ...seenByB, version: seenByB.version + 1 };
    expect(b.commit(staleNext, seenByB.version)).toBe("conflict");
    expect(b.load()).toEqual(c.state);
    // A commit must move the version forward.
    expect(a.commit(c.state, c.state.version)).toBe("conflict");
  });

  it("keeps identity, phase, obligations and epochs across a restart; leases are not reused", async () => {
    setup();
    const { clock, fake, first, id } = await startedOne(h);
    const epochBefore = first.state.deployments[id.value]!.leaseHighWater;
    const obligationsBefore = first.state.obligations;

    clock.restartProcess();
    const second = controller(h.open(), clock, fake, 1);
    const record = second.state.deployments[id.value]!;
    expect(record.phase).toBe("Requested");
    expect(record.key).toEqual(fake.resources[0]!.key);
    expect(record.lease).toBeUndefined();
    expect(second.state.obligations).toEqual(obligationsBefore);
    const claim = second.lease(id.value);
    expect(claim.ok && claim.value.epoch).toBe(epochBefore + 1);
    // The first process's epoch is stale for good.
    expect(
      first.apply({
        type: "RequireStop",
        id: id.value,
        lease: { controllerId: "controller-0", epoch: epochBefore },
        reason: "idle",
        at: clock.now(),
      }),
    ).toMatchObject({
      ok: false,
      error: { code: "stale-epoch" },
    });
    expect(h.open().load().deployments[id.value]?.phase).toBe("Requested");
  });

  it("matches a record stored with a nanosecond incarnation to the same instant in ms", async () => {
    setup();
    const { clock, fake, id } = await startedOne(h);
    // A record written before timestamps were normalised holds the provider's raw spelling; the
    // provider now reports the same instant at millisecond precision.
    const raw = "2026-08-01T10:00:00.123456789Z";
    const store = h.open();
    const before = store.load();
    const rawKey = { ...before.deployments[id.value]!.key!, incarnation: raw };
    const rev = before.version + 1;
    const stored: HostingState = {
      version: rev,
      deployments: { [id.value]: { ...before.deployments[id.value]!, key: rawKey, rev } },
      obligations: { [id.value]: { ...before.obligations[id.value]!, key: rawKey, rev } },
    };
    expect(store.commit(stored, before.version)).toBe("committed");
    fake.resources[0]!.key = { ...rawKey, incarnation: "2026-08-01T10:00:00.123+00:00" };

    clock.restartProcess();
    const second = controller(h.open(), clock, fake, 1);
    const report = await second.reconcileOnce();
    expect(report.plan?.orphans).toEqual([]);
    expect(second.state.deployments[id.value]?.observed).toBeDefined();
    expect(Object.values(second.state.deployments).filter((d) => d.origin === "orphan")).toEqual([]);
  });

  it("stops, reconciles and records orphans durably", async () => {
    setup();
    const clock = new ManualClock();
    const fake = new FakeProvider({ account: "acct", clock });
    fake.plant({ name: "pair-left-behind", ownerTag: "pair:node-a" });
    fake.plant({ name: "pair-m", ownerTag: "someone-else" });
    const c = controller(h.open(), clock, fake);
    const report = await c.reconcileOnce();
    expect(report.plan?.orphans).toHaveLength(1);
    expect(report.plan?.foreign).toBe(1);
    const state = h.open().load();
    const orphan = Object.values(state.deployments).find((d) => d.origin === "orphan")!;
    expect(orphan.phase).toBe("Stopped");
    expect(state.obligations[orphan.id]).toMatchObject({
      state: "discharged",
      openedBecause: "orphan",
      evidence: { kind: "stop-accepted" },
    });
    expect(fake.stops.map((s) => s.targetOwnerTag)).toEqual(["pair:node-a"]);
  });
});

describe("SqliteHostingStore guards", () => {
  it("never lowers a lease high-water mark and never reopens a closed obligation", async () => {
    const h = harnesses.sqlite!();
    try {
      const store = h.open();
      const clock = new ManualClock();
      const fake = new FakeProvider({ account: "acct", clock });
      const c = controller(store, clock, fake);
      const id = c.declare(SPEC, AUTH);
      if (!id.ok) throw new Error("declare refused");
      await c.start(id.value);
      await c.requireStop(id.value, "user-request");
      const s = store.load();
      const d = s.deployments[id.value]!;
      const o = s.obligations[id.value]!;
      const v = s.version + 1;
      const lowered: HostingState = {
        ...s,
        version: v,
        deployments: { ...s.deployments, [d.id]: { ...d, rev: v, leaseHighWater: 0 } },
      };
      expect(() => store.commit(lowered, s.version)).toThrow(/high-water/);
      const reopened: HostingState = {
        ...s,
        version: v,
        obligations: { ...s.obligations, [o.deploymentId]: { ...o, rev: v, state: "open" } },
      };
      expect(() => store.commit(reopened, s.version)).toThrow(/cannot reopen/);
      expect(store.load()).toEqual(s);
    } finally {
      h.cleanup();
    }
  });

  it("refuses a database from a newer PAIR", () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-hosting-newer-"));
    try {
      const path = join(dir, "state.db");
      new SqliteHostingStore({ path }).close();
      const db = new Database(path);
      db.pragma("user_version = 99");
      db.close();
      expect(() => new SqliteHostingStore({ path })).toThrow(/newer than this PAIR/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
