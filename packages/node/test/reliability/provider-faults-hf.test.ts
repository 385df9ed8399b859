// Provider faults against a running sponsor, Hugging Face Inference Endpoints: a sponsor with one
// managed endpoint (alice/qwen, adopted) and a local engine, over HTTPS to the HF emulator, the token
// in the real keyring, virtual time. The emulator misbehaves (5xx storm, 429 + retry-after, lost
// answers, slow state changes, a partial listing, a pause accepted while it keeps billing) and each
// test asserts on the emulator's view (its endpoints, its meter, the requests it received) and on
// the sponsor's SQLite (obligations), not only on what PAIR says.
import type { EngineEmulator } from "@pair/emulators";
import { granulesCostMicroUsd } from "@pair/ledger";
import { afterEach, describe, expect, it } from "vitest";
import { managedWorld, MIN, MODEL, NODE, type ManagedWorld } from "../rented/managed-harness.js";
import {
  breathe,
  chat,
  expectObligationsCover,
  LOCAL_MODEL,
  localEngine,
  openFor,
  rentedRow,
  storedHosting,
} from "./fault-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const L4_MICRO_USD_PER_HOUR = 800_000;
const LIST = /^\/v2\/endpoint\/alice$/;
const engines: EngineEmulator[] = [];
// Registered first, so it runs after the worlds' cleanup (afterEach hooks run last registered first).
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});
// A failed test must not leave the exit pause in a storm.
const worlds = keyringWorlds<ManagedWorld>((w) => w.hf.faults.clear());

/** The sponsor with alice/qwen running (adopted at start) or paused, and a local engine. */
async function world(
  lines: readonly string[] = [],
  at: "running" | "paused" = "running",
): Promise<ManagedWorld> {
  const local = await localEngine();
  engines.push(local.engine);
  // Started while pending: the ledger sees every billed minute.
  const w = worlds.add(
    await managedWorld(worlds.ca, lines, local.lines, { endpoint: { other: true }, start: true }),
  );
  await w.advance(2 * MIN); // pending 30 s + initializing 60 s: both running, qwen adopted
  if (at === "paused") {
    await w.node.managed.act(NODE, "pause");
    await w.node.managed.tick();
  }
  await untilServed(w, LOCAL_MODEL);
  return w;
}

/** Wait (real time, bounded) until the sponsor serves `model` (its engine probed). */
async function untilServed(w: ManagedWorld, model: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if ((await chat(w.node, model)).status === 200) return;
    await breathe(50);
  }
  throw new Error(`the sponsor never served ${model}: ${(await chat(w.node, model)).text}`);
}

const qwen = (w: ManagedWorld) => w.hf.endpoints.get("alice", "qwen");
const hosting = (w: ManagedWorld) => storedHosting(w.dataDir, NODE);

/** What the emulator bills now (open stretches of alice/qwen), as name + incarnation. */
function billing(w: ManagedWorld): { name: string; incarnation: string }[] {
  return w.hf.meter
    .stretches()
    .filter((s) => s.name === "qwen" && s.endMs === undefined)
    .map((s) => ({ name: s.name, incarnation: s.createdAt }));
}

/** The invariants, from SQLite and the emulator; the other endpoint is never touched. */
function expectInvariants(w: ManagedWorld): void {
  expectObligationsCover(hosting(w), billing(w));
  // Never touched by PAIR (HF's own scale-to-zero may idle it), and nothing was created.
  expect(["running", "scaledToZero"]).toContain(w.hf.endpoints.get("alice", "someone-elses")?.state);
  expect(w.hf.endpoints.list("alice")).toHaveLength(2);
}

/**
 * The ledger's total against the meter at minute granularity. `afterWake`: the ledger is never under
 * the meter and at most one billed minute over it per wake (the cautious start, docs/ledger.md: the
 * run begins at the idle look before the one that saw it charging).
 */
function expectLedger(w: ManagedWorld, how: "equal" | "afterWake" = "equal"): void {
  const meter = granulesCostMicroUsd(w.hf.meter.billedMinutes("alice", "qwen"), MIN, L4_MICRO_USD_PER_HOUR);
  const ledger = Math.round((w.node.managed.view(NODE)?.spend_usd?.total ?? 0) * 1e6);
  if (how === "equal") expect(ledger).toBe(meter);
  else {
    expect(ledger).toBeGreaterThanOrEqual(meter);
    expect(ledger).toBeLessThanOrEqual(meter + granulesCostMicroUsd(1, MIN, L4_MICRO_USD_PER_HOUR) + 1);
  }
}

/** Requests the emulator received (method + path), from `since` on. */
function received(w: ManagedWorld, since = 0) {
  return w.hf.controlRequests().slice(since);
}

