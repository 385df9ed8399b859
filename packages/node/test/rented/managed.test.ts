// A managed Hugging Face endpoint (lifecycle.managed: true) over HTTPS against the HF emulator, with
// the real keyring: the sponsor adopts its configured endpoint by exact key through the hosting
// contract and never touches another; pauses it at exit (an unconfirmed pause stays open in SQLite
// and is reconciled at the next start); wakes it for a request; pauses it when idle; pauses it at
// the budget cap. The ledger is compared with the emulator's meter at minute granularity: never under
// it, at most one billed minute per billing stretch over it.
import { join } from "node:path";
import { openObligations } from "@pair/provision";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { managedWorld, MIN, MODEL, NODE, type ManagedWorld } from "./managed-harness.js";
import { expectLedgerCoversMeter, stretchMinutes } from "./meter-bound.js";
import { chatReply } from "../support/chat.js";

const L4_MICRO_USD_PER_HOUR = 800_000;
const worlds = keyringWorlds<ManagedWorld>();

/**
 * The sponsor starts while its endpoint is `pending` (so the ledger sees every billed minute),
 * `running` (adopted 30 s into its second billed minute), or `paused`.
 */
async function world(
  lines: readonly string[] = [],
  at: "pending" | "running" | "paused" = "pending",
): Promise<ManagedWorld> {
  const endpoint = { other: true, running: at !== "pending", paused: at === "paused" };
  return worlds.add(await managedWorld(worlds.ca, lines, [], { endpoint, start: true }));
}

function storedObligations(w: ManagedWorld) {
  const store = new SqliteHostingStore({ path: join(w.dataDir, "managed", `${NODE}.db`) });
  try {
    return Object.values(store.load().obligations);
  } finally {
    store.close();
  }
}

/** The ledger's entries for the node, read from SQLite beside the running sponsor. */
function ledgerEntries(w: ManagedWorld) {
  const store = new SqliteLedgerStore({ path: join(w.dataDir, "managed", "ledger.db") });
  try {
    return store.entries({ nodeId: NODE });
  } finally {
    store.close();
  }
}

async function rentedRow(w: ManagedWorld): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE) ?? {};
}

const chat = (w: ManagedWorld) => chatReply(w.node.url, { model: MODEL, maxTokens: 3 });

/**
 * The ledger against the emulator's meter: never under it, and at most one billed minute per billing
 * stretch over it (the stretch began between two looks 10 s apart; meter-bound.ts).
 */
function meterMatchesLedger(w: ManagedWorld): void {
  const minutes = stretchMinutes(w.hf, "alice", "qwen");
  expectLedgerCoversMeter(w.node.managed.view(NODE)?.spend_usd?.total, minutes, L4_MICRO_USD_PER_HOUR);
}

