// The rented nodes' state history: a change is recorded with its time and reason, a repeat is not,
// only the last N are kept per node, and it survives a restart (a new instance on the same data dir);
// a damaged file starts afresh rather than stopping the node.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  observedState,
  RentedStateHistory,
  STATE_HISTORY_FILE,
  type RentedNodeView,
} from "../../src/rented/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pair-state-history-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse("2026-11-30T10:00:00Z");

describe("RentedStateHistory", () => {
  it("records each change once, with time and reason, and keeps it across a restart", () => {
    const h = new RentedStateHistory({ dataDir: dir });
    expect(h.observe([{ name: "gpu", state: "starting", reason: null }], T0)).toBe(true);
    expect(h.observe([{ name: "gpu", state: "starting", reason: null }], T0 + 1_000)).toBe(false);
    expect(h.observe([{ name: "gpu", state: "running", reason: null }], T0 + 2_000)).toBe(true);
    // Same state, new reason: a change worth keeping.
    h.observe([{ name: "gpu", state: "paused", reason: "paused by its sponsor" }], T0 + 3_000);
    h.observe([{ name: "gpu", state: "paused", reason: "paused: budget reached" }], T0 + 4_000);
    // The reason going away while the state stays is no change.
    expect(h.observe([{ name: "gpu", state: "paused", reason: null }], T0 + 5_000)).toBe(false);
    const expected = [
      { at: "2026-11-30T10:00:00.000Z", state: "starting", reason: null },
      { at: "2026-11-30T10:00:02.000Z", state: "running", reason: null },
      { at: "2026-11-30T10:00:03.000Z", state: "paused", reason: "paused by its sponsor" },
      { at: "2026-11-30T10:00:04.000Z", state: "paused", reason: "paused: budget reached" },
    ];
    expect(h.list("gpu")).toEqual(expected);
    expect(h.list("other")).toEqual([]);
    const again = new RentedStateHistory({ dataDir: dir });
    expect(again.list("gpu")).toEqual(expected);
    // After the restart, the same state is no change.
    expect(
      again.observe([{ name: "gpu", state: "paused", reason: "paused: budget reached" }], T0 + 9_000),
    ).toBe(false);
  });

  it("keeps only the last maxPerNode changes of each node", () => {
    const h = new RentedStateHistory({ dataDir: dir, maxPerNode: 3 });
    for (let i = 0; i < 7; i++)
      h.observe(
        [
          { name: "a", state: i % 2 === 0 ? "running" : "paused", reason: `step ${i}` },
          { name: "b", state: "running", reason: null },
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
    h.observe([{ name: "gpu", state: "running", reason: null }], T0);
    expect(JSON.parse(readFileSync(join(dir, STATE_HISTORY_FILE), "utf8"))).toMatchObject({ version: 1 });
  });

  it("reads who paused a managed node as the reason", () => {
    const view = (state: string, pausedBy: string | null, reason: string | null) =>
      ({
        name: "gpu",
        state,
        reason,
        last_error: null,
        managed: pausedBy === null ? null : { paused_by: pausedBy },
      }) as unknown as RentedNodeView;
    expect(observedState(view("paused", "user-request", null)).reason).toBe("paused by its sponsor");
    expect(observedState(view("paused", "idle", null)).reason).toMatch(/idle/);
    expect(observedState(view("failed", null, "failed: out of memory")).reason).toBe("failed: out of memory");
    expect(observedState(view("running", null, null)).reason).toBeNull();
  });
});