describe("provider faults: Hugging Face managed endpoint", () => {
  it("5xx storm: other models and the running endpoint keep serving; a pause during it stays open; it converges after", async () => {
    const w = await world();
    await w.advance(MIN);
    const deploymentIds = Object.keys(hosting(w).deployments);
    expect(deploymentIds).toHaveLength(1);

    w.hf.faults.failNext(1_000_000, 503); // every control request fails, changes nothing
    await w.node.managed.tick();
    expect((await chat(w.node, LOCAL_MODEL)).status).toBe(200);
    // The rented node is reported, with the reason; its requests get a clean refusal, not a crash.
    const rented = await chat(w.node, MODEL);
    expect([200, 409]).toContain(rented.status);
    if (rented.status === 409) expect(rented.text).toContain("rented_node_ineligible");
    const row = await rentedRow(w.node, NODE);
    expect(row).toMatchObject({ eligible: false, state: "unreachable" });
    expect(String(row["reason"])).toContain("503");
    const paused = await w.node.managed.act(NODE, "pause");
    expect(paused).toMatchObject({ ok: false, error: { code: "upstream_error" } });
    if (!paused.ok) expect(paused.error.message).toContain("stop unconfirmed");
    expect(qwen(w)?.state).toBe("running");
    await w.advance(MIN, 30_000);
    const managed = (await rentedRow(w.node, NODE))["managed"] as Record<string, unknown>;
    expect(managed).toMatchObject({ open_obligations: 1 });
    expect(String(managed["last_error"])).toContain("stop unconfirmed");
    expectInvariants(w);
    expect(openFor(hosting(w), "qwen", qwen(w)!.createdAt)).toHaveLength(1);

    w.hf.faults.clear(); // the storm ends: the required pause is retried by reconciliation
    await w.advance(MIN);
    expect(qwen(w)?.state).toBe("paused");
    const state = hosting(w);
    expect(Object.keys(state.deployments)).toEqual(deploymentIds); // the same spell, not re-adopted
    expect(Object.values(state.obligations).filter((o) => o.state === "open")).toHaveLength(0);
    expect(Object.values(state.obligations)[0]?.evidence).toBeDefined();
    expectInvariants(w);
    expectLedger(w);
  });

  it("429 with retry-after: the listing is asked again only after retry-after; pause is retried once, after it", async () => {
    const w = await world();
    const since = received(w).length;
    w.hf.faults.rateLimitNext(1, 2, { method: "GET", path: LIST });
    await w.node.managed.tick();
    const lists = received(w, since).filter((r) => r.method === "GET" && LIST.test(r.path));
    expect(lists.map((r) => r.fault)).toEqual(["rate-limit", "none"]);
    const limitedAt = lists[0]!.atRealMs;
    expect(lists[1]!.atRealMs - limitedAt).toBeGreaterThanOrEqual(1_950);
    // Nothing of this sponsor reached the control plane inside the retry-after window: the listing
    // waited, and the node probe (every 200 ms here) was held by the same window.
    const inWindow = received(w, since).filter(
      (r) => r.atRealMs > limitedAt && r.atRealMs < limitedAt + 1_950,
    );
    expect(inWindow).toEqual([]);

    const before = received(w).length;
    w.hf.faults.rateLimitNext(1, 1, { method: "POST", path: "/pause" });
    expect((await w.node.managed.act(NODE, "pause")).ok).toBe(true);
    const pauses = received(w, before).filter((r) => r.path.endsWith("/pause"));
    expect(pauses.map((r) => r.fault)).toEqual(["rate-limit", "none"]);
    expect(pauses[1]!.atRealMs - pauses[0]!.atRealMs).toBeGreaterThanOrEqual(950);
    expect(qwen(w)?.state).toBe("paused");
    expect(Object.values(hosting(w).obligations).filter((o) => o.state === "open")).toHaveLength(0);
    expectInvariants(w);
  });

  it("lost answers: a lost pause and a lost resume are resent only as the safe actions they are; no second endpoint", async () => {
    const w = await world([], "paused");
    expect(Object.values(hosting(w).obligations).filter((o) => o.state === "open")).toHaveLength(0);
    const start = received(w).length;
    w.hf.faults.loseAnswers(1, { method: "POST", path: "/resume" });
    const answer = chat(w.node, MODEL);
    let done = false;
    void answer.then(() => (done = true));
    for (let i = 0; i < 200 && !done; i += 1) {
      await w.advance(5_000, 5_000); // with a pass, as the sponsor's timer would run one
      await breathe(25);
    }
    expect((await answer).status).toBe(200);
    expect(qwen(w)?.state).toBe("running");
    expectInvariants(w);
    expect(openFor(hosting(w), "qwen", qwen(w)!.createdAt)).toHaveLength(1);

    const before = received(w).length;
    w.hf.faults.loseAnswers(1, { method: "POST", path: "/pause" });
    expect((await w.node.managed.act(NODE, "pause")).ok).toBe(true);
    expect(received(w, before).filter((r) => r.path.endsWith("/pause"))).toHaveLength(2);
    expect(qwen(w)?.state).toBe("paused");
    const state = hosting(w);
    expect(Object.values(state.obligations).filter((o) => o.state === "open")).toHaveLength(0);
    expect(received(w, start).filter((r) => r.path.endsWith("/resume"))).toHaveLength(2); // resent once
    expect(received(w, start).filter((r) => r.method === "POST" && LIST.test(r.path))).toHaveLength(0); // no create
    expectInvariants(w);
    expectLedger(w, "afterWake");
  });

  it("slow state changes: a wake waits within its cold-start budget, then cold_start_timeout; nothing hangs; it is still covered", async () => {
    const w = await world(["    timeouts: { cold_start_s: 2 }"], "paused");
    w.hf.faults.slowStateChanges(30 * MIN); // the resume is accepted, lands 30 virtual minutes later
    const refused = await chat(w.node, MODEL);
    expect(refused.status).toBe(504);
    expect(refused.text).toContain("cold_start_timeout");
    expect(refused.elapsedMs).toBeLessThan(2_000 + 1_500);
    expect((await chat(w.node, LOCAL_MODEL)).status).toBe(200);
    // While HF still shows it paused nothing bills; when the accepted resume lands (30 virtual min
    // later) it bills, and from the next pass on it is covered by exactly one open obligation.
    for (let t = 0; t < 34 * MIN; t += 10_000) {
      await w.advance(10_000);
      expectInvariants(w);
    }
    expect(qwen(w)?.state).toBe("running");
    w.hf.faults.clear();
    expect((await chat(w.node, MODEL)).status).toBe(200);
  });

  it("partial listing: an endpoint missing from the listing is not taken as gone; its own 404 is", async () => {
    const w = await world();
    const ids = Object.keys(hosting(w).deployments);
    w.hf.faults.hideFromListing("qwen", 5);
    await w.advance(5 * 20_000, 20_000);
    let state = hosting(w);
    expect(Object.keys(state.deployments)).toEqual(ids); // not discharged and adopted again
    expect(openFor(state, "qwen", qwen(w)!.createdAt)).toHaveLength(1);
    expect(Object.values(state.obligations).filter((o) => o.state === "discharged")).toHaveLength(0);
    expectInvariants(w);
    expectLedger(w);

    const incarnation = qwen(w)!.createdAt;
    await w.api.deleteEndpoint("alice", "qwen"); // gone for real: the listing lacks it, its GET is 404
    await w.advance(20_000);
    state = hosting(w);
    expect(openFor(state, "qwen", incarnation)).toHaveLength(0);
    expect(Object.values(state.obligations)[0]).toMatchObject({
      state: "discharged",
      evidence: { kind: "absent-from-complete-listing" },
    });
  });

  it("pause accepted but still billing: the obligation stays open, the pause is retried, the list says so, the ledger accrues", async () => {
    const w = await world();
    w.hf.faults.slowStateChanges(24 * 60 * MIN); // HF answers 200 to pause and keeps running
    const before = received(w).length;
    await w.node.managed.act(NODE, "pause");
    await w.advance(4 * MIN, 20_000);
    expect(qwen(w)?.state).toBe("running");
    expectInvariants(w); // billing, so exactly one open obligation, all the time
    const pauses = received(w, before).filter((r) => r.path.endsWith("/pause"));
    expect(pauses.length).toBeGreaterThanOrEqual(4); // retried (every stopRetryMs, 30 s)
    expect(pauses.length).toBeLessThanOrEqual(4 * 2 + 2); // not hammered
    const row = await rentedRow(w.node, NODE);
    expect(JSON.stringify(row)).toContain("stop unconfirmed");
    expectLedger(w); // the ledger kept accruing: it equals the meter

    w.hf.faults.clear(); // the next pause takes: evidence, the obligation closes
    await w.advance(MIN, 20_000);
    expect(qwen(w)?.state).toBe("paused");
    expect(Object.values(hosting(w).obligations).filter((o) => o.state === "open")).toHaveLength(0);
    expect(JSON.stringify(await rentedRow(w.node, NODE))).not.toContain("stop unconfirmed");
    expectLedger(w);
  });
});
