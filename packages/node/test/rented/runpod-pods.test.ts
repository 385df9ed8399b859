// A managed Runpod node (`provider: runpod` with a `pod:` section) over HTTPS against the Runpod
// emulator, with the real keyring and virtual time: the first request starts one pod and is served
// (streamed); concurrent cold requests make exactly one create; no capacity on the first GPU type uses
// the second; idle pods are terminated (never while a request is in flight); the budget cap terminates
// with `budget_exceeded` and the ledger matches the emulator's meter; sponsor exit terminates; a
// restart adopts a live pod; a foreign pod is never touched; the vLLM key never leaves the process.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { HttpsRunpodTransport, RedactedString, RunpodProvider, runpodModelSettings } from "@pair/runpod";
import { SYSTEM_RUNTIME } from "@pair/cluster";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { RunpodPodNode } from "../../src/config/index.js";
import { runpodModelOf } from "@pair/sponsor";
import {
  chat,
  COLD_START_MS,
  NODE,
  podLines,
  runpodWorld,
  SERVED,
  type RunpodNodeWorld,
} from "./runpod-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const worlds = keyringWorlds<RunpodNodeWorld>();

async function world(options: Parameters<typeof runpodWorld>[1] = {}): Promise<RunpodNodeWorld> {
  const w = worlds.add(await runpodWorld(worlds.ca, options));
  await w.start();
  return w;
}

async function rentedRow(w: RunpodNodeWorld): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE) ?? {};
}

function livePods(w: RunpodNodeWorld) {
  return w.emu.pods.list().filter((p) => p.wire.status !== "TERMINATED");
}

function managedOf(row: Record<string, unknown>): Record<string, unknown> {
  return (row["managed"] ?? {}) as Record<string, unknown>;
}

