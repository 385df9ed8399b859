// HuggingFaceEndpointsProvider against the Hugging Face emulator over real HTTPS and virtual time:
// create → pending → initializing → running with PAIR's marks, private by default and never public,
// HF scale-to-zero on; pause stops the meter, resume starts it; identity by incarnation (a recreated
// same-name endpoint is another resource; others' endpoints are never touched); a lost create is
// `lost` and found by listing with our request id; failures mapped to refused / lost / unknown.
import { afterEach, describe, expect, it } from "vitest";
import type { CreateOutcome, ResourceKey, ResourceReport } from "@pair/provision";
import { HF_ENDPOINT_CAPABILITIES, HF_ENDPOINT_PROVIDER } from "../../src/index.js";
import { ALICE, spec as wireSpec } from "../transport-harness.js";
import {
  MIN,
  NS,
  OWNER,
  createRequest,
  startAdapterHarness,
  type AdapterHarness,
} from "./adapter-harness.js";

const open: AdapterHarness[] = [];
async function harness(...args: Parameters<typeof startAdapterHarness>): Promise<AdapterHarness> {
  const h = await startAdapterHarness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

function created(outcome: CreateOutcome): ResourceReport {
  if (outcome.kind !== "created") throw new Error(`expected created, got ${JSON.stringify(outcome)}`);
  return outcome.report;
}

async function described(h: AdapterHarness, key: ResourceKey): Promise<ResourceReport> {
  const outcome = await h.provider.describe(key);
  if (outcome.kind !== "found") throw new Error(`expected found, got ${JSON.stringify(outcome)}`);
  return outcome.report;
}

describe("create and the lifecycle", () => {
  it("creates a private endpoint with scale-to-zero on and PAIR's marks; pending → initializing → running", async () => {
    const h = await harness();
    const report = created(await h.provider.create(createRequest("qwen", {}, "req-1", 7)));
    const view = h.emu.endpoints.get(NS, "qwen");
    expect(report).toEqual({
      key: { provider: HF_ENDPOINT_PROVIDER, account: NS, name: "qwen", incarnation: view?.createdAt },
      status: "pending",
      ready: false,
      servedModel: "Qwen/Qwen3-0.6B",
      ownerTag: OWNER,
      requestId: "req-1",
      epoch: 7,
      hardware: "nvidia-l4",
      createdAtMs: h.emu.nowMs(),
      message: "Endpoint waiting to be scheduled",
    });
    expect(view).toMatchObject({ type: "private", minReplica: 0, scaleToZeroTimeout: 15 });

    h.emu.advance(30_000);
    expect(await described(h, report.key)).toMatchObject({ status: "initializing", ready: false });
    h.emu.advance(120_000);
    const running = await described(h, report.key);
    expect(running).toMatchObject({ status: "running", ready: true, ownerTag: OWNER, requestId: "req-1" });
    expect(running.address).toBe(h.emu.endpoints.get(NS, "qwen")?.url);

    const listing = await h.provider.list();
    expect(listing).toEqual({ complete: true, startedAtMs: h.emu.nowMs(), resources: [running] });
  });

  it("creates authenticated on request, takes the scale-to-zero minutes, and refuses public before any call", async () => {
    const h = await harness();
    created(
      await h.provider.create(
        createRequest("auth", {
          settings: { accessType: "authenticated", scaleToZeroTimeoutMin: 30, maxReplica: 2 },
        }),
      ),
    );
    expect(h.emu.endpoints.get(NS, "auth")).toMatchObject({ type: "authenticated", scaleToZeroTimeout: 30 });

    const refused = await h.provider.create(createRequest("pub", { settings: { accessType: "public" } }));
    expect(refused).toMatchObject({ kind: "refused", code: "public_endpoint_refused" });
    expect(h.emu.endpoints.get(NS, "pub")).toBeUndefined();
  });

  it("a catalog create goes through the catalog's deploy (its engine), then PAIR's marks, access and scale-to-zero", async () => {
    const h = await harness();
    const report = created(
      await h.provider.create(createRequest("cat", { settings: { catalog: "deploy" } }, "req-cat", 3)),
    );
    expect(h.emu.faults.arrived({ method: "POST", path: "/api/catalog/deploy" })).toBe(1);
    expect(h.emu.faults.arrived({ method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ })).toBe(0);
    // The recipe's engine serves /v1 (not HF's default Inference Toolkit); the update kept it.
    expect(h.emu.endpoints.get(NS, "cat")).toMatchObject({
      type: "private",
      minReplica: 0,
      scaleToZeroTimeout: 15,
      image: { vLLM: { port: 8000 } },
    });
    expect(report).toMatchObject({
      ownerTag: OWNER,
      requestId: "req-cat",
      epoch: 3,
      servedModel: "Qwen/Qwen3-0.6B",
    });
    const refused = await h.provider.create(
      createRequest("cat2", { settings: { catalog: "deploy", imageJson: '{"tgi":{}}' } }),
    );
    expect(refused).toMatchObject({ kind: "refused", code: "invalid_spec" });
    expect(JSON.stringify(refused)).toContain("brings its own engine image");
  });

  it("refuses a bad spec before calling HF, naming every problem", async () => {
    const h = await harness();
    const cases: [Parameters<typeof createRequest>[1], string, RegExp][] = [
      [{ settings: { colour: "blue" } }, "invalid_spec", /settings\.colour: unknown/],
      [{ settings: { scaleToZeroTimeoutMin: 0 } }, "invalid_spec", /scaleToZeroTimeoutMin.*stays on/],
      [{ settings: { accessType: "protected" } }, "invalid_spec", /accessType/],
      [{ settings: { imageJson: "{}" } }, "invalid_spec", /imageJson: expected exactly one key/],
      [{ settings: { maxReplica: "2" } }, "invalid_spec", /maxReplica: expected a number/],
      [{ name: "Bad_Name" }, "invalid_spec", /name: "Bad_Name"/],
      [{ region: "" }, "invalid_spec", /region: required/],
      [{ account: "bob" }, "wrong_account", /namespace "alice"/],
      [{ provider: "runpod" }, "wrong_provider", /huggingface-endpoint/],
    ];
    for (const [overrides, code, message] of cases) {
      const outcome = await h.provider.create(createRequest("ep", overrides));
      expect(outcome).toMatchObject({ kind: "refused", code });
      if (outcome.kind === "refused") expect(outcome.message).toMatch(message);
    }
    expect(h.emu.endpoints.list(NS)).toEqual([]);
  });

  it("a create HF refuses is `refused` with HF's message; a 5xx is `lost` (it may exist)", async () => {
    const h = await harness();
    created(await h.provider.create(createRequest("dup")));
    const duplicate = await h.provider.create(createRequest("dup", {}, "req-2"));
    expect(duplicate).toMatchObject({ kind: "refused", code: "conflict" });
    if (duplicate.kind === "refused") expect(duplicate.message).toMatch(/already exists/);

    const offHardware = await h.provider.create(createRequest("nohw", { hardware: "nvidia-z9" }));
    expect(offHardware).toMatchObject({ kind: "refused", code: "invalid_request" });

    h.emu.faults.failNext(1, 500, { method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ });
    expect(await h.provider.create(createRequest("five"))).toMatchObject({ kind: "lost" });
    expect(h.sleeps).toEqual([]); // a create is never retried
  });
});

describe("a lost create", () => {
  it("is `lost`, sent once, and the listing finds the endpoint by our owner tag and request id", async () => {
    const h = await harness();
    h.emu.faults.loseAnswers(1, { method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ });
    const outcome = await h.provider.create(createRequest("lost", {}, "req-lost-1", 3));
    expect(outcome).toMatchObject({ kind: "lost" });
    expect(h.sleeps).toEqual([]); // not retried: a retry would have been answered 409
    expect(h.emu.endpoints.list(NS)).toHaveLength(1);

    const listing = await h.provider.list();
    const found = listing.resources.filter((r) => r.requestId === "req-lost-1" && r.ownerTag === OWNER);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      key: { name: "lost", incarnation: h.emu.endpoints.get(NS, "lost")?.createdAt },
      epoch: 3,
    });
  });
});

