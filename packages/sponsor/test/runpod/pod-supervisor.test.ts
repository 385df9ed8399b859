// RunpodPodSupervisor driven through HostingController + MemoryHostingStore against the Runpod
// emulator over HTTPS, in virtual time: single flight, lost create reconciled, crash loop, refused
// key, startup deadline, adoption after restart, idle reaping, orphan sweep, EXITED replaced.
// Every terminate must leave no open obligation and a TERMINATED pod that bills nothing more.
import type { AcquireResult } from "../../src/runpod/pod-supervisor.js";
import { afterEach, describe, expect, it } from "vitest";
import { OWNER, VLLM_KEY, specOf } from "../../../runpod/test/adapter/runpod-harness.js";
import { supervised, type SupervisedWorld } from "./supervisor-harness.js";

const worlds: SupervisedWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});
async function world(options: Parameters<typeof supervised>[0] = {}) {
  const w = await supervised(options);
  worlds.push(w);
  return w;
}

/** Resolve-tracking wrapper: has the promise settled yet? */
function track(p: Promise<AcquireResult>) {
  const t: { result?: AcquireResult } = {};
  void p.then((r) => (t.result = r));
  return t;
}
// Emulator defaults: provision 5 s + image pull 60 s + model load 120 s.
const COLD_START_MS = 185_000;

function ready(r: AcquireResult | undefined) {
  if (r?.kind !== "ready") throw new Error(`expected ready, got ${JSON.stringify(r)}`);
  return r;
}

/** The pod is TERMINATED (or gone), its obligation closed by evidence, and it bills nothing more. */
function expectTerminated(w: SupervisedWorld, podId: string) {
  const pod = w.emu.pods.get(podId);
  expect(pod === undefined || pod.wire.status === "TERMINATED").toBe(true);
  const before = w.emu.meter.totalMicroUsd(podId);
  w.advance(3_600_000);
  expect(w.emu.meter.totalMicroUsd(podId)).toBe(before);
  const discharged = w.events.filter(
    (e) => e.type === "ObligationDischarged" && e.key?.incarnation === podId,
  );
  expect(discharged, `obligation for ${podId} closed by evidence`).toHaveLength(1);
}

describe("RunpodPodSupervisor: single flight", () => {
  it("starts one pod for concurrent callers of a cold model; all wait on the same start", async () => {
    const w = await world();
    expect(w.supervisor.state("qwen")).toBe("cold");
    const calls = [w.supervisor.acquire("qwen"), w.supervisor.acquire("qwen"), w.supervisor.acquire("qwen")];
    const tracked = calls.map(track);
    expect(w.supervisor.state("qwen")).toBe("starting");
    await w.supervisor.settled();
    expect(w.emu.pods.list()).toHaveLength(1);
    await w.run(COLD_START_MS - 10_000);
    expect(tracked.every((t) => t.result === undefined)).toBe(true);
    expect(w.supervisor.state("qwen")).toBe("starting");
    await w.run(60_000, () => tracked.every((t) => t.result !== undefined));
    const results = await Promise.all(calls);
    const keys = new Set(results.map((r) => ready(r).key.incarnation));
    expect(keys.size).toBe(1);
    expect(w.emu.pods.list()).toHaveLength(1);
    expect(w.supervisor.state("qwen")).toBe("ready");
    // A later caller gets the ready pod at once, no create.
    const later = ready(await w.supervisor.acquire("qwen"));
    expect(later.key.incarnation).toBe([...keys][0]);
    expect(w.emu.pods.list()).toHaveLength(1);
    // The address serves the model with the key.
    const res = await fetchModels(w, later.address);
    expect(res).toContain('"qwen"');
  });

  it("falls back to the next GPU type when the first has no capacity", async () => {
    const w = await world({ model: { gpuTypes: ["NVIDIA L40S", "NVIDIA A40"] } });
    w.emu.faults.outOfCapacity("NVIDIA L40S");
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const r = ready(t.result);
    expect(w.emu.pods.get(r.key.incarnation)?.wire.gpu?.id).toBe("NVIDIA A40");
  });

  it("tells every waiter at once when Runpod refuses all declared GPU types, and creates nothing", async () => {
    const w = await world();
    w.emu.faults.outOfCapacity("NVIDIA L40S");
    const [a, b] = await Promise.all([w.supervisor.acquire("qwen"), w.supervisor.acquire("qwen")]);
    expect(a).toMatchObject({ kind: "failed" });
    expect(a?.kind === "failed" && a.reason).toMatch(/no_capacity/);
    expect(b).toEqual(a);
    expect(w.emu.pods.list()).toEqual([]);
  });
});