describe("Runpod pods on demand", () => {
  it("starts one pod for the first request, streams its answer, shows cold → starting → running", async () => {
    const w = await world();
    expect(managedOf(await rentedRow(w))["pod_state"]).toBe("cold");
    expect((await rentedRow(w))["state"]).toBe("scaled_to_zero");
    expect((await rentedRow(w))["eligible"]).toBe(true);
    const answer = chat(w, true);
    await w.advanceUntil(
      (async () => {
        for (;;) {
          if (w.emu.pods.list().length > 0) return;
          await new Promise((r) => setTimeout(r, 10));
        }
      })(),
      10_000,
      1,
    );
    expect(managedOf(await rentedRow(w))["pod_state"]).toBe("starting");
    const done = await w.advanceUntil(answer, COLD_START_MS + 60_000);
    expect(done.status).toBe(200);
    expect(done.text).toContain("data: ");
    expect(done.text).toContain("[DONE]");
    expect(w.emu.pods.list()).toHaveLength(1);
    const row = await rentedRow(w);
    expect(row["state"]).toBe("running");
    expect(row["label"]).toBe("Rented · off-LAN");
    expect(managedOf(row)["pod_state"]).toBe("running");
    // $/hr from the placed GPU type: L40S 0.79 + 70 GB of disks at $0.10/GB-month.
    expect(managedOf(row)["usd_per_hour"]).toBeCloseTo(0.79 + (70 * 0.1) / 720, 5);
    // A second request is served by the same pod, no create.
    expect((await chat(w, false)).status).toBe(200);
    expect(w.emu.pods.list()).toHaveLength(1);
    // History records both off-LAN, served by the rented node, with an estimated cost at its $/hr.
    const history = (await (
      await fetch(`${w.node.url}/pair/v1/history`, {
        headers: { authorization: `Bearer ${w.node.adminToken}` },
      })
    ).json()) as { serving_node: string; off_lan: boolean; est_cost_usd: number }[];
    expect(history).toHaveLength(2);
    for (const h of history) expect(h).toMatchObject({ serving_node: NODE, off_lan: true });
    expect(history.some((h) => h.est_cost_usd > 0)).toBe(true);
  });

  it("five concurrent cold requests make exactly one create", async () => {
    const w = await world();
    const answers = Promise.all(Array.from({ length: 5 }, () => chat(w, false)));
    // While the one pod starts, the Jobs list shows all five waiting, warming.
    const warming = async () => {
      const res = await fetch(`${w.node.url}/pair/v1/jobs`, {
        headers: { authorization: `Bearer ${w.node.adminToken}` },
      });
      return ((await res.json()) as { warming: boolean }[]).filter((j) => j.warming).length;
    };
    let seen = 0;
    for (let i = 0; i < 100 && seen < 5; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await warming();
    }
    expect(seen).toBe(5);
    const done = await w.advanceUntil(answers, COLD_START_MS + 60_000);
    expect(done.map((d) => d.status)).toEqual([200, 200, 200, 200, 200]);
    expect(w.emu.pods.list()).toHaveLength(1);
  });

  it("no capacity on the first GPU type: the second is used and priced", async () => {
    const w = await world({
      pod: [
        `      model: ${SERVED}`,
        "      vllm_model: Qwen/Qwen2.5-7B-Instruct",
        "      gpu_types: [NVIDIA L40S, NVIDIA A40]",
        "      image: vllm/vllm-openai:v0.11.0",
        "      container_disk_gb: 20",
        "      api_key_secret: vllm_key",
      ],
    });
    // Before any pod: the catalogue's most expensive type (L40S 0.79 > A40 0.35) plus its disk.
    const before = managedOf(await rentedRow(w));
    expect(before["usd_per_hour"]).toBeCloseTo(0.79 + (20 * 0.1) / 720, 5);
    expect(before["price_warning"]).toBeNull();
    // Before any pod says what it got, the GPU shown is the first one asked for.
    expect((await rentedRow(w))["gpu"]).toBe("NVIDIA L40S ×1");
    w.emu.faults.outOfCapacity("NVIDIA L40S");
    const done = await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000);
    expect(done.status).toBe(200);
    const pods = w.emu.pods.list();
    expect(pods).toHaveLength(1);
    expect(pods[0]?.wire.gpu?.id).toBe("NVIDIA A40");
    const placed = await rentedRow(w);
    const m = managedOf(placed);
    // The GPU the pod reports (the fallback type), not the one asked for first.
    expect(m["gpu"]).toBe("NVIDIA A40 ×1");
    expect(placed["gpu"]).toBe("NVIDIA A40 ×1");
    expect(m["usd_per_hour"]).toBeCloseTo(0.35 + (20 * 0.1) / 720, 5);
  });

  it("shows the GPU type and count the pod reports, in pair rented and pair nodes", async () => {
    const w = await world({ pod: [...podLines(), "      gpu_count: 2"] });
    const done = await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000);
    expect(done.status).toBe(200);
    expect(w.emu.pods.list()[0]?.wire.gpu).toEqual({ id: "NVIDIA L40S", count: 2 });
    expect((await rentedRow(w))["gpu"]).toBe("NVIDIA L40S ×2");
    const nodes = (await (
      await fetch(`${w.node.url}/pair/v1/nodes`, {
        headers: { authorization: `Bearer ${w.node.adminToken}` },
      })
    ).json()) as Record<string, unknown>[];
    expect(nodes.find((n) => n["name"] === NODE)).toMatchObject({ kind: "rented", gpu: "NVIDIA L40S ×2" });
  });

  it("an idle pod is terminated, never while a request is in flight", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    // A stream lease (what a request in flight holds) keeps the pod past the idle timeout (5 min).
    const lease = w.node.runpod.node(NODE)?.supervisor.openStream(SERVED);
    expect(lease).toBeDefined();
    await w.advance(10 * 60_000);
    expect(livePods(w).map((p) => p.wire.id)).toEqual([podId]);
    lease?.release();
    await w.advance(6 * 60_000);
    expect(livePods(w)).toHaveLength(0);
    expect(managedOf(await rentedRow(w))["pod_state"]).toBe("cold");
    expect(managedOf(await rentedRow(w))["open_obligations"]).toBe(0);
  });

  it("a request in flight holds the pod past the idle timeout; it is terminated once idle", async () => {
    const w = await world({ emulator: { tokenDelayMs: 150 } });
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    let open = true;
    const streaming = chat(w, true).finally(() => (open = false));
    await new Promise((r) => setTimeout(r, 100));
    // 12 min of virtual time (idle timeout 5 min) pass while the stream is open.
    for (let i = 0; i < 12 && open; i += 1) await w.advance(60_000, 60_000);
    expect(open, "the stream lasted through the advance").toBe(true);
    expect(livePods(w).map((p) => p.wire.id)).toEqual([podId]);
    expect((await streaming).status).toBe(200);
    await w.advance(6 * 60_000);
    expect(livePods(w)).toHaveLength(0);
  });

  it("pause terminates and refuses new pods (rented_node_paused) until resume", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
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
    expect(paused.json).toMatchObject({ name: NODE, state: "paused", eligible: false });
    await w.advance(60_000);
    expect(livePods(w)).toHaveLength(0);
    expect((await chat(w, false)).text).toContain("rented_node_paused");
    expect(livePods(w)).toHaveLength(0);
    const resumed = await lifecycle("resume");
    expect(resumed.json).toMatchObject({ name: NODE, eligible: true });
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    expect(livePods(w)).toHaveLength(1);
  });

  it("the budget cap terminates the pod, refuses with budget_exceeded; the ledger matches the meter", async () => {
    const w = await world({ pod: podLines(120), lines: ["    budget: { usd_per_day: 0.5 }"] });
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    // 0.80 $/h: the cap is reached after ~37.5 min.
    await w.advance(45 * 60_000, 10_000);
    expect(livePods(w)).toHaveLength(0);
    const row = await rentedRow(w);
    expect(row["eligible"]).toBe(false);
    expect(String(row["reason"])).toContain("budget");
    const refused = await chat(w, false);
    expect(refused.text).toContain("budget_exceeded");
    expect(livePods(w)).toHaveLength(0); // no new pod
    const m = managedOf(row);
    const spend = m["spend_usd"] as { total: number };
    const meter = w.emu.meter.totalMicroUsd(podId) / 1_000_000;
    const perSecond = Number(m["usd_per_hour"]) / 3600;
    expect(Math.abs(spend.total - meter)).toBeLessThanOrEqual(perSecond + 1e-6);
  });

  it("knows usd_per_hour from the GPU catalogue before the first request", async () => {
    const w = await world();
    const m = managedOf(await rentedRow(w));
    expect(w.emu.pods.list()).toHaveLength(0);
    // L40S at 0.79 $/h + 50 GB disk + 20 GB volume at $0.10 per GB-month.
    expect(m["usd_per_hour"]).toBeCloseTo(0.79 + (70 * 0.1) / 720, 6);
    expect(m["price_warning"]).toBeNull();
  });

  it("a budget smaller than one second of its price refuses the FIRST pod with budget_exceeded, creating nothing", async () => {
    const w = await world({ lines: ["    budget: { usd_per_day: 0.0001 }"] });
    const refused = await w.advanceUntil(chat(w, false), 60_000);
    expect(refused.text).toContain("budget_exceeded");
    expect(refused.text).toContain("usd_per_day");
    expect(w.emu.pods.list()).toHaveLength(0); // no create reached the emulator
  });

  it("a catalogue that cannot be read: today's behaviour (price unknown) with a warning, priced once it answers", async () => {
    const w = worlds.add(await runpodWorld(worlds.ca));
    w.emu.faults.failCatalog(true, 503);
    await w.start();
    const m = managedOf(await rentedRow(w));
    expect(m["usd_per_hour"]).toBeNull();
    expect(String(m["price_warning"])).toMatch(/GPU catalogue could not be read.*budget cannot refuse/);
    expect(w.log.some((l) => l.includes("GPU catalogue could not be read"))).toBe(true);
    w.emu.faults.failCatalog(false);
    await w.advance(1_000, 1_000); // the next pass reads it again
    const priced = managedOf(await rentedRow(w));
    expect(priced["usd_per_hour"]).toBeCloseTo(0.79 + (70 * 0.1) / 720, 6);
    expect(priced["price_warning"]).toBeNull();
  });

  it("sponsor exit terminates the pod (TERMINATED in the emulator)", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    await w.node.close(200);
    const pod = w.emu.pods.get(podId);
    expect(pod === undefined || pod.wire.status === "TERMINATED").toBe(true);
    expect(w.log.join("\n")).toContain("every pod terminated at sponsor exit");
  });

  it("an exit whose termination is not confirmed stays open and is terminated at the next start", async () => {
    const w = await world({ lifecycle: "{ exit_timeout_s: 0.3 }" });
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    w.emu.faults.failNextCalls(1_000, 503);
    await w.node.close(200);
    expect(w.emu.pods.get(podId)?.wire.status).toBe("RUNNING");
    expect(w.log.join("\n")).toContain("not confirmed");
    w.emu.faults.clear();
    await w.start();
    await w.advance(60_000, 10_000);
    const pod = w.emu.pods.get(podId);
    expect(pod === undefined || pod.wire.status === "TERMINATED").toBe(true);
    expect(managedOf(await rentedRow(w))["open_obligations"]).toBe(0);
  });

  it("a restart adopts the live pod: served again without a second create", async () => {
    const w = await world({ lifecycle: "{ pause_on_sponsor_exit: false }" });
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    await w.node.close(200);
    expect(livePods(w)).toHaveLength(1);
    await w.start();
    const again = await w.advanceUntil(chat(w, false), 60_000);
    expect(again.status).toBe(200);
    expect(w.emu.pods.list().map((p) => p.wire.id)).toEqual([podId]);
  });

  it("a crash-looping pod is terminated; the next request starts a fresh one", async () => {
    const w = await world();
    w.emu.faults.crashLoopNewPods(true);
    const failed = await w.advanceUntil(chat(w, false), 15 * 60_000);
    expect(failed.status).not.toBe(200);
    const crashed = w.emu.pods.list()[0];
    expect(crashed?.crashRestarts).toBeGreaterThan(3);
    await w.advance(60_000);
    expect(livePods(w)).toHaveLength(0);
    w.emu.faults.crashLoopNewPods(false);
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const live = livePods(w);
    expect(live).toHaveLength(1);
    expect(live[0]?.wire.id).not.toBe(crashed?.wire.id);
  });

  it("sweeps a pod with its own owner tag that no record holds; never touches another owner's", async () => {
    const w = await world();
    const ownTag = `pair-${w.node.cluster.identity.nodeId}-${NODE}`;
    const ours = await leftPod(w, ownTag, "left-1");
    const theirs = await leftPod(w, "pair-someone-else", "left-2");
    await w.advance(2 * 60_000);
    const swept = w.emu.pods.get(ours);
    expect(swept === undefined || swept.wire.status === "TERMINATED").toBe(true);
    expect(w.emu.pods.get(theirs)?.wire.status).toBe("RUNNING");
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    await w.node.close(200);
    expect(w.emu.pods.get(theirs)?.wire.status).toBe("RUNNING");
  });
});

