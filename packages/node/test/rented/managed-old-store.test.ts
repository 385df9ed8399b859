// A managed endpoint's hosting store written before resume was a contract command: the spell that
// brought alice/qwen into use was then a create whose spec said `hardware: "adopted"`. The sponsor
// adopts it, exits without pausing, and its SQLite rows are turned back into that old shape by hand
// (schema 1, through SQL). The restarted sponsor opens the file: the spell reads as a resume of the
// same key — the same record, not a second adoption — and idle pauses it, closing its obligation.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { managedWorld, MIN, MODEL, NODE, type ManagedWorld } from "./managed-harness.js";

const worlds = keyringWorlds<ManagedWorld>();

/** Rewrite the node's hosting store as the old code path left it: adopted spells as creates, schema 1. */
function makeOld(path: string): void {
  const db = new Database(path);
  try {
    const rows = db
      .prepare<[], { id: string; record: string }>("SELECT id, record FROM hosting_deployments")
      .all();
    const put = db.prepare("UPDATE hosting_deployments SET record = ? WHERE id = ?");
    for (const row of rows) {
      const { intent, ...record } = JSON.parse(row.record) as Record<string, unknown> & {
        intent?: Record<string, unknown>;
        slot: { account: string; name: string };
      };
      const spec = { provider: "huggingface-endpoint", account: record.slot.account, name: record.slot.name };
      const old = {
        ...record,
        origin: "create",
        spec: { ...spec, model: MODEL, hardware: "adopted" },
        ...(intent === undefined ? {} : { intent: { ...intent, answer: "created" } }),
      };
      put.run(JSON.stringify(old), row.id);
    }
    db.prepare(
      `UPDATE hosting_obligations SET record = json_set(record, '$.openedBecause', 'create-intent')`,
    ).run();
    db.pragma("user_version = 1");
  } finally {
    db.close();
  }
}

describe("a managed endpoint's hosting store from before resume", () => {
  it("opens: the adopted spell is the same record, now a resume, and idle pauses it", async () => {
    const lifecycle = "    lifecycle: { pause_on_sponsor_exit: false, idle_pause_min: 3 }";
    const setup = { endpoint: { running: true }, start: true };
    const w = worlds.add(await managedWorld(worlds.ca, [lifecycle], [], setup));
    const before = w.node.managed.node(NODE)!.controller.state;
    const [id] = Object.keys(before.deployments);
    expect(before.deployments[id!]).toMatchObject({ origin: "resume" });
    await w.node.close(200);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");

    const path = join(w.dataDir, "managed", `${NODE}.db`);
    makeOld(path);
    const old = new Database(path, { readonly: true });
    const row = old.prepare<[], { record: string }>("SELECT record FROM hosting_deployments").get();
    old.close();
    expect(JSON.parse(row!.record)).toMatchObject({ origin: "create", spec: { hardware: "adopted" } });

    await w.start();
    const state = w.node.managed.node(NODE)!.controller.state;
    expect(Object.keys(state.deployments)).toEqual([id]); // not adopted twice
    expect(state.deployments[id!]).toMatchObject({ origin: "resume", intent: { answer: "resumed" } });
    expect(state.deployments[id!]?.spec).toBeUndefined();
    expect(state.obligations[id!]).toMatchObject({ state: "open", openedBecause: "resume-intent" });
    await w.advance(4 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.node.managed.view(NODE)).toMatchObject({ paused_by: "idle", open_obligations: 0 });
    expect(w.node.managed.node(NODE)!.controller.state.obligations[id!]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted", mode: "pause" },
    });
  });
});
