// RunpodProvider's Runpod-specific behaviours against the emulator over HTTPS: ordered GPU choice,
// a lost create never tries a second type, identity and the vLLM key as a secret reference only,
// other owners' pods never stopped, pause refused, a terminate accepted while the pod still runs is
// not accepted, settings checked.
import { inspect } from "node:util";
import type { CreateRequest } from "@pair/provision";
import { afterEach, describe, expect, it } from "vitest";
import { IDENTITY_ENV, readRunpodModel, validateRunpodModel } from "../../src/index.js";
import { ACCOUNT, MODEL, OWNER, VLLM_KEY, specOf, startWorld, type RunpodWorld } from "./runpod-harness.js";

const worlds: RunpodWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});
async function world(...args: Parameters<typeof startWorld>) {
  const w = await startWorld(...args);
  worlds.push(w);
  return w;
}

const THREE = ["NVIDIA L40S", "NVIDIA A40", "NVIDIA RTX A4000"];
let n = 0;
function request(model: Partial<typeof MODEL> = {}, ownerTag = OWNER): CreateRequest {
  n += 1;
  return { spec: specOf(`pair-qwen-${n}`, model), requestId: `req-${n}`, ownerTag, epoch: 3 };
}

describe("RunpodProvider create: ordered GPU choice", () => {
  // v2 (the emulator's default) refuses capacity with a 400 problem; v1 answered 500 "create pod: …".
  it.each(["v2", "v1"] as const)(
    "tries the next declared GPU type when one has no capacity (%s shapes), and creates on the first with room",
    async (errorDialect) => {
      const w = await world({ errorDialect });
      w.emu.faults.outOfCapacity("NVIDIA L40S");
      const outcome = await w.provider.create(request({ gpuTypes: THREE }));
      expect(outcome.kind).toBe("created");
      if (outcome.kind !== "created") return;
      expect(outcome.report.hardware).toBe("NVIDIA A40");
      expect(w.provider.placements).toEqual([
        { gpuType: "NVIDIA L40S", outcome: "no_capacity" },
        { gpuType: "NVIDIA A40", outcome: "created" },
      ]);
      expect(w.emu.pods.list()).toHaveLength(1);
    },
  );

  it("answers refused no_capacity after every declared type refused, having created nothing", async () => {
    const w = await world();
    for (const g of THREE) w.emu.faults.outOfCapacity(g);
    const outcome = await w.provider.create(request({ gpuTypes: THREE }));
    expect(outcome).toMatchObject({ kind: "refused", code: "no_capacity" });
    expect(w.provider.placements.map((p) => p.gpuType)).toEqual(THREE);
    expect(w.emu.pods.list()).toEqual([]);
  });

  it("ends the attempt as lost when a create answer is lost: never a second GPU type", async () => {
    const w = await world();
    w.emu.faults.loseCreateAnswers(1);
    const req = request({ gpuTypes: THREE });
    const outcome = await w.provider.create(req);
    expect(outcome.kind).toBe("lost");
    expect(w.provider.placements).toEqual([{ gpuType: "NVIDIA L40S", outcome: "lost" }]);
    const pods = w.emu.pods.list();
    expect(pods).toHaveLength(1);
    expect(pods[0]?.wire.gpu?.id).toBe("NVIDIA L40S");
    const listing = await w.provider.list();
    expect(listing.resources.filter((r) => r.requestId === req.requestId)).toHaveLength(1);
  });

  it("stops at a funds refusal (402) with insufficient_funds: never the next GPU type", async () => {
    const w = await world();
    w.emu.faults.refuseCreates("funds");
    const outcome = await w.provider.create(request({ gpuTypes: THREE }));
    expect(outcome).toMatchObject({ kind: "refused", code: "insufficient_funds" });
    expect(outcome.kind === "refused" && outcome.message).toContain("add funds");
    expect(w.provider.placements).toEqual([{ gpuType: "NVIDIA L40S", outcome: "refused" }]);
    expect(w.emu.pods.list()).toEqual([]);
  });

  it("stops at a refused key (403 without access, 401 wrong key) with credential_rejected", async () => {
    const w = await world();
    w.emu.faults.refuseCreates("forbidden");
    const forbidden = await w.provider.create(request({ gpuTypes: THREE }));
    expect(forbidden).toMatchObject({ kind: "refused", code: "credential_rejected" });
    expect(w.provider.placements).toHaveLength(1);
    const wrongKey = await world({ apiKey: "another-key-entirely" });
    const unauthorized = await wrongKey.provider.create(request({ gpuTypes: THREE }));
    expect(unauthorized).toMatchObject({ kind: "refused", code: "credential_rejected" });
    expect(wrongKey.provider.placements).toHaveLength(1);
    expect([...w.emu.pods.list(), ...wrongKey.emu.pods.list()]).toEqual([]);
  });

  it("treats a 5xx to a create as lost (the pod may bill), not as a reason to try another type", async () => {
    const w = await world();
    w.emu.faults.failNextCalls(1, 503);
    const outcome = await w.provider.create(request({ gpuTypes: THREE }));
    expect(outcome.kind).toBe("lost");
    expect(w.provider.placements).toHaveLength(1);
  });
});