/** A pod named like the node's, made outside this sponsor with the given owner tag; its id. */
async function leftPod(w: RunpodNodeWorld, ownerTag: string, requestId: string): Promise<string> {
  const transport = new HttpsRunpodTransport({
    baseUrl: w.emu.apiBaseUrl,
    apiKey: new RedactedString(w.apiKey, "test Runpod key"),
    extraCaPem: worlds.ca.certPem,
  });
  try {
    const provider = new RunpodProvider({ transport, account: NODE, clock: SYSTEM_RUNTIME.clock });
    const model = runpodModelOf(parsedNode(w));
    const out = await provider.create({
      spec: {
        provider: "runpod",
        account: NODE,
        name: `pair-${NODE}`,
        model: SERVED,
        hardware: "NVIDIA A40",
        settings: runpodModelSettings({ ...model, gpuTypes: ["NVIDIA A40"] }),
      },
      requestId,
      ownerTag,
      epoch: 1,
    });
    if (out.kind !== "created") throw new Error(JSON.stringify(out));
    w.emu.advance(0);
    return out.report.key.incarnation;
  } finally {
    await transport.close();
  }
}

function parsedNode(w: RunpodNodeWorld): RunpodPodNode {
  const node = w.node.runpod.node(NODE);
  if (node === undefined) throw new Error("no managed node");
  return node.config;
}