describe("secrets", () => {
  it("no outcome, cause or report carries the token or a container secret", async () => {
    const h = await harness();
    const seen: unknown[] = [];
    seen.push(await h.provider.create(createRequest("sec")));
    h.emu.faults.loseAnswers(1, { method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ });
    seen.push(await h.provider.create(createRequest("sec2")));
    h.emu.faults.failNext(10, 502);
    const key = (seen[0] as { report: ResourceReport }).report.key;
    seen.push(await h.provider.stop(key, "pause"), await h.provider.describe(key));
    h.emu.faults.clear();
    seen.push(await h.provider.list());
    const text = JSON.stringify(seen);
    expect(text).toContain('"kind":"lost"');
    expect(text).toContain('"kind":"unknown"');
    expect(text).not.toContain(ALICE);
    expect(text).not.toMatch(/hf_[A-Za-z0-9_]{8,}/);
  });
});

describe("pause, resume and billing", () => {
  it("pause stops the meter (billing ended, as declared); resume starts it again", async () => {
    const h = await harness();
    const { key } = created(await h.provider.create(createRequest("bill")));
    h.emu.advance(150_000); // running since 2:30
    h.emu.advance(5 * MIN);
    const before = h.emu.meter.totalMicroUsd(NS, "bill");
    expect(before).toBeGreaterThan(0);

    expect(await h.provider.stop(key, "pause")).toEqual({ kind: "accepted" });
    const paused = await described(h, key);
    expect(paused.status).toBe("paused");
    expect(HF_ENDPOINT_CAPABILITIES.billingEndedStatuses).toContain(paused.status);
    const atPause = h.emu.meter.totalMicroUsd(NS, "bill");
    h.emu.advance(30 * MIN);
    expect(h.emu.meter.totalMicroUsd(NS, "bill")).toBe(atPause);

    expect(await h.provider.resume(key)).toEqual({ kind: "accepted" });
    expect(await described(h, key)).toMatchObject({ status: "pending", key });
    h.emu.advance(150_000);
    expect(await described(h, key)).toMatchObject({ status: "running", ready: true });
    expect(h.emu.meter.totalMicroUsd(NS, "bill")).toBeGreaterThan(atPause);
    // Resuming a running endpoint is not an error (HF's "already running").
    expect(await h.provider.resume(key)).toEqual({ kind: "accepted" });
  });

  it("a failed deploy reports HF's message; resume is refused with HF's message", async () => {
    const h = await harness();
    h.emu.faults.failNextDeploy("CUDA out of memory while loading the weights");
    const { key } = created(await h.provider.create(createRequest("oom")));
    h.emu.advance(150_000);
    expect(await described(h, key)).toMatchObject({
      status: "failed",
      ready: false,
      message: "CUDA out of memory while loading the weights",
    });
    const resumed = await h.provider.resume(key);
    expect(resumed).toMatchObject({ kind: "refused", code: "invalid_request" });
    if (resumed.kind === "refused") expect(resumed.message).toMatch(/cannot be resumed/);
  });

  it("a pause whose answers are lost is `unknown` (it may have happened), never `accepted`", async () => {
    const h = await harness();
    const { key } = created(await h.provider.create(createRequest("quiet")));
    h.emu.advance(150_000);
    h.emu.faults.loseAnswers(10, { path: "/pause" });
    const outcome = await h.provider.stop(key, "pause");
    expect(outcome).toMatchObject({ kind: "unknown" });
    h.emu.faults.clear();
    expect(await described(h, key)).toMatchObject({ status: "paused" }); // it did happen
  });

  it("a pause answered 200 while HF still reports running is `unknown`, never `accepted`", async () => {
    const h = await harness();
    const { key } = created(await h.provider.create(createRequest("sticky")));
    h.emu.advance(150_000);
    h.emu.faults.slowStateChanges(10 * MIN); // accepted, lands 10 min later: billed until then
    const outcome = await h.provider.stop(key, "pause");
    expect(outcome).toMatchObject({ kind: "unknown" });
    if (outcome.kind === "unknown") expect(outcome.cause).toMatch(/still reports it running/);
    h.emu.advance(10 * MIN);
    expect(await described(h, key)).toMatchObject({ status: "paused" });
    expect(await h.provider.stop(key, "pause")).toEqual({ kind: "accepted" });
  });

  it("delete removes the exact incarnation; a complete listing then lacks it", async () => {
    const h = await harness();
    const { key } = created(await h.provider.create(createRequest("gone")));
    expect(await h.provider.delete(key)).toEqual({ kind: "accepted" });
    expect(await h.provider.describe(key)).toEqual({ kind: "not-found" });
    const listing = await h.provider.list();
    expect(listing.complete).toBe(true);
    expect(listing.resources).toEqual([]);
    expect(await h.provider.stop(key, "pause")).toMatchObject({ kind: "refused", code: "not_found" });
  });
});

