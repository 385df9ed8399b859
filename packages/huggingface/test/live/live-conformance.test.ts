// Live conformance for Hugging Face: what emulators cannot prove (error bodies; the 503 of a
// scaled-to-zero endpoint and X-Scale-Up-Timeout; a pause reported as paused; createdAt changing on
// recreate; the Jobs exposed-port auth), checked once against the emulator in virtual time (always)
// and once against live Hugging Face, only when PAIR_LIVE_HF_TOKEN is set: it rents a real GPU and
// costs real money under a hard budget (docs/live-conformance.md). Each run writes a JSON report.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_ENDPOINTS_API,
  HfToken,
  HttpsEndpointsTransport,
  HttpsJobsTransport,
} from "../../src/index.js";
import { ALICE, startTransportHarness, type TransportHarness } from "../transport-harness.js";
import { HfConformance, type HfConformanceOptions, type HfFindings } from "./conformance-checks.js";

const liveToken = process.env["PAIR_LIVE_HF_TOKEN"];

function writeReport(path: string, target: string, findings: HfFindings): void {
  writeFileSync(
    path,
    `${JSON.stringify({ target, finishedAt: new Date().toISOString(), findings }, null, 2)}\n`,
  );
}

describe("Hugging Face conformance checks against the emulator (the same steps the live run takes)", () => {
  const open: { h: TransportHarness; jobs: HttpsJobsTransport }[] = [];
  afterEach(async () => {
    for (const { h, jobs } of open.splice(0)) {
      await jobs.close();
      await h.close();
    }
  });

  async function options(
    overrides: Partial<HfConformanceOptions> = {},
  ): Promise<{ h: TransportHarness; o: HfConformanceOptions }> {
    const h = await startTransportHarness();
    const jobs = new HttpsJobsTransport({
      token: new HfToken(ALICE),
      hubApi: h.emu.hubApiUrl,
      extraCaPem: h.caPem,
    });
    open.push({ h, jobs });
    return {
      h,
      o: {
        endpoints: h.transport(),
        jobs,
        namespace: "alice",
        endpointsApi: h.emu.endpointsApiUrl,
        catalogModel: "Qwen/Qwen3-0.6B",
        token: new HfToken(ALICE),
        extraCaPem: h.caPem,
        wait: async (ms) => {
          h.emu.advance(ms);
          await new Promise((resolve) => setTimeout(resolve, 5));
        },
        nowMs: () => h.emu.nowMs(),
        endpoint: { vendor: "aws", region: "us-east-1", instanceType: "nvidia-l4", instanceSize: "x1" },
        jobFlavor: "l4x1",
        model: "Qwen/Qwen2.5-0.5B-Instruct",
        image: "vllm/vllm-openai:v0.23.0",
        runName: "pair-conformance-emu",
        deadlineMs: 30 * 60_000,
        maxUsd: 2,
        pollMs: 15_000,
        scaleUpTimeoutS: 300,
        log: () => undefined,
        ...overrides,
      },
    };
  }

  it("records error bodies, 503 / X-Scale-Up-Timeout, pause, createdAt on recreate and the exposed-port auth; cleans up", async () => {
    const { h, o } = await options();
    const findings = await new HfConformance(o).run();
    expect(findings.errorBodies.missingEndpoint).toMatchObject({ status: 404, kind: "not_found" });
    expect(findings.errorBodies.missingJob).toMatchObject({ status: 404, kind: "not_found" });
    expect(findings.errorBodies.invalidFlavor).toMatchObject({ status: 400 });
    expect(findings.scaleToZero.reachedState).toBe("scaledToZero");
    expect(findings.scaleToZero.withoutHeader?.status).toBe(503);
    expect(findings.scaleToZero.withHeader?.status).toBe(200);
    expect(findings.pause).toEqual({ reportedState: "paused", reportsPaused: true });
    expect(findings.recreate.createdAtChanged).toBe(true);
    // What PAIR's creates rely on: the engine lists the repository, a resume while running is no
    // error, one instant however the answers spell it, and a catalog deploy that serves /v1.
    const serving = findings.serving;
    expect(serving.models).toEqual({
      status: 200,
      ids: ["Qwen/Qwen2.5-0.5B-Instruct"],
      listsRepository: true,
    });
    expect(serving.resumeRunning).toEqual({ ok: true, state: "running" });
    expect(serving.createdAtTexts).toHaveLength(3);
    expect(serving.createdAtAgree).toBe(true);
    expect(serving.catalog).toMatchObject({
      repoId: "Qwen/Qwen3-0.6B",
      instance: "nvidia-l4 x1",
      usdPerHour: 0.8,
      scaling: { minReplica: 1, maxReplica: 1 },
      reachedState: "running",
      models: { status: 200, ids: ["Qwen/Qwen3-0.6B"] },
    });
    expect(serving.catalog.image).toMatchObject({ vLLM: { port: 8000 } });
    expect(findings.jobs.beforeReady?.status).toBe(503);
    expect(findings.jobs.withToken?.status).toBe(200);
    expect(findings.jobs.noToken?.status).toBe(401);
    expect(findings.jobs.wrongToken?.status).toBe(401);
    expect(findings.jobs.afterCancelStage).toBe("CANCELED");
    expect(findings.jobs.stagesSeen).toEqual(["SCHEDULING", "RUNNING", "CANCELED"]);
    expect(JSON.stringify(findings)).not.toContain(ALICE);
    // Nothing left running or billing.
    expect(h.emu.endpoints.list("alice")).toEqual([]);
    expect(h.emu.jobs.list("alice").every((job) => job.stage === "CANCELED")).toBe(true);
    writeReport(join(tmpdir(), "pair-hf-conformance-emulator.json"), "emulator", findings);
  });

  it("creates nothing when the prices over the deadline exceed the budget", async () => {
    const { h, o } = await options({ maxUsd: 0.1 });
    await expect(new HfConformance(o).run()).rejects.toThrow(
      /budget: worst case .* exceeds maxUsd 0.1; nothing was created/,
    );
    expect(h.emu.endpoints.list("alice")).toEqual([]);
    expect(h.emu.jobs.list("alice")).toEqual([]);
  });
});