describe("RunpodProvider identity and secrets", () => {
  it("writes owner, epoch, request id and model into the pod env and reads them back from the listing", async () => {
    const w = await world();
    const req = request();
    const created = await w.provider.create(req);
    if (created.kind !== "created") throw new Error(JSON.stringify(created));
    const pod = w.emu.pods.get(created.report.key.incarnation);
    expect(pod?.wire.name).toBe(req.spec.name);
    expect(pod?.wire.env).toMatchObject({
      [IDENTITY_ENV.owner]: OWNER,
      [IDENTITY_ENV.epoch]: "3",
      [IDENTITY_ENV.requestId]: req.requestId,
      [IDENTITY_ENV.model]: "qwen",
    });
    const listed = (await w.provider.list()).resources.find(
      (r) => r.key.incarnation === created.report.key.incarnation,
    );
    expect(listed).toMatchObject({
      key: { provider: "runpod", account: ACCOUNT, name: req.spec.name },
      ownerTag: OWNER,
      requestId: req.requestId,
      epoch: 3,
      servedModel: "qwen",
      hardware: "NVIDIA L40S",
      status: "PROVISIONING",
    });
  });

  it("sends the vLLM key only as {{ RUNPOD_SECRET_<name> }}: the value is never in the request, the pod's API view or the args", async () => {
    const w = await world();
    const created = await w.provider.create(request());
    if (created.kind !== "created") throw new Error(JSON.stringify(created));
    const pod = w.emu.pods.get(created.report.key.incarnation);
    expect(pod?.wire.env["VLLM_API_KEY"]).toBe("{{ RUNPOD_SECRET_vllm_key }}");
    const everythingWeSent = JSON.stringify(pod?.wire) + inspect(created) + JSON.stringify(request());
    expect(everythingWeSent).not.toContain(VLLM_KEY);
    expect(pod?.wire.args).not.toContain("--api-key");
    // Runpod substitutes it inside the container only.
    expect(pod?.containerEnv["VLLM_API_KEY"]).toBe(VLLM_KEY);
  });

  it("passes every declared vLLM argument, the served name, the port and the disks", async () => {
    const w = await world();
    const created = await w.provider.create(
      request({
        vllmArgs: ["--max-model-len", "4096", "--enable-prefix-caching"],
        dataCenterIds: ["EU-RO-1"],
      }),
    );
    if (created.kind !== "created") throw new Error(JSON.stringify(created));
    const wire = w.emu.pods.get(created.report.key.incarnation)?.wire;
    expect(wire?.args).toBe(
      "--model Qwen/Qwen2.5-7B-Instruct --served-model-name qwen --host 0.0.0.0 --port 8000 --max-model-len 4096 --enable-prefix-caching",
    );
    expect(wire).toMatchObject({ ports: ["8000/http"], image: MODEL.image, dataCenterId: "EU-RO-1" });
    expect(w.emu.pods.get(created.report.key.incarnation)?.servedModelNames).toEqual(["qwen"]);
  });
});

