// The rented nodes' state history: a change is recorded with its time and its cause (PAIR's action,
// a request's wake, else the provider's side), a repeat is not, only the last N are kept per node,
// and it survives a restart (a new instance on the same data dir); a damaged file starts afresh
// rather than stopping the node.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  observedState,
  RentedStateHistory,
  STATE_HISTORY_FILE,
  type ObservedState,
  type RentedNodeView,
} from "../src/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pair-state-history-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse("2026-11-30T10:00:00Z");

/** What node `gpu` says: its state, PAIR's cause, the provider's words. */
function seen(state: string, cause: string | null = null, extra: Partial<ObservedState> = {}): ObservedState {
  return { name: "gpu", state, cause, detail: null, ...extra };
}

describe("RentedStateHistory", () => {
  it("records each change once, with time and cause, and keeps it across a restart", () => {
    const h = new RentedStateHistory({ dataDir: dir });
    expect(h.observe([seen("starting")], T0)).toBe(true);
    expect(h.observe([seen("starting")], T0 + 1_000)).toBe(false);
    expect(h.observe([seen("running")], T0 + 2_000)).toBe(true);
    h.observe([seen("paused", "paused by its sponsor")], T0 + 3_000);
    // Same state, a new cause of PAIR's: a change worth keeping.
    h.observe([seen("paused", "paused: budget reached")], T0 + 4_000);
    // The cause going away while the state stays is no change; nor are the provider's words.
    expect(h.observe([seen("paused")], T0 + 5_000)).toBe(false);
    expect(h.observe([seen("paused", null, { detail: "a new message" })], T0 + 5_500)).toBe(false);
    const expected = [
      { at: "2026-11-30T10:00:00.000Z", state: "starting", reason: "first seen by PAIR" },
      { at: "2026-11-30T10:00:02.000Z", state: "running", reason: "provider-side change" },
      { at: "2026-11-30T10:00:03.000Z", state: "paused", reason: "paused by its sponsor" },
      { at: "2026-11-30T10:00:04.000Z", state: "paused", reason: "paused: budget reached" },
    ];
    expect(h.list("gpu")).toEqual(expected);
    expect(h.list("other")).toEqual([]);
    const again = new RentedStateHistory({ dataDir: dir });
    expect(again.list("gpu")).toEqual(expected);
    // After the restart, the same state is no change.
    expect(again.observe([seen("paused", "paused: budget reached")], T0 + 9_000)).toBe(false);
  });

  it("says who woke a node: its sponsor's resume, a request from a node, else the provider", () => {
    const h = new RentedStateHistory({ dataDir: dir });
    const asked: [string, number][] = [];
    const fromLaptop = (name: string, sinceMs: number) => {
      asked.push([name, sinceMs]);
      return "laptop";
    };
    h.observe([seen("paused", "paused by its sponsor")], T0);
    // Resumed after the pause was recorded: the sponsor's doing, whatever requests came.
    h.observe([seen("starting", null, { resumedAtMs: T0 + 500 })], T0 + 1_000, fromLaptop);
    h.observe([seen("scaled_to_zero")], T0 + 2_000, fromLaptop);
    // The resume is older than the last change: a request from the laptop woke it this time.
    h.observe([seen("running", null, { resumedAtMs: T0 + 500 })], T0 + 3_000, fromLaptop);
    h.observe([seen("scaled_to_zero", null, { detail: "no traffic for 15 min" })], T0 + 4_000);
    // Nothing of PAIR's reached it: the provider brought it up.
    h.observe([seen("running")], T0 + 5_000, () => undefined);
    h.observe([seen("failed", null, { detail: "out of memory" })], T0 + 6_000, fromLaptop);
    expect(h.list("gpu").map((c) => `${c.state}: ${c.reason}`)).toEqual([
      "paused: paused by its sponsor",
      "starting: resumed by its sponsor",
      "scaled_to_zero: provider-side change",
      "running: woken by a request from laptop",
      "scaled_to_zero: provider-side change: no traffic for 15 min",
      "running: provider-side change",
      "failed: provider-side change: out of memory",
    ]);
    // Asked only for a wake, and only since the change before it.
    expect(asked).toEqual([["gpu", T0 + 2_000]]);
  });

  it("keeps only the last maxPerNode changes of each node", () => {
    const h = new RentedStateHistory({ dataDir: dir, maxPerNode: 3 });
    for (let i = 0; i < 7; i++)
      h.observe(
        [
          { name: "a", state: i % 2 === 0 ? "running" : "paused", cause: `step ${i}`, detail: null },
          { name: "b", state: "running", cause: null, detail: null },
        ],
        T0 + i,
      );
    expect(h.list("a").map((c) => c.reason)).toEqual(["step 4", "step 5", "step 6"]);
    expect(h.list("b")).toHaveLength(1);
    expect(new RentedStateHistory({ dataDir: dir, maxPerNode: 3 }).list("a")).toHaveLength(3);
    expect(() => new RentedStateHistory({ dataDir: dir, maxPerNode: 0 })).toThrow(/maxPerNode/);
  });

  it("starts afresh, saying so, when the file is damaged", () => {
    writeFileSync(join(dir, STATE_HISTORY_FILE), "{not json");
    const log: string[] = [];
    const h = new RentedStateHistory({ dataDir: dir, log: (l) => void log.push(l) });
    expect(h.list("gpu")).toEqual([]);
    expect(log.join("\n")).toMatch(/state history afresh/);
    h.observe([seen("running")], T0);
    expect(JSON.parse(readFileSync(join(dir, STATE_HISTORY_FILE), "utf8"))).toMatchObject({ version: 1 });
  });

  it("reads who paused a managed node as the cause, the budget's with its reset time", () => {
    const view = (
      state: string,
      pausedBy: string | null,
      reason: string | null,
      lastError: string | null = null,
    ) =>
      ({
        name: "gpu",
        state,
        reason,
        last_error: lastError,
        managed: pausedBy === null ? null : { paused_by: pausedBy, resumed_at: "2026-11-30T09:00:00.000Z" },
      }) as unknown as RentedNodeView;
    expect(observedState(view("paused", "user-request", null)).cause).toBe("paused by its sponsor");
    expect(observedState(view("paused", "idle", null)).cause).toMatch(/idle/);
    expect(observedState(view("paused", "idle", null)).resumedAtMs).toBe(Date.parse("2026-11-30T09:00:00Z"));
    const budget =
      "budget exceeded: rented node gpu reached its daily budget and is paused until " +
      "2026-12-01T00:00:00.000Z: raise budget.usd_per_day or wait";
    expect(observedState(view("paused", "budget-exceeded", budget)).cause).toBe(
      "paused: budget reached until 2026-12-01T00:00:00.000Z",
    );
    // Who paused it is not the cause of a state it is coming up in (a resume clears it a moment later).
    expect(observedState(view("starting", "user-request", null)).cause).toBeNull();
    // The eligibility reason of a running node is no cause: it is not why the node runs.
    expect(observedState(view("running", null, budget)).cause).toBeNull();
    const failed = observedState(view("failed", null, "failed: out of memory", "out of memory"));
    expect(failed).toMatchObject({ cause: null, detail: "out of memory" });
  });
});