describe("RunpodPodSupervisor: lost create", () => {
  it("a lost create answer is reconciled by request id: the waiters get that pod, no second create", async () => {
    const w = await world();
    w.emu.faults.loseCreateAnswers(1);
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(1_000, undefined, 1_000);
    const records = Object.values(w.store.load().deployments);
    expect(records.map((d) => d.phase)).toEqual(["Requested"]); // bound by request id already
    expect(w.supervisor.state("qwen")).toBe("starting");
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const r = ready(t.result);
    expect(w.emu.pods.list().map((pod) => pod.wire.id)).toEqual([r.key.incarnation]);
  });
});

describe("RunpodPodSupervisor: crash recovery", () => {
  it("terminates a crash-looping pod (restarts over the limit), fails the waiters, and the next request starts a fresh one", async () => {
    const w = await world();
    w.emu.faults.crashLoopNewPods(true);
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(400_000, () => t.result !== undefined);
    const r = t.result;
    if (r === undefined) throw new Error("acquire never answered");
    expect(r.kind).toBe("failed");
    expect(r.kind === "failed" && r.reason).toMatch(/restarted 3 times/);
    const crashed = w.emu.pods.list()[0];
    expect(crashed?.crashRestarts).toBeGreaterThanOrEqual(3);
    expectTerminated(w, crashed?.wire.id ?? "");
    expect(w.openObligationCount()).toBe(0);

    w.emu.faults.clear();
    const again = w.supervisor.acquire("qwen");
    const t2 = track(again);
    await w.run(COLD_START_MS + 10_000, () => t2.result !== undefined);
    const fresh = ready(t2.result);
    expect(fresh.key.incarnation).not.toBe(crashed?.wire.id);
  });

  it("terminates a pod that refuses the vLLM key", async () => {
    const w = await world({ probeKey: "sk-not-the-pods-key" });
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const r = t.result;
    if (r === undefined) throw new Error("acquire never answered");
    expect(r.kind === "failed" && r.reason).toMatch(/refused the vLLM API key/);
    expect(r.kind === "failed" && r.reason).not.toContain("sk-");
    expectTerminated(w, w.emu.pods.list()[0]?.wire.id ?? "");
    expect(w.openObligationCount()).toBe(0);
  });

  it("terminates a pod that misses its startup deadline", async () => {
    const w = await world({ model: { startupDeadlineMs: 300_000 } });
    w.emu.faults.slowStart(600_000);
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(310_000, () => t.result !== undefined);
    const r = t.result;
    if (r === undefined) throw new Error("acquire never answered");
    expect(r.kind === "failed" && r.reason).toMatch(/not serving 300000 ms after its create/);
    expectTerminated(w, w.emu.pods.list()[0]?.wire.id ?? "");
  });

  it("EXITED without a request: terminated (it still bills its volume) and replaced on the next request", async () => {
    const w = await world();
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const first = ready(t.result);
    w.emu.faults.exitPod(first.key.incarnation);
    const tick = await w.supervisor.tick();
    expect(tick.terminated.map((d) => d.why)).toEqual([expect.stringMatching(/EXITED/)]);
    expectTerminated(w, first.key.incarnation);
    const again = w.supervisor.acquire("qwen");
    const t2 = track(again);
    await w.run(COLD_START_MS + 10_000, () => t2.result !== undefined);
    expect(ready(t2.result).key.incarnation).not.toBe(first.key.incarnation);
  });
});

describe("RunpodPodSupervisor: adoption after restart", () => {
  it("a new controller and supervisor over the same store find the running pod and serve from it, no create", async () => {
    const w = await world();
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const before = ready(t.result);
    w.restart();
    expect(w.supervisor.state("qwen")).toBe("starting"); // known pod, readiness not yet probed here
    const after = w.supervisor.acquire("qwen");
    const t2 = track(after);
    await w.run(5_000, () => t2.result !== undefined);
    expect(ready(t2.result).key).toEqual(before.key);
    expect(w.emu.pods.list()).toHaveLength(1);
    expect(w.supervisor.state("qwen")).toBe("ready");
  });
});