describe("RunpodProvider stop", () => {
  it("never terminates a pod whose env names another owner, even when asked with its exact key", async () => {
    const w = await world();
    const theirs = await w.provider.create(request({}, "pair:someone-else"));
    if (theirs.kind !== "created") throw new Error(JSON.stringify(theirs));
    const outcome = await w.provider.stop(theirs.report.key, "terminate");
    expect(outcome).toMatchObject({ kind: "refused", code: "foreign_pod" });
    expect(w.emu.pods.get(theirs.report.key.incarnation)?.wire.status).toBe("PROVISIONING");
  });

  it("refuses a pause (a stopped pod still bills its volume) and a key whose name is not the pod's", async () => {
    const w = await world();
    const ours = await w.provider.create(request());
    if (ours.kind !== "created") throw new Error(JSON.stringify(ours));
    expect(await w.provider.stop(ours.report.key, "pause")).toMatchObject({ code: "pause_unsupported" });
    expect(
      await w.provider.stop({ ...ours.report.key, name: "pair-another-name" }, "terminate"),
    ).toMatchObject({ kind: "refused", code: "key_mismatch" });
    expect(w.emu.pods.get(ours.report.key.incarnation)?.wire.status).toBe("PROVISIONING");
    expect((await w.provider.stop(ours.report.key, "terminate")).kind).toBe("accepted");
    expect(w.emu.pods.get(ours.report.key.incarnation)?.wire.status).toBe("TERMINATED");
  });

  it("a terminate answered 204 while the pod still runs is `unknown`, never `accepted`", async () => {
    const w = await world();
    const ours = await w.provider.create(request());
    if (ours.kind !== "created") throw new Error(JSON.stringify(ours));
    w.emu.faults.ignoreStops();
    const outcome = await w.provider.stop(ours.report.key, "terminate");
    expect(outcome).toMatchObject({ kind: "unknown" });
    if (outcome.kind === "unknown") expect(outcome.cause).toMatch(/still reports it PROVISIONING/);
    w.emu.faults.ignoreStops(false);
    expect(await w.provider.stop(ours.report.key, "terminate")).toEqual({ kind: "accepted" });
  });

  it("reports EXITED as charging: only TERMINATED ends billing", async () => {
    const w = await world();
    const ours = await w.provider.create(request());
    if (ours.kind !== "created") throw new Error(JSON.stringify(ours));
    w.advance(10_000);
    w.emu.faults.exitPod(ours.report.key.incarnation);
    const d = await w.provider.describe(ours.report.key);
    expect(d).toMatchObject({ kind: "found", report: { status: "EXITED" } });
    expect(w.provider.capabilities.billingEndedStatuses).toEqual(["TERMINATED"]);
    expect(w.provider.capabilities.chargingStatuses).toContain("EXITED");
    const before = w.emu.meter.totalMicroUsd(ours.report.key.incarnation);
    w.advance(3_600_000);
    expect(w.emu.meter.totalMicroUsd(ours.report.key.incarnation)).toBeGreaterThan(before);
  });
});

describe("RunpodModel settings", () => {
  it("round-trips through DeploymentSpec.settings and refuses --api-key, empty GPU lists and bad limits", () => {
    const spec = specOf("pair-x");
    const back = readRunpodModel(spec);
    expect(back.ok && back.value).toEqual(MODEL);
    expect(validateRunpodModel({ ...MODEL, vllmArgs: ["--api-key", "sk-x"] }).join()).toMatch(/--api-key/);
    expect(validateRunpodModel({ ...MODEL, gpuTypes: [] }).join()).toMatch(/gpuTypes/);
    expect(validateRunpodModel({ ...MODEL, idleTimeoutMs: 0 }).join()).toMatch(/idleTimeoutMs/);
    expect(validateRunpodModel({ ...MODEL, networkVolumeId: "vol-1" }).join()).toMatch(/volumeGb/);
    expect(readRunpodModel({ ...spec, settings: {} }).ok).toBe(false);
  });

  it("refuses a create whose name lacks the pair- prefix, before calling Runpod", async () => {
    const w = await world();
    const outcome = await w.provider.create({ ...request(), spec: specOf("qwen-no-prefix") });
    expect(outcome).toMatchObject({ kind: "refused", code: "invalid_name" });
    expect(w.emu.pods.list()).toEqual([]);
  });
});
