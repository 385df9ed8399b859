// One contract suite for every LedgerStore: the in-memory one (restart = serialize and reload) and
// SQLite (restart = close and reopen the file). Each case gets a harness whose `open()` is another
// process on the same data and whose `restart()` closes a handle and opens the data again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  LedgerStoreGuardError,
  MemoryLedgerStore,
  commitOf,
  decide,
  emptyLedgerState,
  type LedgerDecision,
  type LedgerEntry,
  type LedgerStore,
  type WorkloadCost,
} from "@pair/ledger";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import {
  MIN,
  SETUP_OPS,
  T0,
  at,
  commitEach,
  entriesOf,
  inputOf,
  opArb,
  run,
  script,
  workloadsOf,
} from "./ledger-history.js";

interface Harness {
  /** A handle on the store; a second call is another process on the same data. */
  open(): LedgerStore;
  /** Close the handle and open the same data again: a restart. */
  restart(store: LedgerStore): LedgerStore;
  cleanup(): void;
}

const harnesses: Record<string, () => Harness> = {
  memory: () => {
    let shared = new MemoryLedgerStore();
    return {
      open: () => shared,
      restart: (store) => {
        const text = (store as MemoryLedgerStore).serialize();
        store.close();
        shared = MemoryLedgerStore.fromSerialized(text);
        return shared;
      },
      cleanup: () => undefined,
    };
  },
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-ledger-store-"));
    const handles: SqliteLedgerStore[] = [];
    const open = () => {
      const s = new SqliteLedgerStore({ path: join(dir, "ledger.db") });
      handles.push(s);
      return s;
    };
    return {
      open,
      restart: (store) => {
        store.close();
        return open();
      },
      cleanup: () => {
        for (const h of handles) if (isOpen(h)) h.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

function isOpen(store: SqliteLedgerStore): boolean {
  try {
    store.load();
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- the contract

describe.each(Object.keys(harnesses))("LedgerStore contract: %s", (kind) => {
  let h: Harness;
  afterEach(() => h.cleanup());
  const setup = () => (h = harnesses[kind]!());

  it("starts empty", () => {
    setup();
    const store = h.open();
    expect(store.load()).toBeUndefined();
    expect(store.entries()).toEqual([]);
    expect(store.workloads()).toEqual([]);
  });

  it("reads back exactly what was committed, decision by decision", () => {
    setup();
    const store = h.open();
    const decisions = run(script());
    commitEach(store, decisions, 0);
    expect(store.load()).toEqual(decisions.at(-1)!.state);
    expect(store.entries()).toEqual(entriesOf(decisions));
    expect(store.entries().length).toBeGreaterThan(3);
    expect(store.workloads()).toEqual(workloadsOf(decisions));
    expect(Object.keys(store.load()?.inFlight ?? {})).toEqual(["q2"]);
  });

  it("commits several decisions at once", () => {
    setup();
    const store = h.open();
    const decisions = run(script());
    expect(store.commit(commitOf(decisions.slice(0, 7))!, 0)).toBe("committed");
    expect(store.commit(commitOf(decisions.slice(7))!, decisions[6]!.state.version)).toBe("committed");
    expect(store.load()).toEqual(decisions.at(-1)!.state);
    expect(store.entries()).toEqual(entriesOf(decisions));
  });

  it("a restart loses no entry, no episode, no reservation, no request in flight", () => {
    setup();
    const inputs = script();
    const first = run(inputs.slice(0, 8));
    let store = h.open();
    const v = commitEach(store, first, 0);
    store = h.restart(store);
    const loaded = store.load();
    expect(loaded).toEqual(first.at(-1)!.state);
    expect(loaded?.episodes.d1?.state).toBe("open");
    expect(Object.keys(loaded?.inFlight ?? {}).sort()).toEqual(["h1", "q1", "q2"]);
    // Carry on from what was read back, restart again.
    const rest = run([...inputs.slice(8), { type: "SessionStarted", at: at(T0 + 30 * MIN) }], loaded);
    commitEach(store, rest, v);
    store = h.restart(store);
    expect(store.load()).toEqual(rest.at(-1)!.state);
    expect(store.entries()).toEqual(entriesOf([...first, ...rest]));
    expect(store.workloads()).toEqual(workloadsOf([...first, ...rest]));
    expect(store.load()?.episodes.d1?.state).toBe("closed");
  });

  it("refuses a stale writer (compare-and-set on the version)", () => {
    setup();
    const a = h.open();
    const b = h.open();
    const base = run(script().slice(0, 4));
    const v = commitEach(a, base, 0);
    const seenByB = b.load()!;
    expect(seenByB).toEqual(base.at(-1)!.state);
    // Both decide on the same version; A commits first, B is refused and keeps nothing.
    const fromA = run([{ type: "Tick", at: at(T0 + 5 * MIN) }], seenByB);
    const fromB = run([{ type: "Tick", at: at(T0 + 9 * MIN) }], seenByB);
    expect(a.commit(fromA[0]!, v)).toBe("committed");
    expect(b.commit(fromB[0]!, v)).toBe("conflict");
    expect(b.load()).toEqual(fromA[0]!.state);
    expect(b.entries()).toEqual(entriesOf([...base, ...fromA]));
    // A commit must move the version forward.
    expect(a.commit({ state: fromA[0]!.state, entries: [], workloads: [] }, fromA[0]!.state.version)).toBe(
      "conflict",
    );
  });

  it("refuses entries that do not continue the sequence, and keeps what it had", () => {
    setup();
    const store = h.open();
    const decisions = run(script());
    const v = commitEach(store, decisions.slice(0, 8), 0);
    const next = commitOf(decisions.slice(8))!;
    expect(next.entries.length).toBeGreaterThan(1);
    const before = store.load();
    expect(() => store.commit({ ...next, entries: next.entries.slice(1) }, v)).toThrow(LedgerStoreGuardError);
    expect(() => store.commit({ ...next, entries: [...next.entries, next.entries[0]!] }, v)).toThrow(
      LedgerStoreGuardError,
    );
    expect(store.load()).toEqual(before);
    expect(store.entries()).toEqual(entriesOf(decisions.slice(0, 8)));
  });

  it("never writes a closed episode again and never forgets one", () => {
    setup();
    const store = h.open();
    const decisions = run(script());
    const v = commitEach(store, decisions, 0);
    const s = store.load()!;
    const closed = s.episodes.d1!;
    const next = v + 1;
    const reopened = {
      ...s,
      version: next,
      episodes: { ...s.episodes, d1: { ...closed, rev: next, state: "open" as const } },
    };
    expect(() => store.commit({ state: reopened, entries: [], workloads: [] }, v)).toThrow(
      LedgerStoreGuardError,
    );
    const { d1: _gone, ...others } = s.episodes;
    expect(() =>
      store.commit({ state: { ...s, version: next, episodes: others }, entries: [], workloads: [] }, v),
    ).toThrow(LedgerStoreGuardError);
    expect(store.load()).toEqual(s);
  });

  it("answers history queries by node, after a sequence number, with a limit", () => {
    setup();
    const store = h.open();
    const decisions = run(script());
    commitEach(store, decisions, 0);
    const entries = entriesOf(decisions);
    expect(store.entries({ nodeId: "router" })).toEqual(entries.filter((e) => e.nodeId === "router"));
    expect(store.entries({ afterSeq: 2 })).toEqual(entries.filter((e) => e.seq > 2));
    expect(store.entries({ nodeId: "l4", limit: 2 })).toEqual(
      entries.filter((e) => e.nodeId === "l4").slice(0, 2),
    );
    expect(store.workloads({ nodeId: "l4" })).toEqual(
      workloadsOf(decisions).filter((w) => w.nodeId === "l4"),
    );
    expect(store.workloads({ limit: 1 })).toHaveLength(1);
  });

  it("random decisions, committed in random batches, survive any number of restarts (property)", () => {
    setup();
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 5, maxLength: 40 }), (ops) => {
        h.cleanup();
        setup();
        let store = h.open();
        let state = emptyLedgerState("ledger-p");
        let committed = state;
        let pending: LedgerDecision[] = [];
        const entries: LedgerEntry[] = [];
        const workloads: WorkloadCost[] = [];
        let now = T0;
        for (const op of [...SETUP_OPS, ...ops]) {
          now += op.t === "advance" ? op.ms : 0;
          if (op.t === "commit" || op.t === "restart") {
            const batch = commitOf(pending);
            if (batch !== undefined && batch.state.version !== committed.version) {
              expect(store.commit(batch, committed.version)).toBe("committed");
              committed = batch.state;
              entries.push(...batch.entries);
              workloads.push(...batch.workloads);
            }
            pending = [];
            if (op.t === "restart") {
              store = h.restart(store);
              expect(store.load()).toEqual(committed);
              expect(store.entries()).toEqual(entries);
              expect(store.workloads()).toEqual(workloads);
            }
            continue;
          }
          const input = inputOf(op, now, state);
          if (input === undefined) continue;
          const result = decide(state, input);
          if (!result.ok) continue;
          state = result.value.state;
          pending.push(result.value);
        }
        expect(store.load() ?? emptyLedgerState("ledger-p")).toEqual(committed);
        expect(store.entries()).toEqual(entries);
      }),
      { numRuns: kind === "sqlite" ? 25 : 100 },
    );
  });
});

// ---------------------------------------------------------------- SQLite only

describe("SqliteLedgerStore", () => {
  const withDir = (f: (path: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), "pair-ledger-sqlite-"));
    try {
      f(join(dir, "state.db"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("uses WAL and STRICT tables, and entries are append-only even to raw SQL", () => {
    withDir((path) => {
      const store = new SqliteLedgerStore({ path });
      commitEach(store, run(script()), 0);
      store.close();
      const db = new Database(path);
      try {
        expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
        const strict = db
          .prepare<[], { name: string; strict: number }>(
            "SELECT name, strict FROM pragma_table_list WHERE name LIKE 'ledger_%'",
          )
          .all();
        expect(strict.length).toBeGreaterThanOrEqual(7);
        expect(strict.every((t) => t.strict === 1)).toBe(true);
        expect(() => db.prepare("UPDATE ledger_entries SET amount_micro_usd = 1").run()).toThrow(
          /append-only/,
        );
        expect(() => db.prepare("DELETE FROM ledger_entries").run()).toThrow(/append-only/);
        expect(() =>
          db
            .prepare("INSERT INTO ledger_entries VALUES (999, 'billed-time', 'x', 'y', 1.5, 1, 1, '{}')")
            .run(),
        ).toThrow();
      } finally {
        db.close();
      }
    });
  });

  it("shares a database file with the hosting store", () => {
    withDir((path) => {
      const hosting = new SqliteHostingStore({ path });
      const ledger = new SqliteLedgerStore({ path });
      const decisions = run(script());
      commitEach(ledger, decisions, 0);
      expect(hosting.load().version).toBe(0);
      hosting.close();
      ledger.close();
      const again = new SqliteLedgerStore({ path });
      expect(again.load()).toEqual(decisions.at(-1)!.state);
      again.close();
      const hostingAgain = new SqliteHostingStore({ path });
      hostingAgain.close();
    });
  });

  it("refuses a database from a newer PAIR", () => {
    withDir((path) => {
      new SqliteLedgerStore({ path }).close();
      const db = new Database(path);
      db.prepare("UPDATE ledger_schema SET version = 99").run();
      db.close();
      expect(() => new SqliteLedgerStore({ path })).toThrow(/newer than this PAIR/);
    });
  });
});