describe.skipIf(liveToken === undefined)(
  "live Hugging Face conformance — skipped unless PAIR_LIVE_HF_TOKEN is set: it rents a real GPU endpoint and a GPU Job (hard budget < $2, docs/live-conformance.md)",
  () => {
    let run: HfConformance | undefined;
    afterAll(async () => {
      // Whatever happened, nothing this run created is left billing.
      await run?.cleanup();
    });

    it(
      "error bodies, 503 / X-Scale-Up-Timeout, pause, createdAt on recreate, Jobs exposed-port auth — on live Hugging Face",
      { timeout: 100 * 60_000 },
      async () => {
        const token = new HfToken(liveToken ?? "");
        const env = (name: string, fallback: string) => process.env[name] ?? fallback;
        const deadlineMin = Number(env("PAIR_LIVE_HF_DEADLINE_MIN", "20"));
        const maxUsd = Number(env("PAIR_LIVE_HF_MAX_USD", "1"));
        if (!(deadlineMin > 0 && deadlineMin <= 45))
          throw new Error("PAIR_LIVE_HF_DEADLINE_MIN: expected minutes in (0, 45]");
        if (!(maxUsd > 0 && maxUsd <= 2)) throw new Error("PAIR_LIVE_HF_MAX_USD: expected USD in (0, 2]");
        const endpoints = new HttpsEndpointsTransport({ token });
        const jobs = new HttpsJobsTransport({ token });
        const namespace = process.env["PAIR_LIVE_HF_NAMESPACE"] ?? (await endpoints.whoami()).name;
        const [instanceType, instanceSize] = env("PAIR_LIVE_HF_ENDPOINT_HW", "nvidia-l4:x1").split(":");
        run = new HfConformance({
          endpoints,
          jobs,
          namespace,
          endpointsApi: DEFAULT_ENDPOINTS_API,
          catalogModel: env(
            "PAIR_LIVE_HF_CATALOG_MODEL",
            env("PAIR_LIVE_HF_MODEL", "Qwen/Qwen2.5-0.5B-Instruct"),
          ),
          token,
          wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
          nowMs: () => Date.now(),
          endpoint: {
            vendor: env("PAIR_LIVE_HF_VENDOR", "aws"),
            region: env("PAIR_LIVE_HF_REGION", "us-east-1"),
            instanceType: instanceType ?? "nvidia-l4",
            instanceSize: instanceSize ?? "x1",
          },
          jobFlavor: env("PAIR_LIVE_HF_JOB_FLAVOR", "l4x1"),
          model: env("PAIR_LIVE_HF_MODEL", "Qwen/Qwen2.5-0.5B-Instruct"),
          image: env("PAIR_LIVE_HF_IMAGE", "vllm/vllm-openai:v0.23.0"),
          runName: `pair-conf-${Date.now().toString(36)}`,
          deadlineMs: deadlineMin * 60_000,
          maxUsd,
          pollMs: 15_000,
          scaleUpTimeoutS: 600,
          log: (line) => console.log(line),
        });
        const reportPath = env("PAIR_LIVE_HF_REPORT", join(process.cwd(), "hf-live-conformance-report.json"));
        try {
          const findings = await run.run();
          writeReport(reportPath, "live", findings);
          console.log(`live Hugging Face findings written to ${reportPath}`);
          expect(findings.cleanup.some((line) => /FAILED/.test(line))).toBe(false);
        } catch (error) {
          writeReport(reportPath, "live (failed)", run.findings);
          throw error;
        } finally {
          await endpoints.close();
          await jobs.close();
        }
      },
    );
  },
);
