// The sponsor's durable ledger: an input the ledger has no use for (a phase change, a lease) is
// accepted and commits nothing, instead of being taken for a store conflict and logged as refused; a
// price not known yet (a restart before the provider's price list is read) keeps the reservation's
// price rather than setting it to 0 under a running job.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteLedgerStore } from "@pair/store";
import { afterEach, describe, expect, it } from "vitest";
import { ManagedLedger } from "../src/core/managed-ledger.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function ledger(): { ledger: ManagedLedger; store: SqliteLedgerStore } {
  const dir = mkdtempSync(join(tmpdir(), "pair-ledger-"));
  dirs.push(dir);
  const store = new SqliteLedgerStore({ path: join(dir, "ledger.db") });
  let wallMs = Date.UTC(2026, 7, 1);
  const clock = { now: () => ({ wallMs: (wallMs += 1_000), monoMs: 0 }) };
  return { ledger: new ManagedLedger(store, clock, "ledger-test"), store };
}

describe("ManagedLedger.apply", () => {
  it("accepts an event that changes nothing without committing, and keeps committing after it", () => {
    const { ledger: l, store } = ledger();
    l.sessionStarted();
    const version = l.state.version;
    const at = { wallMs: Date.UTC(2026, 7, 1, 0, 5), monoMs: 0 };
    const fed = l.apply({
      type: "HostingEventReported",
      event: { type: "PhaseChanged", id: "deployment-1", from: "Declared", to: "Requested", atMs: at.wallMs },
      at,
    });
    expect(fed).toMatchObject({ ok: true });
    expect(l.state.version).toBe(version);
    expect(store.load()?.version).toBe(version);
    expect(l.ensureReservation("gpu-hf", 800_000, { timeZone: "UTC", stopLeadMs: 0 })).toEqual({
      ok: true,
      value: "rented:gpu-hf",
    });
    expect(store.load()?.version).toBeGreaterThan(version);
    store.close();
  });
});

describe("ManagedLedger.ensureReservation with the price unknown", () => {
  const budget = { timeZone: "UTC", stopLeadMs: 0 } as const;
  const priceOf = (l: ManagedLedger) => l.state.reservations["rented:batch"]?.pricing;

  it("opens a new reservation at 0, keeps an existing one's price, and takes a known price", () => {
    const { ledger: l, store } = ledger();
    expect(l.ensureReservation("batch", undefined, budget)).toEqual({ ok: true, value: "rented:batch" });
    expect(priceOf(l)).toEqual({ kind: "hourly", priceMicroUsdPerHour: 0 });
    l.ensureReservation("batch", 810_010, budget);
    expect(priceOf(l)).toEqual({ kind: "hourly", priceMicroUsdPerHour: 810_010 });

    // A restart: a new ManagedLedger on the same store, its price list not read yet.
    const restarted = new ManagedLedger(
      store,
      { now: () => ({ wallMs: Date.UTC(2026, 7, 2), monoMs: 0 }) },
      "ledger-test",
    );
    const version = restarted.state.version;
    expect(restarted.ensureReservation("batch", undefined, budget)).toEqual({
      ok: true,
      value: "rented:batch",
    });
    expect(priceOf(restarted)).toEqual({ kind: "hourly", priceMicroUsdPerHour: 810_010 });
    expect(restarted.state.version).toBe(version); // nothing changed, nothing committed
    restarted.ensureReservation("batch", 900_000, budget);
    expect(priceOf(restarted)).toEqual({ kind: "hourly", priceMicroUsdPerHour: 900_000 });
    store.close();
  });
});
