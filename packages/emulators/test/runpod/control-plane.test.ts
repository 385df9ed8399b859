import { describe, expect, it } from "vitest";
import { DEFAULT_TIMINGS } from "../../src/runpod/options.js";
import { NO_CAPACITY_DETAIL } from "../../src/runpod/problem.js";
import { A40, L40S, planeFixture } from "./plane-fixture.js";

const T = DEFAULT_TIMINGS;

describe("pod lifecycle under the virtual clock", () => {
  it("goes PROVISIONING → STARTING → RUNNING at the configured times, then serves after the model load", () => {
    const { plane, advance, create, status } = planeFixture();
    const pod = create();
    expect(pod).toMatchObject({
      status: "PROVISIONING",
      actions: ["stop", "terminate"],
      runtime: null,
      startedAt: null,
    });
    expect(pod.id).toMatch(/^[a-z0-9]{14}$/);
    advance(T.provisionMs - 1);
    expect(status(pod.id)).toBe("PROVISIONING");
    advance(1);
    expect(status(pod.id)).toBe("STARTING");
    advance(T.imagePullMs);
    const running = plane.get(pod.id);
    expect(running.ok && running.value).toMatchObject({
      status: "RUNNING",
      actions: ["stop", "restart", "terminate"],
      startedAt: "2026-01-01T00:01:05Z",
      runtime: { uptime: 0 },
    });
    const record = plane.record(pod.id);
    expect(record && plane.isServing(record)).toBe(false);
    advance(T.modelLoadMs);
    expect(record && plane.isServing(record)).toBe(true);
  });

  it("keeps name and env as created (secret references literal) and expands them only for the container", () => {
    const { plane, create } = planeFixture();
    const env = {
      VLLM_API_KEY: "{{ RUNPOD_SECRET_vllm_key }}",
      PAIR_OWNER: "node-a",
      HF_HOME: "/workspace/hf",
    };
    const pod = create({ name: "pair-abc-1", env, args: "--model Qwen/Qwen2.5-7B --served-model-name qwen" });
    expect(pod.name).toBe("pair-abc-1");
    expect(pod.env).toEqual(env);
    const listed = plane.list().find((p) => p.id === pod.id);
    expect(listed?.env).toEqual(env);
    const record = plane.record(pod.id);
    expect(record?.containerEnv["VLLM_API_KEY"]).toBe("sk-from-secret");
    expect(record?.vllm).toEqual({ servedModelNames: ["qwen"], port: 8000, apiKeys: ["sk-from-secret"] });
    expect(JSON.stringify(plane.list())).not.toContain("sk-from-secret");
  });

  it("ends in ERROR when a referenced secret is missing (missingSecret: error), or runs with it empty", () => {
    const failing = planeFixture();
    const pod = failing.create({ env: { VLLM_API_KEY: "{{RUNPOD_SECRET_nope}}" } });
    failing.advance(T.provisionMs + T.imagePullMs);
    expect(failing.status(pod.id)).toBe("ERROR");
    expect(failing.catalog.free(L40S)).toBe(2);

    const lenient = planeFixture({ missingSecret: "empty" });
    const other = lenient.create({ env: { VLLM_API_KEY: "{{RUNPOD_SECRET_nope}}" } });
    lenient.advance(T.provisionMs + T.imagePullMs);
    expect(lenient.status(other.id)).toBe("RUNNING");
    expect(lenient.plane.record(other.id)?.vllm.apiKeys).toEqual([]);
  });

  it("stops to EXITED, starts again, restarts, and refuses actions the status does not allow with 409", () => {
    const { plane, advance, create, status, catalog } = planeFixture();
    const pod = create();
    const early = plane.act(pod.id, "restart");
    expect(early.ok ? undefined : early.problem).toMatchObject({ status: 409, title: "Conflict" });
    advance(T.provisionMs + T.imagePullMs);
    const stopped = plane.act(pod.id, "stop");
    expect(stopped.ok && stopped.value).toMatchObject({
      status: "EXITED",
      cost: 0,
      actions: ["start", "terminate"],
    });
    expect(catalog.free(L40S)).toBe(2);
    const again = plane.act(pod.id, "stop");
    expect(again.ok ? undefined : again.problem.status).toBe(409);
    expect(plane.act(pod.id, "start").ok).toBe(true);
    expect(status(pod.id)).toBe("STARTING");
    advance(T.imagePullMs);
    expect(status(pod.id)).toBe("RUNNING");
    expect(plane.act(pod.id, "restart").ok).toBe(true);
    expect(status(pod.id)).toBe("STARTING");
    advance(T.restartMs);
    expect(status(pod.id)).toBe("RUNNING");
    expect(plane.record(pod.id)?.containerEpoch).toBe(3);
  });

  it("terminates to TERMINATED, visible for the lag, then gone (404, absent from the list)", () => {
    const { plane, advance, create, status, catalog } = planeFixture();
    const pod = create();
    expect(plane.remove(pod.id)).toEqual({ ok: true, value: undefined });
    expect(catalog.free(L40S)).toBe(2);
    expect(status(pod.id)).toBe("TERMINATED");
    expect(plane.list().map((p) => p.status)).toEqual(["TERMINATED"]);
    const twice = plane.remove(pod.id);
    expect(twice.ok ? undefined : twice.problem.status).toBe(404);
    advance(T.terminatedVisibleMs);
    expect(status(pod.id)).toBe("absent (404)");
    expect(plane.list()).toEqual([]);
  });

  it("refuses a create without capacity with the no-capacity problem and creates nothing", () => {
    const { plane, create } = planeFixture();
    const outcome = plane.create({ name: "x", image: "i", gpu: { id: A40 } });
    // v2 by default: a 400 problem with the backend's free-text sentence.
    expect(outcome.ok ? undefined : outcome.problem).toEqual({
      status: 400,
      title: "Bad Request",
      detail: NO_CAPACITY_DETAIL.replace("create pod: ", ""),
    });
    const v1 = planeFixture({ errorDialect: "v1" }).plane.create({ name: "x", image: "i", gpu: { id: A40 } });
    expect(v1.ok ? undefined : v1.problem).toEqual({
      status: 500,
      title: "Internal Server Error",
      detail: NO_CAPACITY_DETAIL,
    });
    create({ gpu: { id: L40S, count: 2 } });
    const full = plane.create({ name: "y", image: "i", gpu: { id: L40S } });
    expect(full.ok ? undefined : full.problem.detail).toMatch(/no longer any instances available/);
    expect(plane.list()).toHaveLength(1);
  });

  it("refuses to start a stopped pod whose GPUs were taken meanwhile", () => {
    const { plane, advance, create, catalog } = planeFixture();
    const pod = create({ gpu: { id: L40S, count: 2 } });
    advance(T.provisionMs);
    plane.act(pod.id, "stop");
    catalog.setFree(L40S, 1);
    const outcome = plane.act(pod.id, "start");
    expect(outcome.ok ? undefined : outcome.problem).toMatchObject({
      status: 500,
      detail: /not enough free GPUs/,
    });
  });
});