describe("a pod node whose vLLM key is not stored", () => {
  it("is shown as credential_unavailable with the command to fix it, and never creates a pod", async () => {
    const w = await world({ storeVllmKey: false });
    const row = await rentedRow(w);
    expect(row).toMatchObject({ state: "credential_unavailable", eligible: false });
    expect(String(row["reason"])).toContain("pair credential set");
    const refused = await chat(w, false);
    expect(refused.status).not.toBe(200);
    expect(refused.text).toContain("rented_node_ineligible");
    expect(w.emu.pods.list()).toHaveLength(0);
  });
});

describe("the vLLM key stays in the process", () => {
  it("never appears in the data dir, the log, or the views", async () => {
    const w = await world();
    expect((await w.advanceUntil(chat(w, true), COLD_START_MS + 60_000)).status).toBe(200);
    const views = JSON.stringify([await rentedRow(w), w.node.runpod.node(NODE)?.view()]);
    await w.node.close(200);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk(w.dataDir);
    expect(files.length).toBeGreaterThan(0);
    for (const secret of [w.vllmKey, w.apiKey]) {
      for (const f of files) expect(readFileSync(f).includes(secret), f).toBe(false);
      expect(w.log.join("\n")).not.toContain(secret);
      expect(views).not.toContain(secret);
    }
    // The pod got a secret reference, never the value, in its env as listed.
    const env = JSON.stringify(w.emu.pods.list()[0]?.wire.env ?? {});
    expect(env).not.toContain(w.vllmKey);
  });
});
