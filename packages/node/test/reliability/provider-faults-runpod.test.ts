// Provider faults against a running sponsor, Runpod pods: a sponsor with one managed Runpod node
// (pods on demand) and a local engine, over HTTPS to the Runpod emulator, both keys in the real
// keyring, virtual time. The emulator misbehaves (5xx storm, 429 + retry-after, lost create and
// terminate answers, slow starts, a partial listing, terminates accepted while the pod runs on) and
// each test asserts on the emulator's view (pods, meter, requests received) and on the sponsor's
// SQLite (obligations), not only on what PAIR says.
import type { EngineEmulator } from "@pair/emulators";
import { afterEach, describe, expect, it } from "vitest";
import {
  COLD_START_MS,
  NODE,
  podLines,
  runpodWorld,
  SERVED,
  type RunpodNodeWorld,
} from "../rented/runpod-harness.js";
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

const engines: EngineEmulator[] = [];
// Registered first, so it runs after the worlds' cleanup (afterEach hooks run last registered first).
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});
// A failed test must not leave the exit terminate in a storm.
const worlds = keyringWorlds<RunpodNodeWorld>((w) => w.emu.faults.clear());

async function world(options: Parameters<typeof runpodWorld>[1] = {}): Promise<RunpodNodeWorld> {
  const local = await localEngine();
  engines.push(local.engine);
  const w = worlds.add(await runpodWorld(worlds.ca, { ...options, engines: local.lines }));
  await w.start();
  for (let i = 0; i < 100 && (await chat(w.node, LOCAL_MODEL)).status !== 200; i += 1) await breathe(50);
  return w;
}

/** A first request starts a pod and is served; the pod's id. */
async function podUp(w: RunpodNodeWorld): Promise<string> {
  const served = await w.advanceUntil(chat(w.node, SERVED), COLD_START_MS + 60_000);
  expect(served.status).toBe(200);
  const pods = w.emu.pods.list();
  expect(pods).toHaveLength(1);
  return pods[0]!.wire.id;
}

const hosting = (w: RunpodNodeWorld) => storedHosting(w.dataDir, NODE);
const status = (w: RunpodNodeWorld, podId: string) => w.emu.pods.get(podId)?.wire.status;
const openCount = (w: RunpodNodeWorld) =>
  Object.values(hosting(w).obligations).filter((o) => o.state === "open").length;
const managedOf = async (w: RunpodNodeWorld) =>
  ((await rentedRow(w.node, NODE))["managed"] ?? {}) as Record<string, unknown>;

/** Pods the emulator bills now (every status but TERMINATED: EXITED bills its volume). */
function billing(w: RunpodNodeWorld): { name: string; incarnation: string }[] {
  return w.emu.pods
    .list()
    .filter((p) => p.wire.status !== "TERMINATED")
    .map((p) => ({ name: p.wire.name, incarnation: p.wire.id }));
}

/** The ledger (the node's spend) against the emulator's meter for these pods, in µUSD. */
async function ledgerAndMeter(w: RunpodNodeWorld, podIds: readonly string[]) {
  const m = await managedOf(w);
  const ledger = Math.round(((m["spend_usd"] as { total: number } | null)?.total ?? 0) * 1e6);
  const meter = podIds.reduce((sum, id) => sum + w.emu.meter.totalMicroUsd(id), 0);
  const perSecond = (Number(m["usd_per_hour"]) * 1e6) / 3600;
  return { ledger, meter, perSecond };
}

