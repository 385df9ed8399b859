// HuggingFaceJobsProvider and HttpsJobsTransport over the Jobs emulator (HTTPS, test CA, virtual
// time): the create spec HF receives (vllm serve, flavor, window = timeoutSeconds, exposed port,
// secrets as Job secrets only), refusals decided before any call, listing across Link pages, the
// lost create resolved by the owner label, retries honouring retry-after (create never retried),
// readiness from the exposed port, cancel of the exact job with the owner guard, stage treatment.
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceReport } from "@pair/provision";
import type { HfJob, JobsTransport } from "../../src/index.js";
import {
  HfToken,
  HuggingFaceApiError,
  HttpsJobsTransport,
  RetryAfterGate,
  jobCostMicroUsd,
  jobTreatment,
} from "../../src/index.js";
import { MODEL_SECRET, NS, OWNER, jobRequest, startJobsHarness, type JobsHarness } from "./jobs-harness.js";

const open: JobsHarness[] = [];
async function harness(...args: Parameters<typeof startJobsHarness>): Promise<JobsHarness> {
  const h = await startJobsHarness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

function created(outcome: Awaited<ReturnType<JobsHarness["provider"]["create"]>>): ResourceReport {
  if (outcome.kind !== "created") throw new Error(`expected created, got ${JSON.stringify(outcome)}`);
  return outcome.report;
}

describe("create", () => {
  it("runs vllm serve on the flavor with timeoutSeconds = window, an exposed port and the secret as a Job secret only", async () => {
    const h = await harness();
    const report = created(
      await h.provider.create(jobRequest("batch", { settings: { windowS: 5400, maxModelLen: 4096 } })),
    );
    expect(report.key).toMatchObject({ provider: "huggingface-job", account: NS, name: "batch" });
    expect(report.key.incarnation).toMatch(/^[0-9a-f]{24}$/);
    expect(report).toMatchObject({
      status: "SCHEDULING",
      ready: false,
      ownerTag: OWNER,
      requestId: "req-batch",
      epoch: 1,
    });
    expect(report.address).toBe(h.emu.jobs.exposeUrl(report.key.incarnation, 8000));
    const job = await h.transport.getJob(NS, report.key.incarnation);
    expect(job.command).toEqual([
      "vllm",
      "serve",
      "Qwen/Qwen3-0.6B",
      "--host",
      "0.0.0.0",
      "--port",
      "8000",
      "--served-model-name",
      "Qwen/Qwen3-0.6B",
      "--max-model-len",
      "4096",
    ]);
    expect(job).toMatchObject({ flavor: "l4x1", timeoutSeconds: 5400, secretNames: ["HF_TOKEN"] });
    expect(job.labels).toMatchObject({
      name: "batch",
      "pair-owner": OWNER,
      "pair-request": "req-batch",
      "pair-epoch": "1",
      "pair-window-s": "5400",
    });
    expect(JSON.stringify(job)).not.toContain(MODEL_SECRET);
    expect(Object.values(job.environment)).not.toContain(MODEL_SECRET);
    expect(h.emu.jobs.containerEnv(report.key.incarnation)?.["HF_TOKEN"]).toBe(MODEL_SECRET);
    expect(h.emu.jobs.get(report.key.incarnation)?.timeoutSeconds).toBe(5400);
  });

  it("refuses bad specs before calling HF, and answers HF's refusal with its message", async () => {
    const h = await harness();
    const refusal = async (overrides: Parameters<typeof jobRequest>[1]) => {
      const outcome = await h.provider.create(jobRequest("x", overrides));
      return outcome.kind === "refused" ? outcome.code : outcome.kind;
    };
    expect(await refusal({ settings: {} })).toBe("invalid_spec");
    expect(await refusal({ settings: { windowS: 30 } })).toBe("invalid_spec");
    expect(await refusal({ settings: { windowS: 3600, env: "X=1" } })).toBe("invalid_spec");
    expect(await refusal({ provider: "huggingface-endpoint" })).toBe("wrong_provider");
    expect(await refusal({ account: "bob" })).toBe("wrong_account");
    expect(await refusal({ name: "has space" })).toBe("invalid_spec");
    expect(h.emu.jobs.list(NS)).toEqual([]);
    const noCapacity = await h.provider.create(jobRequest("big", { hardware: "h200x8" }));
    expect(noCapacity).toMatchObject({ kind: "refused", code: "invalid_request" });
    if (noCapacity.kind === "refused") expect(noCapacity.message).toMatch(/no capacity/);
  });

  it("a lost create is `lost`, never resent; findByRequest finds it by the owner label", async () => {
    const h = await harness();
    h.emu.jobs.faults.loseAnswers(1, { method: "POST" });
    const outcome = await h.provider.create(jobRequest("lost"));
    expect(outcome.kind).toBe("lost");
    expect(h.emu.jobs.list(NS)).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
    const found = await h.provider.findByRequest(OWNER, "req-lost");
    expect(found).toHaveLength(1);
    expect(found[0]?.key.name).toBe("lost");
    expect(await h.provider.findByRequest(OWNER, "req-other")).toEqual([]);
    h.emu.jobs.faults.failNext(1, 503, { method: "POST" });
    expect((await h.provider.create(jobRequest("five-oh-three"))).kind).toBe("lost");
    expect(h.sleeps).toEqual([]);
  });
});

describe("records before labels", () => {
  it("a job id with a record keeps its recorded name whatever its labels say; without one, labels name it", async () => {
    const h = await harness();
    const report = created(await h.provider.create(jobRequest("batch")));
    const id = report.key.incarnation;
    // HF answering without the job's labels (lost or changed): only the env copy of the marks is left.
    const strip = (job: HfJob): HfJob => ({ ...job, labels: {} });
    const labelless = new Proxy(h.transport, {
      get(target, prop) {
        if (prop === "getJob")
          return async (ns: string, jobId: string) => strip(await target.getJob(ns, jobId));
        if (prop === "listJobsPage")
          return async (...args: Parameters<JobsTransport["listJobsPage"]>) => {
            const page = await target.listJobsPage(...args);
            return { ...page, jobs: page.jobs.map(strip) };
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as JobsTransport;
    const byLabels = h.adapter({ transport: labelless });
    expect((await byLabels.describe(report.key)).kind).toBe("not-found");
    expect((await byLabels.list()).resources.map((r) => r.key.name)).toEqual([id]);
    const byRecord = h.adapter({ transport: labelless, recordedNames: () => new Map([[id, "batch"]]) });
    const described = await byRecord.describe(report.key);
    expect(described.kind).toBe("found");
    expect((await byRecord.list()).resources.map((r) => r.key)).toEqual([report.key]);
    // The owner tag still reads from the env copy: the job stays ours.
    expect((await byRecord.list()).resources[0]?.ownerTag).toBe(OWNER);
  });
});

describe("transport", () => {
  it("retries reads after retry-after, and follows every Link page into one complete listing", async () => {
    const h = await harness({ pageSize: 2 });
    for (const name of ["a", "b", "c", "d", "e"]) created(await h.provider.create(jobRequest(name)));
    h.emu.jobs.faults.rateLimitNext(1, 7, { method: "GET" });
    const listing = await h.provider.list();
    expect(h.sleeps).toEqual([7000]);
    expect(listing.complete).toBe(true);
    expect(listing.resources.map((r) => r.key.name)).toEqual(["a", "b", "c", "d", "e"]);
    const capped = await h.adapter({ maxPages: 2 }).list();
    expect(capped.complete).toBe(false);
  });

  it("shares the retry-after window: after a 429 no client of the gate sends anything inside it", async () => {
    const h = await harness();
    const gate = new RetryAfterGate();
    const poller = h.newTransport({ gate, retry: { maxAttempts: 1 } });
    const other = h.newTransport({ gate });
    h.emu.jobs.faults.rateLimitNext(1, 30, { method: "GET" });
    await expect(poller.listJobsPage(NS)).rejects.toMatchObject({ kind: "rate_limited" });
    const seen = h.emu.jobs.requests().length;
    // Another client of the gate (a cancel, a create) is refused locally, with the time left.
    const held = await other.cancelJob(NS, "0123456789abcdef01234567").catch((e: HuggingFaceApiError) => e);
    expect(held).toMatchObject({ kind: "rate_limited" });
    expect((held as HuggingFaceApiError).retryAfterMs).toBeGreaterThan(25_000);
    await expect(other.hardware()).rejects.toMatchObject({ kind: "rate_limited" });
    expect(h.emu.jobs.requests()).toHaveLength(seen);
    expect(gate.closedForMs(Date.now() + 31_000)).toBe(0);
    // The refused call itself, retried, waits the window out (recorded here) and is then sent.
    h.emu.jobs.faults.rateLimitNext(1, 7, { method: "GET" });
    const gated = h.newTransport({ gate: new RetryAfterGate() });
    expect(await gated.listJobsPage(NS)).toMatchObject({ jobs: [] });
    expect(
      h.emu.jobs
        .requests()
        .filter((r) => r.method === "GET")
        .slice(-2)
        .map((r) => r.fault),
    ).toEqual(["rate-limit", "none"]);
  });

  it("a cancel refused with 429 past the retry bound carries HF's retry-after to the controller", async () => {
    const h = await harness();
    const job = created(await h.provider.create(jobRequest("limited")));
    h.emu.jobs.faults.rateLimitNext(1, 600, { path: "/cancel" });
    const outcome = await h.provider.stop(job.key, "terminate");
    expect(outcome).toMatchObject({ kind: "refused", code: "rate_limited", retryAfterMs: 600_000 });
    expect(h.emu.jobs.get(job.key.incarnation)?.stage).toBe("SCHEDULING");
  });

  it("verifies certificates: without the test CA the call fails `certificate`", async () => {
    const h = await harness();
    const untrusting = new HttpsJobsTransport({
      token: new HfToken("hf_x_token_1"),
      hubApi: h.emu.hubApiUrl,
    });
    await expect(untrusting.hardware()).rejects.toMatchObject({ kind: "certificate" });
    await untrusting.close();
  });

  it("reads the hardware list with per-minute prices", async () => {
    const h = await harness();
    const flavors = await h.transport.hardware();
    const l4 = flavors.find((f) => f.name === "l4x1");
    expect(l4).toMatchObject({ gpuModel: "L4", gpuCount: 1 });
    if (!l4) return;
    // 13 333 µ$/min × 60, + 30 µ$/h for the listing's rounding (HF's exact $0.80/h is 800 000), + $0.01.
    expect(jobCostMicroUsd(l4, true, 60)).toBe(800_000 - 20 + 30 + 10_000);
    expect(jobCostMicroUsd(l4, true, 60)).toBeGreaterThanOrEqual(800_000 + 10_000);
  });

  it("names the failed operation and HF's message, never the token", async () => {
    const h = await harness();
    const error: unknown = await h.transport.getJob(NS, "000000000000000000000000").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HuggingFaceApiError);
    expect((error as HuggingFaceApiError).kind).toBe("not_found");
    expect(String(error)).toMatch(/getJob alice\/0{24}/);
    expect(String(error)).not.toContain("hf_alice");
  });
});

describe("lifecycle", () => {
  it("reports ready only when the exposed port answers; stage treatment follows", async () => {
    const h = await harness();
    const report = created(await h.provider.create(jobRequest("ready")));
    const describe = async () => {
      const d = await h.provider.describe(report.key);
      if (d.kind !== "found") throw new Error(JSON.stringify(d));
      return d.report;
    };
    expect(await describe()).toMatchObject({ status: "SCHEDULING", ready: false });
    expect(jobTreatment("SCHEDULING", false)).toBe("starting");
    h.emu.advance(20_000);
    expect(await describe()).toMatchObject({ status: "RUNNING", ready: false });
    expect(jobTreatment("RUNNING", false)).toBe("starting");
    h.emu.advance(90_000);
    expect(await describe()).toMatchObject({
      status: "RUNNING",
      ready: true,
      servedModel: "Qwen/Qwen3-0.6B",
    });
    expect(jobTreatment("RUNNING", true)).toBe("eligible");
    for (const stage of ["COMPLETED", "ERROR", "CANCELED", "DELETED", "SOMETHING"])
      expect(jobTreatment(stage, true)).toBe("ended");
  });

  it("the window's timeout ends the job on HF's side as billing-ended evidence", async () => {
    const h = await harness();
    const report = created(await h.provider.create(jobRequest("window", { settings: { windowS: 600 } })));
    h.emu.advance(20_000 + 600_000);
    const d = await h.provider.describe(report.key);
    expect(d).toMatchObject({
      kind: "found",
      report: { status: "ERROR", message: "Job timed out after 600 seconds" },
    });
    expect(h.provider.capabilities.billingEndedStatuses).toContain("ERROR");
    expect(h.emu.jobs.meter.billedMinutes(NS, report.key.incarnation)).toBe(10);
  });

  it("cancels the exact job, refuses a pause and another owner's job, and is not-found for another id", async () => {
    const h = await harness();
    const mine = created(await h.provider.create(jobRequest("mine")));
    const theirs = created(await h.provider.create({ ...jobRequest("theirs"), ownerTag: "someone-else" }));
    const guarded = h.adapter({ ownerTag: OWNER });
    expect(await guarded.stop(mine.key, "pause")).toMatchObject({
      kind: "refused",
      code: "pause_unsupported",
    });
    expect(await guarded.stop(theirs.key, "terminate")).toMatchObject({ kind: "refused", code: "not_ours" });
    expect(await guarded.stop(mine.key, "terminate")).toEqual({ kind: "accepted" });
    expect(await guarded.stop(mine.key, "terminate")).toEqual({ kind: "accepted" });
    expect(h.emu.jobs.get(mine.key.incarnation)?.stage).toBe("CANCELED");
    expect(h.emu.jobs.get(theirs.key.incarnation)?.stage).toBe("SCHEDULING");
    expect(await h.provider.describe({ ...mine.key, name: "renamed" })).toEqual({ kind: "not-found" });
    expect(await h.provider.stop({ ...mine.key, account: "bob" }, "terminate")).toMatchObject({
      code: "wrong_account",
    });
  });

  it("a cancel answered while the job still shows a billed stage is `unknown`, never `accepted`", async () => {
    const h = await harness();
    const job = created(await h.provider.create(jobRequest("sticky")));
    h.emu.jobs.faults.slowStateChanges(10 * 60_000); // the cancel lands 10 virtual minutes later
    const outcome = await h.provider.stop(job.key, "terminate");
    expect(outcome).toMatchObject({ kind: "unknown" });
    if (outcome.kind === "unknown") expect(outcome.cause).toMatch(/still reports it SCHEDULING/);
    h.emu.jobs.faults.clear();
    h.emu.advance(10 * 60_000);
    expect(await h.provider.stop(job.key, "terminate")).toEqual({ kind: "accepted" });
    expect(h.emu.jobs.get(job.key.incarnation)?.stage).toBe("CANCELED");
  });
});