describe("RunpodPodSupervisor: idle reaping", () => {
  it("never reaps below the measured cold-start time, never while a stream lease is held, then reaps", async () => {
    const w = await world({ model: { idleTimeoutMs: 60_000 } });
    const p = w.supervisor.acquire("qwen");
    const t = track(p);
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const pod = ready(t.result);
    const cold = w.supervisor.coldStartMs("qwen") ?? 0;
    expect(cold).toBeGreaterThanOrEqual(COLD_START_MS);
    // Idle past the configured 60 s but below the measured cold start: kept.
    await w.run(cold - 10_000);
    expect(w.supervisor.state("qwen")).toBe("ready");
    // A stream holds it well past the idle limit.
    const lease = w.supervisor.openStream("qwen");
    expect(lease).toBeDefined();
    await w.run(cold * 3);
    expect(w.emu.pods.get(pod.key.incarnation)?.wire.status).toBe("RUNNING");
    lease?.release();
    await w.run(cold - 10_000);
    expect(w.emu.pods.get(pod.key.incarnation)?.wire.status).toBe("RUNNING");
    await w.run(20_000, () => w.supervisor.state("qwen") !== "ready");
    const reaped = w.events.find((e) => e.type === "StopRequired" && e.reason === "idle");
    expect(reaped).toBeDefined();
    expectTerminated(w, pod.key.incarnation);
    expect(w.openObligationCount()).toBe(0);
  });

  it("after a restart, the time the sponsor was down is not taken for a cold start: idle reaps at the idle timeout", async () => {
    const w = await world({ model: { idleTimeoutMs: 60_000 } });
    const t = track(w.supervisor.acquire("qwen"));
    await w.run(COLD_START_MS + 10_000, () => t.result !== undefined);
    const pod = ready(t.result);
    w.advance(3 * 3_600_000); // the sponsor is down for 3 h; the pod runs (and bills) on
    w.restart();
    await w.run(5_000); // the restarted process probes it ready
    expect(w.supervisor.state("qwen")).toBe("ready");
    expect(w.supervisor.coldStartMs("qwen")).toBeUndefined(); // not measured by this process
    await w.run(90_000, () => w.supervisor.state("qwen") !== "ready");
    expect(w.events.find((e) => e.type === "StopRequired" && e.reason === "idle")).toBeDefined();
    expectTerminated(w, pod.key.incarnation);
  });
});

describe("RunpodPodSupervisor: orphan sweep", () => {
  it("records and terminates pods with our owner tag that no record holds; other owners' pods are never touched", async () => {
    const w = await world();
    const mk = async (name: string, ownerTag: string) => {
      const out = await w.provider.create({
        spec: specOf(name),
        requestId: `left-${name}`,
        ownerTag,
        epoch: 1,
      });
      if (out.kind !== "created") throw new Error(JSON.stringify(out));
      return out.report.key.incarnation;
    };
    const ours = await mk("pair-left-behind", OWNER);
    const theirs = await mk("pair-theirs", "pair:another-controller");
    await w.run(30_000);
    const orphan = w.events.find((e) => e.type === "OrphanRecorded");
    expect(orphan?.type === "OrphanRecorded" && orphan.key.incarnation).toBe(ours);
    expectTerminated(w, ours);
    expect(w.emu.pods.get(theirs)?.wire.status).toBe("RUNNING");
    expect(w.openObligationCount()).toBe(0);
    expect(JSON.stringify(w.store.load())).not.toContain(theirs);
  });
});

async function fetchModels(w: SupervisedWorld, address: string): Promise<string> {
  const { Agent, request } = await import("undici");
  const { rootCertificates } = await import("node:tls");
  const agent = new Agent({ connect: { ca: [...rootCertificates, w.caPem] } });
  try {
    const res = await request(`${address}/v1/models`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${VLLM_KEY}` },
    });
    return await res.body.text();
  } finally {
    await agent.close();
  }
}