describe("provider faults: Runpod pods", () => {
  it("5xx storm: the local model and the running pod keep serving; a terminate during it stays open; it converges after", async () => {
    const w = await world();
    const podId = await podUp(w);
    w.emu.faults.failNextCalls(1_000_000, 503);
    await w.advance(30_000, 10_000);
    expect((await chat(w.node, LOCAL_MODEL)).status).toBe(200);
    expect((await chat(w.node, SERVED)).status).toBe(200); // the pod's proxy is up
    const paused = await w.node.runpod.node(NODE)!.pause();
    expect(paused.ok).toBe(false);
    await w.advance(60_000, 10_000);
    expect(status(w, podId)).toBe("RUNNING");
    expectObligationsCover(hosting(w), billing(w));
    expect(openFor(hosting(w), `pair-${NODE}`, podId)).toHaveLength(1);
    expect(String((await managedOf(w))["last_error"])).toContain("stop unconfirmed");

    w.emu.faults.clear(); // the storm ends: the required terminate is retried by reconciliation
    await w.advance(60_000, 10_000);
    expect([undefined, "TERMINATED"]).toContain(status(w, podId)); // terminated (and maybe purged)
    expect(openCount(w)).toBe(0);
    const creates = w.emu.requests().filter((r) => r.method === "POST" && r.path === "/v2/pods");
    expect(creates.filter((r) => r.fault === "none")).toHaveLength(1); // no pod created in or after it
    expectObligationsCover(hosting(w), billing(w));
    const { ledger, meter, perSecond } = await ledgerAndMeter(w, [podId]);
    expect(ledger).toBeGreaterThanOrEqual(meter - perSecond);
  });

  it("429 with retry-after: the sponsor does not ask again inside the window", async () => {
    const w = await world();
    await podUp(w);
    const since = w.emu.requests().length;
    w.emu.faults.rateLimitNext(1, 2);
    await w.node.runpod.tick();
    const limited = w.emu
      .requests()
      .slice(since)
      .find((r) => r.fault === "rate-limit");
    expect(limited).toBeDefined();
    const started = performance.now();
    while (performance.now() - started < 1_500) {
      await w.node.runpod.tick(); // passes keep coming (the sponsor's timer, a waiting request)
      await breathe(50);
    }
    const inWindow = w.emu
      .requests()
      .slice(since)
      .filter((r) => r.atRealMs > limited!.atRealMs && r.atRealMs < limited!.atRealMs + 1_950);
    expect(inWindow).toEqual([]);
    expect((await chat(w.node, SERVED)).status).toBe(200);
  });

  it("a lost create answer: one pod, found by reconciliation, never created twice; the client is served", async () => {
    const w = await world();
    w.emu.faults.loseCreateAnswers(1);
    const since = w.emu.requests().length;
    const answer = await w.advanceUntil(chat(w.node, SERVED), COLD_START_MS + 120_000);
    expect([200, 502, 503, 504]).toContain(answer.status);
    await w.advance(60_000, 10_000);
    const creates = w.emu
      .requests()
      .slice(since)
      .filter((r) => r.method === "POST" && r.path === "/v2/pods");
    expect(creates).toHaveLength(1);
    expect(w.emu.pods.list()).toHaveLength(1);
    expectObligationsCover(hosting(w), billing(w));
    expect((await w.advanceUntil(chat(w.node, SERVED), 60_000)).status).toBe(200);
    expect(w.emu.pods.list()).toHaveLength(1);
  });

  it("a lost terminate answer: the obligation stays open until the pod shows TERMINATED", async () => {
    const w = await world();
    const podId = await podUp(w);
    w.emu.faults.loseTerminateAnswers(1);
    const paused = await w.node.runpod.node(NODE)!.pause();
    expect(status(w, podId)).toBe("TERMINATED"); // carried out, answer lost
    if (!paused.ok) expect(paused.error.message).toContain("stop unconfirmed");
    await w.advance(20_000, 10_000);
    expect(openCount(w)).toBe(0);
    const [obligation] = Object.values(hosting(w).obligations);
    expect(obligation?.evidence?.kind).toMatch(/provider-reported-billing-ended|stop-accepted/);
    expect(w.emu.pods.list()).toHaveLength(1);
  });

  it("slow start: a client gets cold_start_timeout within its budget; the starting pod stays covered and serves later", async () => {
    const w = await world({ coldStartS: 2, pod: podLines(60) }); // idle: 60 min, never reaped here
    w.emu.faults.slowStart(10 * 60_000);
    const refused = await chat(w.node, SERVED); // virtual time stands still: the pod never comes up
    expect(refused.status).toBe(504);
    expect(refused.text).toContain("cold_start_timeout");
    expect(refused.elapsedMs).toBeLessThan(2_000 + 1_500);
    expect((await chat(w.node, LOCAL_MODEL)).status).toBe(200);
    const [pod] = w.emu.pods.list();
    expect(pod).toBeDefined();
    expectObligationsCover(hosting(w), billing(w));
    await w.advance(COLD_START_MS + 10 * 60_000, 10_000);
    expect(status(w, pod!.wire.id)).toBe("RUNNING");
    // Readiness is seen at a pass: once the node says running, the same pod serves, none is added.
    for (let i = 0; i < 30 && (await managedOf(w))["pod_state"] !== "running"; i += 1)
      await w.advance(5_000, 5_000);
    const last = await chat(w.node, SERVED);
    expect(last.status).toBe(200);
    expect(w.emu.pods.list()).toHaveLength(1);
  });

  it("partial listing: a pod missing from the listing is not taken as gone", async () => {
    const w = await world();
    const podId = await podUp(w);
    const ids = Object.keys(hosting(w).deployments);
    w.emu.faults.hideFromListing(podId, 6);
    await w.advance(60_000, 10_000);
    const state = hosting(w);
    expect(Object.keys(state.deployments)).toEqual(ids);
    expect(openFor(state, `pair-${NODE}`, podId)).toHaveLength(1);
    expect(status(w, podId)).toBe("RUNNING");
    expect(w.emu.pods.list()).toHaveLength(1); // not replaced by a second pod
    expect((await chat(w.node, SERVED)).status).toBe(200);
    const { ledger, meter, perSecond } = await ledgerAndMeter(w, [podId]);
    expect(ledger).toBeGreaterThanOrEqual(meter - 10 * perSecond);
  });

  it("terminate accepted but still billing: the obligation stays open, it is retried, the list says so, the ledger accrues", async () => {
    const w = await world();
    const podId = await podUp(w);
    w.emu.faults.ignoreStops();
    const since = w.emu.requests().length;
    const paused = await w.node.runpod.node(NODE)!.pause();
    expect(paused.ok).toBe(false);
    for (let t = 0; t < 4 * 60_000; t += 10_000) {
      await w.advance(10_000, 10_000);
      expectObligationsCover(hosting(w), billing(w)); // billing: one open obligation, at every pass
    }
    expect(status(w, podId)).toBe("RUNNING");
    const deletes = w.emu
      .requests()
      .slice(since)
      .filter((r) => r.method === "DELETE");
    // Retried with a capped backoff (stopRetryMs 10 s, doubling, at most 60 s apart): sent at 0, 10,
    // 30, 70, 130 and 190 s (give or take a 10 s pass) in these 240 s, never a burst, never given up.
    expect(deletes.length).toBeGreaterThanOrEqual(5);
    expect(deletes.length).toBeLessThanOrEqual(7);
    expect(String((await managedOf(w))["last_error"])).toContain("stop unconfirmed");
    let { ledger, meter, perSecond } = await ledgerAndMeter(w, [podId]);
    expect(ledger).toBeGreaterThanOrEqual(meter - 10 * perSecond); // still accruing

    w.emu.faults.ignoreStops(false);
    await w.advance(60_000, 10_000);
    expect([undefined, "TERMINATED"]).toContain(status(w, podId));
    expect(openCount(w)).toBe(0);
    expect(String((await managedOf(w))["last_error"])).not.toContain("stop unconfirmed");
    ({ ledger, meter, perSecond } = await ledgerAndMeter(w, [podId]));
    expect(ledger).toBeGreaterThanOrEqual(meter - 10 * perSecond);
  });
});