describe("identity", () => {
  it("a recreated same-name endpoint is another incarnation: not found by the old key, never stopped by it", async () => {
    const h = await harness();
    const first = created(await h.provider.create(createRequest("same", {}, "req-a")));
    expect(await h.provider.delete(first.key)).toEqual({ kind: "accepted" });
    h.emu.advance(1_000);
    const second = created(await h.provider.create(createRequest("same", {}, "req-b")));
    expect(second.key.name).toBe(first.key.name);
    expect(second.key.incarnation).not.toBe(first.key.incarnation);

    expect(await h.provider.describe(first.key)).toEqual({ kind: "not-found" });
    h.emu.advance(150_000);
    expect(await h.provider.stop(first.key, "pause")).toMatchObject({
      kind: "refused",
      code: "other_incarnation",
    });
    expect(await h.provider.stop(first.key, "terminate")).toMatchObject({ code: "other_incarnation" });
    expect(await h.provider.resume(first.key)).toMatchObject({ code: "other_incarnation" });
    expect(h.emu.endpoints.get(NS, "same")).toMatchObject({
      state: "running",
      createdAt: second.key.incarnation,
    });
  });

  it("others' endpoints are listed without our marks and a guarded adapter never stops them", async () => {
    const h = await harness();
    // Someone else's endpoint on the account (no PAIR marks), and another sponsor's.
    const theirs = await h.hf.createEndpoint(NS, wireSpec("theirs"));
    await h.hf.createEndpoint(NS, wireSpec("other-sponsor", { tags: ["pair:owner=someone-else", "dev"] }));
    created(await h.provider.create(createRequest("mine")));
    h.emu.advance(150_000);

    const listing = await h.provider.list();
    const byName = Object.fromEntries(listing.resources.map((r) => [r.key.name, r]));
    expect(byName["theirs"]?.ownerTag).toBeUndefined();
    expect(byName["theirs"]?.requestId).toBeUndefined();
    expect(byName["other-sponsor"]?.ownerTag).toBe("someone-else");
    expect(byName["mine"]?.ownerTag).toBe(OWNER);

    const guarded = h.adapter({ ownerTag: OWNER });
    const theirKey = byName["theirs"]?.key;
    const otherKey = byName["other-sponsor"]?.key;
    if (theirKey === undefined || otherKey === undefined) throw new Error("listing lost an endpoint");
    expect(theirKey.incarnation).toBe(theirs.incarnation);
    for (const key of [theirKey, otherKey]) {
      expect(await guarded.stop(key, "pause")).toMatchObject({ kind: "refused", code: "not_ours" });
      expect(await guarded.delete(key)).toMatchObject({ kind: "refused", code: "not_ours" });
    }
    expect(h.emu.endpoints.get(NS, "theirs")?.state).toBe("running");
    expect(h.emu.endpoints.get(NS, "other-sponsor")?.state).toBe("running");
  });

  it("marks are read back from env when an update replaced the tags; ambiguous marks are dropped", async () => {
    const h = await harness();
    const { key } = created(await h.provider.create(createRequest("marks", {}, "req-m", 4)));
    await h.hf.updateEndpoint(NS, "marks", { tags: ["prod"] });
    expect(await described(h, key)).toMatchObject({ ownerTag: OWNER, requestId: "req-m", epoch: 4 });
    await h.hf.updateEndpoint(NS, "marks", { tags: ["pair:owner=a", "pair:owner=b"] });
    expect((await described(h, key)).ownerTag).toBeUndefined();
  });

  it("keys of another namespace or provider are answered without a call", async () => {
    const h = await harness();
    const foreign: ResourceKey = {
      provider: HF_ENDPOINT_PROVIDER,
      account: "bob",
      name: "x",
      incarnation: "i",
    };
    expect(await h.provider.describe(foreign)).toMatchObject({ kind: "unknown" });
    expect(await h.provider.stop({ ...foreign, account: NS, provider: "runpod" }, "pause")).toMatchObject({
      kind: "refused",
      code: "wrong_account",
    });
  });

  it("refuses a namespace that is not a Hub name, and an empty owner tag", async () => {
    const h = await harness();
    expect(() => h.adapter({ namespace: "../x" })).toThrow(/namespace/);
    expect(() => h.adapter({ ownerTag: " " })).toThrow(/ownerTag/);
  });
});
