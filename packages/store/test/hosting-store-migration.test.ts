// An old hosting store opens under the new schema: the records the old code path wrote for bringing an
// existing endpoint into use (a create whose spec said `hardware: "adopted"`) read as resumes, with
// their obligations, and stay stoppable by their key. The old file is built by hand: the first
// schema through SQL, rows as the old path committed them (declare + start through a provider whose
// create answered with the existing resource, as the daemon's adopting provider did).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  HostingController,
  ManualClock,
  MemoryHostingStore,
  type ControllerOptions,
  type HostingEvent,
  type HostingState,
  type HostingStore,
  type ProviderPort,
} from "@pair/provision";
import { SqliteHostingStore } from "@pair/store";
import { CountingIds, FakeProvider } from "@pair/testkit";

const AUTH = { ledgerId: "ledger", reservationId: "res" };
/** The spec the old code declared for an adoption (its `settings` named the incarnation a wake must find). */
const OLD_ADOPTION = { provider: "fake", account: "acct", name: "mine", model: "m", hardware: "adopted" };
const CREATE = { provider: "fake", account: "acct", name: "made", model: "m", hardware: "NVIDIA L4" };

function options(store: HostingStore, clock: ManualClock, provider: ProviderPort, events?: HostingEvent[]) {
  const o: ControllerOptions = {
    controllerId: "c1",
    ownerTag: "pair:node-a",
    account: "acct",
    provider,
    store,
    clock,
    ids: new CountingIds(`o${clock.now().wallMs}-`),
    policy: { maxActiveResources: 10, maxLifetimeMs: 86_400_000 },
    leaseTtlMs: 30_000,
    busyRequeueMs: 1_000,
    idleRequeueMs: 60_000,
    stopRetryMs: 5_000,
    ...(events === undefined ? {} : { onEvent: (e: HostingEvent) => events.push(e) }),
  };
  return o;
}

/** The old adopting provider: a create of `hardware: "adopted"` answered with the existing resource. */
function oldAdopting(fake: FakeProvider): ProviderPort {
  return {
    capabilities: fake.capabilities,
    create: async (request) => {
      if (request.spec.hardware !== OLD_ADOPTION.hardware) return fake.create(request);
      const found = fake.resources.find((r) => r.key.name === request.spec.name);
      if (found === undefined) return { kind: "refused", code: "not_found", message: "no endpoint" };
      if (found.status === "PAUSED") await fake.resume(found.key);
      const { requestId: _none, ...report } = fake.report(found);
      return { kind: "created", report };
    },
    list: () => fake.list(),
    describe: (k) => fake.describe(k),
    stop: (k, m) => fake.stop(k, m),
    resume: (k) => fake.resume(k),
  };
}