describe("create validation", () => {
  it("answers schema failures with 422 and errors[], rule failures with 400", () => {
    const { plane } = planeFixture();
    const problemOf = (body: Record<string, unknown>) => {
      const outcome = plane.create(body);
      return outcome.ok ? undefined : outcome.problem;
    };
    expect(problemOf({ image: "i", gpu: { id: L40S }, gpuTypeIds: [L40S] })).toEqual({
      status: 422,
      title: "Unprocessable Entity",
      detail: "Request validation failed.",
      errors: ["$: additional properties 'gpuTypeIds' not allowed", "$: missing properties 'name'"],
    });
    expect(problemOf({ name: "n", image: "i", gpu: { id: L40S, count: 0 } })?.errors).toEqual([
      "$.gpu.count: minimum: got 0, want 1",
    ]);
    expect(problemOf({ name: "n", image: "i" })).toMatchObject({
      status: 400,
      detail: /exactly one of gpu or cpu/,
    });
    expect(problemOf({ name: "n", image: "i", gpu: { id: "NVIDIA Z9" } })).toMatchObject({ status: 400 });
    expect(problemOf({ name: "n", image: "i", gpu: { id: L40S }, ports: ["8000"] })?.status).toBe(422);
    const env = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`K${i}`, "v"]));
    expect(problemOf({ name: "n", image: "i", gpu: { id: L40S }, env })).toMatchObject({ status: 400 });
  });
});

