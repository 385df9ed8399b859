// Issue 7's chain for an endpoint PAIR created itself (`pair rented create` through the CLI, emulator over
// HTTPS, real keyring, virtual time): create → running and served → idle pause → a request wakes it
// (Jobs shows warming) → budget cap pause (ineligible with the reason, budget_exceeded, spend at most one
// billed minute over the cap) → a fresh day, resumed, then paused at sponsor exit. At every stage the
// ledger is never under the emulator's meter, and at most one billed minute per billing stretch over it.
// A second managed node in the same namespace (attached from config) is never touched by the created
// node's reconciliation, nor the reverse.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HuggingFaceEmulator } from "@pair/emulators";
import type { HttpsEndpointsTransport } from "@pair/huggingface";
import { granulesCostMicroUsd } from "@pair/ledger";
import { liveRecords } from "@pair/provision";
import type { TestCa } from "@pair/testkit";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { startCli } from "../cli/cli-harness.js";
import { uniqueName } from "../credentials/secret-service.js";
import { until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { expectLedgerCoversMeter, stretchMinutes } from "./meter-bound.js";
import { sponsorNodeOptions } from "../support/sponsor-options.js";
import { chatReply } from "../support/chat.js";
import { hfForAlice } from "../support/hf-alice.js";

const TOKEN = fakeHfToken();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const MODEL = "Qwen/Qwen3-0.6B";
const CREATED = "qwen-t4"; // node and endpoint name of what PAIR creates
const OTHER = "other-hf"; // the attached managed node, endpoint alice/other
const T4_MICRO_USD_PER_HOUR = 500_000;
const CAP_USD = 0.15;
const ENV = { PAIR_RENTED_POLL_MS: "20" };

interface World {
  readonly hf: HuggingFaceEmulator;
  readonly api: HttpsEndpointsTransport;
  readonly credential: string;
  readonly configFile: string;
  readonly log: string[];
  node: RunningNode;
  start(): Promise<RunningNode>;
  cleanup(): Promise<void>;
}

/** The create harness's sponsor, plus a configured managed node on another endpoint of `alice`. */
async function chainWorld(ca: TestCa): Promise<World> {
  const { hf, api } = await hfForAlice(ca, TOKEN);
  const dir = mkdtempSync(join(tmpdir(), "pair-chain-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const ref: CredentialRef = { service: "pair", account: uniqueName("chain") };
  const credential = `os-credential-store:${ref.service}/${ref.account}`;
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(ref, new Redacted(TOKEN, "test token"));
  const configText = (port: number) =>
    [
      "node:",
      "  name: sponsor",
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      "  cluster_listen: 127.0.0.1:14323",
      "  discovery: { mdns: false }",
      "engines: []",
      "rented_nodes:",
      `  - name: ${OTHER}`,
      "    provider: huggingface-endpoint",
      "    endpoint: alice/other",
      `    credential: ${credential}`,
      "    lifecycle: { managed: true, idle_pause_min: 10080, pause_on_sponsor_exit: false }",
      "    budget: { unlimited: true }",
      "providers:",
      "  huggingface:",
      `    endpoints_api: ${hf.endpointsApiUrl}`,
      `    hub_api: ${hf.hubApiUrl}`,
      `    catalog_api: ${hf.catalogApiUrl}`,
      "tls:",
      `  extra_ca_file: ${caFile}`,
    ].join("\n");
  const configFile = join(dir, "pair.yaml");
  const log: string[] = [];
  let closed = false;
  const world: World = {
    hf,
    api,
    credential,
    configFile,
    log,
    node: undefined as unknown as RunningNode,
    start: async () => {
      const config = parseConfig(configText(11434), "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
      world.node = await startNode({
        config,
        ...sponsorNodeOptions({ log, wallMs: () => hf.nowMs() }),
      });
      writeFileSync(configFile, configText(world.node.port));
      return world.node;
    },
    cleanup: async () => {
      if (closed) return;
      closed = true;
      await world.node?.close(200).catch(() => undefined);
      await api.close();
      await hf.close();
      await store.delete(ref).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

const worlds = keyringWorlds<World>();

/** Move virtual time in steps, with a managed pass after each. */
async function advance(w: World, ms: number, stepMs = 10_000): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    w.hf.advance(Math.min(stepMs, ms - t));
    await w.node.managed.tick();
  }
}

/**
 * Move virtual time in the background (5 s per 20 ms) until `done` settles; note what `seen` sees.
 * Time stands still until the created node holds a live spell: the ledger opens its billing grid when
 * the create/resume answer arrives, the emulator's meter when the call arrives (see the report), so a
 * jump of virtual time inside that round trip would put them a minute apart.
 */
async function whileAdvancing<T>(w: World, done: Promise<T>, seen: () => void = () => {}): Promise<T> {
  let finished = false;
  void done.finally(() => (finished = true));
  await until(() => finished || spell(w) !== undefined, 10_000);
  for (let i = 0; i < 1_000 && !finished; i += 1) {
    w.hf.advance(5_000);
    await new Promise((r) => setTimeout(r, 20));
    seen();
  }
  return done;
}

const chat = (w: World) => chatReply(w.node.url, { model: MODEL, maxTokens: 3 });

async function rentedRow(w: World, name: string): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name) ?? {};
}

/** The created node's live spell on a known endpoint, if any. */
function spell(w: World) {
  const node = w.node.managed.node(CREATED);
  return node === undefined ? undefined : liveRecords(node.controller.state).find((r) => r.key !== undefined);
}

const state = (w: World, name: string) => w.hf.endpoints.get("alice", name)?.state;

/**
 * The emulator's billed minutes, after a pass; the ledger's total for the node is never under them and
 * at most one billed minute per billing stretch over them: a stretch that began between two looks (a
 * pass, or a wake's poll, less than a minute apart) is billed from the idle look before it (the
 * cautious start, docs/ledger.md; meter-bound.ts).
 */
async function meterEqualsLedger(w: World, node: string, endpoint: string, microUsdPerHour: number) {
  await w.node.managed.tick();
  const minutes = stretchMinutes(w.hf, "alice", endpoint);
  expectLedgerCoversMeter(w.node.managed.view(node)?.spend_usd?.total, minutes, microUsdPerHour);
  return minutes.reduce((a, b) => a + b, 0);
}

/** The attached node's endpoint was never paused nor deleted (HF's own scale-to-zero may have run). */
function untouched(w: World): void {
  expect(["running", "scaledToZero"]).toContain(state(w, "other"));
  expect(w.log.some((l) => l.includes(`rented node ${OTHER}`) && l.includes("paus"))).toBe(false);
}

/** Each node's controller holds exactly its own endpoint, never the other's. */
function ownOnly(w: World): void {
  for (const [node, endpoint] of [
    [CREATED, CREATED],
    [OTHER, "other"],
  ] as const) {
    const live = liveRecords(w.node.managed.node(node)!.controller.state);
    expect(live.map((r) => r.key?.name)).toEqual([endpoint]);
  }
}

describe("a created endpoint, end to end", () => {
  it("create → served → idle pause → wake → budget pause → fresh day → exit pause; ledger ≥ meter; the other node untouched", async () => {
    const w = worlds.add(await chainWorld(worlds.ca));
    await w.api.createEndpoint("alice", {
      name: "other",
      accessType: "private",
      vendor: "aws",
      region: "us-east-1",
      accelerator: "gpu",
      instanceType: "nvidia-l4",
      instanceSize: "x1",
      minReplica: 0,
      maxReplica: 1,
      scaleToZeroTimeoutMin: 15,
      repository: "meta-llama/Llama-3.2-1B-Instruct",
    });
    await w.start();

    // 1. Create through the CLI: pending → initializing → running, then served.
    const run = startCli(
      [
        "rented",
        "create",
        CREATED,
        "--repo",
        MODEL,
        "--gpu",
        "T4",
        "--usd-per-day",
        String(CAP_USD),
        "--idle-pause-min",
        "5",
        "--credential",
        w.credential,
        "--config",
        w.configFile,
      ],
      { env: ENV },
    );
    const created = await whileAdvancing(w, run.done);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split("\n").at(-1)).toMatch(/^running .* is in the cluster inventory$/);
    expect((await chat(w)).status).toBe(200);
    await w.node.managed.tick();
    expect(state(w, CREATED)).toBe("running");
    untouched(w);
    ownOnly(w);
    await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR);

    // 2. Idle: no PAIR workload for idle_pause_min (5) → paused by PAIR, not scaled to zero.
    await advance(w, 4 * MIN);
    expect(state(w, CREATED)).toBe("running");
    await advance(w, 90_000);
    expect(state(w, CREATED)).toBe("paused");
    expect(w.node.managed.view(CREATED)).toMatchObject({ paused_by: "idle", open_obligations: 0 });
    untouched(w);
    const idleMinutes = await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR);
    await advance(w, 2 * MIN); // paused bills nothing
    expect(w.hf.meter.billedMinutes("alice", CREATED)).toBe(idleMinutes);

    // 3. A request wakes it; the Jobs list shows the job warming; it is served.
    let warming = false;
    const woke = await whileAdvancing(w, chat(w), () => {
      warming ||= w.node.history.running().some((j) => j.warming);
    });
    expect(woke.status).toBe(200);
    expect(warming).toBe(true);
    expect(state(w, CREATED)).toBe("running");
    untouched(w);
    ownOnly(w);
    await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR);

    // 4. Busy until the daily cap: paused by budget, ineligible with the reason, budget_exceeded.
    for (let i = 0; i < 40 && state(w, CREATED) !== "paused"; i += 1) {
      await advance(w, 30_000);
      if (state(w, CREATED) === "running") expect((await chat(w)).status).toBe(200);
    }
    expect(state(w, CREATED)).toBe("paused");
    const view = w.node.managed.view(CREATED);
    expect(view).toMatchObject({ paused_by: "budget-exceeded", budget_exceeded: true, open_obligations: 0 });
    const row = await rentedRow(w, CREATED);
    expect(row).toMatchObject({ eligible: false });
    expect(String(row["reason"])).toContain("budget");
    const refused = await chat(w);
    expect(refused.status).toBe(429);
    expect(JSON.stringify(refused.json())).toContain("budget_exceeded");
    const capMinutes = await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR);
    const oneMinuteUsd = granulesCostMicroUsd(1, MIN, T4_MICRO_USD_PER_HOUR) / 1e6;
    expect(granulesCostMicroUsd(capMinutes, MIN, T4_MICRO_USD_PER_HOUR) / 1e6).toBeLessThanOrEqual(
      CAP_USD + oneMinuteUsd,
    );
    expect(view?.spend_usd?.today).toBeLessThanOrEqual(CAP_USD + oneMinuteUsd);
    expect(await w.node.managed.act(CREATED, "resume")).toMatchObject({
      ok: false,
      error: { code: "budget_exceeded" },
    });
    untouched(w);

    // 5. A fresh day (UTC): resume is allowed again; then the sponsor exits and pauses what it owns.
    await advance(w, DAY - (w.hf.nowMs() % DAY) + MIN, 30 * MIN);
    expect(state(w, CREATED)).toBe("paused");
    expect(w.hf.meter.billedMinutes("alice", CREATED)).toBe(capMinutes);
    expect(w.node.managed.view(CREATED)).toMatchObject({ budget_exceeded: false });
    expect(await w.node.managed.act(CREATED, "resume")).toMatchObject({ ok: true });
    await advance(w, 2 * MIN);
    expect(state(w, CREATED)).toBe("running");
    expect((await chat(w)).status).toBe(200);
    ownOnly(w);
    await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR);

    await w.node.close(200);
    expect(state(w, CREATED)).toBe("paused");
    untouched(w); // its own pause_on_sponsor_exit is off
    expect(w.log.some((l) => l.includes("paused at sponsor exit"))).toBe(true);
    const exitMinutes = w.hf.meter.billedMinutes("alice", CREATED);

    // Read back after a restart: the ledger restored from SQLite equals the meter, nothing was woken.
    await w.start();
    await w.node.managed.tick();
    expect(state(w, CREATED)).toBe("paused");
    untouched(w);
    expect(await meterEqualsLedger(w, CREATED, CREATED, T4_MICRO_USD_PER_HOUR)).toBe(exitMinutes);
    // Paused: the created node holds no live spell; the attached one still holds exactly its own.
    expect(spell(w)).toBeUndefined();
    expect(liveRecords(w.node.managed.node(OTHER)!.controller.state).map((r) => r.key?.name)).toEqual([
      "other",
    ]);
  }, 60_000);
});