describe("managed Hugging Face endpoints", () => {
  it("adopts the configured endpoint by exact key and pauses it at sponsor exit; others are never touched", async () => {
    const w = await world(["    lifecycle: { exit_timeout_s: 5 }"], "running");
    const qwen = w.hf.endpoints.get("alice", "qwen");
    const state = w.node.managed.node(NODE)?.controller.state;
    const live = Object.values(state?.deployments ?? {});
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ key: { name: "qwen", incarnation: qwen?.createdAt } });
    // A resume of that key through the contract, not a create: no spec, a resume's obligation.
    expect(live[0]).toMatchObject({ origin: "resume", intent: { answer: "resumed" } });
    expect(live[0]?.spec).toBeUndefined();
    expect(openObligations(state!)).toMatchObject([{ openedBecause: "resume-intent", key: live[0]?.key }]);
    expect(w.node.managed.view(NODE)).toMatchObject({
      managed: true,
      usd_per_hour: 0.8,
      open_obligations: 1,
    });

    await w.advance(3 * MIN);
    await w.node.close(200);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.hf.endpoints.get("alice", "someone-elses")?.state).toBe("running");
    const stored = storedObligations(w);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted", mode: "pause" },
    });
    expect(w.log.some((l) => l.includes("paused at sponsor exit"))).toBe(true);
  });

  it("an exit pause that is never confirmed stays open in SQLite and is carried out at the next start", async () => {
    const w = await world(["    lifecycle: { exit_timeout_s: 1 }"]);
    await w.advance(2 * MIN);
    w.hf.faults.failNext(100_000, 503); // every control call refused: nothing changes on HF
    await w.node.close(200);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    const stored = storedObligations(w);
    expect(stored.filter((o) => o.state === "open")).toHaveLength(1);
    expect(w.log.some((l) => l.includes("stays an open obligation"))).toBe(true);
    w.hf.faults.clear();

    await w.start(); // restored from SQLite: the required stop is retried by reconciliation
    await w.advance(40_000); // stopRetryMs (30 s) after the failed attempt
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    const state = w.node.managed.node(NODE)!.controller.state;
    expect(Object.keys(state.deployments)).toEqual([stored[0]?.deploymentId]);
    expect(openObligations(state)).toHaveLength(0);
    meterMatchesLedger(w);
  });

  it("a sponsor that went away without pausing restarts, restores its obligation and enforces idle again", async () => {
    const w = await world(["    lifecycle: { pause_on_sponsor_exit: false, idle_pause_min: 3 }"]);
    await w.advance(2 * MIN);
    await w.node.close(200);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    const stored = storedObligations(w);
    expect(stored.filter((o) => o.state === "open")).toHaveLength(1);

    await w.start();
    const state = w.node.managed.node(NODE)!.controller.state;
    expect(Object.keys(state.deployments)).toEqual([stored[0]?.deploymentId]); // not adopted twice
    await w.advance(2 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    await w.advance(90_000);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.node.managed.view(NODE)).toMatchObject({ paused_by: "idle", open_obligations: 0 });
    meterMatchesLedger(w);
  });

  it("wakes a paused endpoint for a request and answers it; with wake off the request fails rented_node_paused", async () => {
    const w = await world([], "paused");
    expect(Object.values(w.node.managed.node(NODE)!.controller.state.deployments)).toHaveLength(0);
    const pending = chat(w);
    let answered: Awaited<typeof pending> | undefined;
    void pending.then((a) => (answered = a));
    let warming = false;
    for (let i = 0; i < 400 && answered === undefined; i += 1) {
      w.hf.advance(5_000);
      await new Promise((r) => setTimeout(r, 25));
      warming ||= w.node.history.running().some((j) => j.warming);
    }
    expect(answered?.status).toBe(200);
    expect(warming).toBe(true); // the Jobs list showed it warming while it woke
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    expect(openObligations(w.node.managed.node(NODE)!.controller.state)).toHaveLength(1);
    // The wake's own looks reached the ledger: its run starts at the last idle (pending) look before
    // Hugging Face began billing, one poll before it, not at the resume (30 s of pending earlier).
    await w.node.managed.tick();
    const woken = w.hf.meter
      .stretches()
      .filter((s) => s.name === "qwen")
      .at(-1);
    const anchorMs = ledgerEntries(w)[0]?.atMs ?? Number.NaN;
    expect(anchorMs).toBeLessThanOrEqual(woken?.startMs ?? Number.NaN);
    expect((woken?.startMs ?? Number.NaN) - anchorMs).toBeLessThan(30_000);
    const wokenMinutes = Math.ceil((w.hf.nowMs() - (woken?.startMs ?? Number.NaN)) / MIN);
    expectLedgerCoversMeter(
      w.node.managed.view(NODE)?.spend_usd?.total,
      [wokenMinutes],
      L4_MICRO_USD_PER_HOUR,
    );

    const off = await world(["    lifecycle: { wake_on_request: false }"], "paused");
    await off.node.managed.tick();
    const refused = await chat(off);
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.json())).toContain("rented_node_paused");
    expect(JSON.stringify(refused.json())).toContain(NODE);
    expect(off.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
  });

  it("pauses after idle_pause_min with no PAIR workload; the ledger covers the meter", async () => {
    const w = await world(["    lifecycle: { idle_pause_min: 5 }"]);
    await w.advance(4 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    await w.advance(90_000);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.node.managed.view(NODE)).toMatchObject({ paused_by: "idle", open_obligations: 0 });
    await w.advance(5 * MIN);
    meterMatchesLedger(w);
  });

  it("pauses at the budget cap, refuses requests with budget_exceeded and resume while exhausted", async () => {
    const w = await world(["    budget: { usd_per_day: 0.1 }"]);
    await w.advance(12 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    // $0.80/h: 7 minutes are $0.093334; the 8th would cross $0.10 and is not started.
    expect(w.hf.meter.billedMinutes("alice", "qwen")).toBe(7);
    meterMatchesLedger(w);
    const view = w.node.managed.view(NODE);
    expect(view).toMatchObject({ paused_by: "budget-exceeded", budget_exceeded: true, open_obligations: 0 });
    expect(view?.spend_usd?.today).toBeLessThanOrEqual(0.1);
    const row = await rentedRow(w);
    expect(row).toMatchObject({ eligible: false });
    expect(String(row["reason"])).toContain("budget");
    const refused = await chat(w);
    expect(refused.status).toBe(429);
    expect(JSON.stringify(refused.json())).toContain("budget_exceeded");
    const resumed = await w.node.managed.act(NODE, "resume");
    expect(resumed).toMatchObject({ ok: false, error: { code: "budget_exceeded" } });
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
  });

  it("keeps the cap on Hugging Face's bill: a pause that takes 15 s still lands before the minute that would cross it", async () => {
    // $0.80/h: one minute is $0.013334, two would be $0.026667 > $0.02. The pause goes out the
    // endpoint's stop latency (20 s) before the second billed minute starts and lands 15 s later.
    const w = await world(["    budget: { usd_per_day: 0.02 }"]);
    w.hf.faults.slowStateChanges(15_000);
    await w.advance(5 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.node.managed.view(NODE)).toMatchObject({ paused_by: "budget-exceeded", budget_exceeded: true });
    expect(w.hf.meter.billedMinutes("alice", "qwen")).toBe(1);
    expect(w.hf.meter.totalMicroUsd("alice", "qwen")).toBeLessThanOrEqual(20_000);
    expect(w.node.managed.view(NODE)?.spend_usd?.today).toBeLessThanOrEqual(0.02);
  });

  it("pause and delete on request (pair rented pause|delete): through the contract, the node shows it", async () => {
    const w = await world(["    lifecycle: { exit_timeout_s: 5 }"], "running");
    const lifecycle = async (action: string) => {
      const res = await fetch(`${w.node.url}/pair/v1/rented/lifecycle`, {
        method: "POST",
        headers: { authorization: `Bearer ${w.node.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: NODE, action }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const paused = await lifecycle("pause");
    expect(paused.status).toBe(200);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    // Paused, and still eligible: a request wakes it (wake_on_request is on by default).
    expect(paused.json).toMatchObject({ name: NODE, state: "paused", eligible: true });
    expect(w.hf.endpoints.get("alice", "someone-elses")?.state).toBe("running");

    const deleted = await lifecycle("delete");
    expect(deleted.status).toBe(200);
    expect(w.hf.endpoints.get("alice", "qwen")).toBeUndefined();
    expect(w.hf.endpoints.get("alice", "someone-elses")?.state).toBe("running");

    // A pause of what is gone has nothing left to do, and says so without error (idempotent).
    expect((await lifecycle("pause")).status).toBe(200);
  });
});