describe("faults acting on pods", () => {
  it("crash loop: the pod reaches RUNNING, then restarts repeatedly and never serves", () => {
    const { plane, advance, create, status } = planeFixture();
    plane.newPodFaults.crashLoop = true;
    const pod = create();
    advance(T.provisionMs + T.imagePullMs);
    expect(status(pod.id)).toBe("RUNNING");
    advance(T.crashLoopUpMs);
    expect(status(pod.id)).toBe("STARTING");
    advance(T.crashLoopDownMs);
    expect(status(pod.id)).toBe("RUNNING");
    advance(3 * (T.crashLoopUpMs + T.crashLoopDownMs));
    const record = plane.record(pod.id);
    expect(record?.crashRestarts).toBe(4);
    expect(record && plane.isServing(record)).toBe(false);
  });

  it("crash loop switched on for a serving pod stops it serving at once", () => {
    const { plane, advance, create } = planeFixture();
    const ended: string[] = [];
    plane.onServingEnded = (id) => ended.push(id);
    const pod = create();
    advance(T.provisionMs + T.imagePullMs + T.modelLoadMs);
    plane.setCrashLoop(pod.id, true);
    expect(plane.record(pod.id)?.status).toBe("STARTING");
    expect(ended).toEqual([pod.id]);
  });

  it("slow start delays RUNNING by the extra time", () => {
    const { plane, advance, create, status } = planeFixture();
    plane.newPodFaults.extraStartMs = 600_000;
    const pod = create();
    advance(T.provisionMs + T.imagePullMs);
    expect(status(pod.id)).toBe("STARTING");
    advance(600_000);
    expect(status(pod.id)).toBe("RUNNING");
  });

  it("exit without request: EXITED, GPUs released, reason recorded", () => {
    const { plane, advance, create, status, catalog } = planeFixture();
    const pod = create();
    advance(T.provisionMs + T.imagePullMs);
    plane.exitWithoutRequest(pod.id);
    expect(status(pod.id)).toBe("EXITED");
    expect(plane.record(pod.id)?.lastStatusChange).toBe("Exited by Runpod");
    expect(catalog.free(L40S)).toBe(2);
  });
});

describe("billing meter", () => {
  it("charges compute + running disks per second while up, only the volume at the stopped rate when EXITED", () => {
    const { plane, meter, advance, create } = planeFixture();
    const pod = create({ disk: 50, mounts: { persistent: { size: 20, path: "/workspace" } } });
    advance(3_600_000);
    // 1 h of L40S ($0.79) + 70 GB at $0.10/GB-month for 1/720 month.
    expect(meter.charges(pod.id)).toEqual({
      computeMicroUsd: 790_000,
      storageMicroUsd: 9_722,
      totalMicroUsd: 799_722,
      computeSeconds: 3600,
    });
    plane.act(pod.id, "stop");
    advance(720 * 3_600_000);
    // + 20 GB at $0.20/GB-month for a month = $4.
    expect(meter.totalMicroUsd(pod.id)).toBe(4_799_722);
    plane.remove(pod.id);
    advance(3_600_000);
    expect(meter.totalMicroUsd(pod.id)).toBe(4_799_722);
  });

  it("bills whole seconds of the clock, the same whether the time is observed in many steps or one", () => {
    const stepwise = planeFixture();
    const a = stepwise.create();
    stepwise.advance(1_500);
    expect(stepwise.meter.charges(a.id).computeSeconds).toBe(1);
    stepwise.advance(499);
    expect(stepwise.meter.charges(a.id).computeSeconds).toBe(1);
    stepwise.advance(1);
    expect(stepwise.meter.charges(a.id).computeSeconds).toBe(2);
    for (let i = 0; i < 997; i++) stepwise.advance(777);

    const once = planeFixture();
    const b = once.create();
    once.advance(2_000 + 997 * 777);
    expect(stepwise.meter.charges(a.id)).toEqual(once.meter.charges(b.id));
  });

  it("charges the community price for a community pod and nothing for a failed create", () => {
    const { plane, meter, advance } = planeFixture({}, [
      { id: L40S, securePriceUsdPerHr: 0.79, communityPriceUsdPerHr: 0.5, capacityGpus: 1 },
    ]);
    const created = plane.create({ name: "c", image: "i", gpu: { id: L40S }, cloud: "COMMUNITY", disk: 1 });
    expect(created.ok && created.value.cost).toBe(0.5);
    expect(plane.create({ name: "d", image: "i", gpu: { id: L40S } }).ok).toBe(false);
    advance(3_600_000);
    expect(created.ok && meter.charges(created.value.id).computeMicroUsd).toBe(500_000);
    expect(meter.podIds()).toHaveLength(1);
  });
});