/** The first schema, exactly as migration 1 made it, filled with `state`. */
function writeOldStore(path: string, state: HostingState): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE hosting_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT;
    INSERT INTO hosting_meta (id, version) VALUES (1, ${state.version});
    CREATE TABLE hosting_deployments (id TEXT PRIMARY KEY, rev INTEGER NOT NULL, phase TEXT NOT NULL,
      lease_high_water INTEGER NOT NULL, record TEXT NOT NULL) STRICT;
    CREATE TABLE hosting_obligations (deployment_id TEXT PRIMARY KEY, rev INTEGER NOT NULL,
      state TEXT NOT NULL, record TEXT NOT NULL) STRICT;`);
  const putD = db.prepare("INSERT INTO hosting_deployments VALUES (?, ?, ?, ?, ?)");
  for (const d of Object.values(state.deployments))
    putD.run(d.id, d.rev, d.phase, d.leaseHighWater, JSON.stringify(d));
  const putO = db.prepare("INSERT INTO hosting_obligations VALUES (?, ?, ?, ?)");
  for (const o of Object.values(state.obligations))
    putO.run(o.deploymentId, o.rev, o.state, JSON.stringify(o));
  db.pragma("user_version = 1");
  db.close();
}

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("SqliteHostingStore migration: adopted creates become resumes", () => {
  it("an old store opens; its adopted spells read as resumes, created ones as creates; a resumed one stops by key", async () => {
    const clock = new ManualClock();
    const fake = new FakeProvider({ account: "acct", clock, capabilities: { stopMode: "pause" } });
    const endpoint = fake.plant({ name: "mine", status: "PAUSED" });
    const memory = new MemoryHostingStore();
    const old = HostingController.open(options(memory, clock, oldAdopting(fake)));
    const spell = async (spec: typeof OLD_ADOPTION) => {
      const id = old.declare(spec, AUTH);
      if (!id.ok) throw new Error(JSON.stringify(id.error));
      expect((await old.start(id.value)).ok).toBe(true);
      return id.value;
    };
    const first = await spell(OLD_ADOPTION); // adopted, then paused: a finished spell
    await old.requireStop(first, "idle");
    clock.advance(60_000);
    const live = await spell({
      ...OLD_ADOPTION,
      settings: { adoptIncarnation: endpoint.key.incarnation },
    } as never);
    const created = await spell(CREATE);
    // One more adoption whose answer never came: declared and begun, the process died before the answer.
    const inFlight = old.declare({ ...OLD_ADOPTION, name: "other" }, AUTH);
    if (!inFlight.ok) throw new Error("declare refused");
    const claim = old.lease(inFlight.value);
    if (!claim.ok) throw new Error("no lease");
    old.apply({
      type: "BeginCreate",
      id: inFlight.value,
      lease: claim.value,
      requestId: "r-x",
      at: clock.now(),
    });
    expect(endpoint.status).toBe("STARTING");

    dir = mkdtempSync(join(tmpdir(), "pair-hosting-migrate-"));
    const path = join(dir, "managed.db");
    writeOldStore(path, memory.load());
    const store = new SqliteHostingStore({ path });
    try {
      const s = store.load();
      for (const id of [first, live]) {
        expect(s.deployments[id]).toMatchObject({ origin: "resume", key: endpoint.key });
        expect(s.deployments[id]?.spec).toBeUndefined();
        expect(s.deployments[id]?.intent?.answer).toBe("resumed");
        expect(s.obligations[id]?.openedBecause).toBe("resume-intent");
      }
      expect(s.obligations[first]).toMatchObject({
        state: "discharged",
        evidence: { kind: "stop-accepted" },
      });
      expect(s.obligations[live]?.state).toBe("open");
      expect(s.deployments[created]).toMatchObject({
        origin: "create",
        spec: CREATE,
        intent: { answer: "created" },
      });
      expect(s.obligations[created]?.openedBecause).toBe("create-intent");
      expect(s.deployments[inFlight.value]?.origin).toBe("resume");
      expect(s.deployments[inFlight.value]?.intent).not.toHaveProperty("answer"); // not null: still in flight
      expect(s.version).toBe(memory.load().version);
      const db = new Database(path, { readonly: true });
      expect(db.pragma("user_version", { simple: true })).toBe(2);
      db.close();

      // The new controller on the migrated file: the in-flight one is Uncertain (a resume's event),
      // and the live resumed spell is stopped through its key exactly like a created one.
      clock.restartProcess();
      const events: HostingEvent[] = [];
      const c = HostingController.open(options(store, clock, fake, events));
      expect(c.state.deployments[inFlight.value]?.phase).toBe("Uncertain");
      expect(events).toContainEqual(
        expect.objectContaining({ type: "ResumeOutcomeUncertain", id: inFlight.value, answer: "lost" }),
      );
      expect((await c.requireStop(live, "sponsor-exit")).ok).toBe(true);
      expect(endpoint.status).toBe("PAUSED");
      expect(c.state.obligations[live]).toMatchObject({
        state: "discharged",
        evidence: { kind: "stop-accepted" },
      });
    } finally {
      store.close();
    }
    // Opening it again migrates nothing twice.
    const again = new SqliteHostingStore({ path });
    expect(again.load().deployments[live]?.origin).toBe("resume");
    again.close();
  });
});
