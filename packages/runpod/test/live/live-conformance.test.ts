// Live conformance: the seed's "Not verified" list (listing returns the env a pod was created with;
// the secret reference is substituted into the vLLM key; DELETE stops billing; which proxy URL
// serves), checked once against the emulator in virtual time (always) and once against live
// Runpod, only when PAIR_LIVE_RUNPOD_KEY is set: it rents a real GPU and costs real money, under a
// hard budget (docs/live-conformance.md). The live run is the only skipped test in this package.
import { afterEach, describe, expect, it } from "vitest";
import { HttpsRunpodTransport, RedactedString } from "../../src/index.js";
import { ACCOUNT, VLLM_KEY, startWorld, type RunpodWorld } from "../adapter/runpod-harness.js";
import { runConformance } from "./conformance-checks.js";

const liveKey = process.env["PAIR_LIVE_RUNPOD_KEY"];

describe("conformance checks against the emulator (the same steps the live run takes)", () => {
  const worlds: RunpodWorld[] = [];
  afterEach(async () => {
    await Promise.all(worlds.splice(0).map((w) => w.close()));
  });

  it("env read back, secret substituted, proxy serves, DELETE ends billing", async () => {
    const w = await startWorld({ gpuTypes: [{ id: "NVIDIA RTX A4000", securePriceUsdPerHr: 0.25 }] });
    worlds.push(w);
    const findings = await runConformance({
      transport: w.transport,
      account: ACCOUNT,
      clock: w.clock,
      wait: (ms) => Promise.resolve(w.advance(ms)),
      proxyUrl: (id, port) => w.emu.proxyUrl(id, port),
      extraCaPem: w.caPem,
      secretName: "vllm_key",
      vllmKey: new RedactedString(VLLM_KEY),
      gpuTypes: ["NVIDIA RTX A4000"],
      cloudType: "SECURE",
      deadlineMs: 20 * 60_000,
      maxUsd: 0.5,
      pollMs: 15_000,
      log: () => undefined,
    });
    expect(findings).toMatchObject({ envReadBack: true, secretSubstituted: true, deleteEndedBilling: true });
    // 64 GPUs of one type: a 400 problem naming the limit, a refusal PAIR does not read as capacity
    // (it stops instead of trying the next GPU type); the live run records v2's own words.
    expect(findings.createRefusal).toMatchObject({ status: 400, kind: "invalid_request" });
    expect(findings.createRefusal.detail).toMatch(/gpu\.count 64/);
    expect(w.emu.pods.list().every((p) => p.wire.status === "TERMINATED")).toBe(true);
  });

  it("deletes the pod at once when its price over the deadline would exceed the budget", async () => {
    const w = await startWorld({ gpuTypes: [{ id: "NVIDIA H100 80GB HBM3", securePriceUsdPerHr: 2.69 }] });
    worlds.push(w);
    await expect(
      runConformance({
        transport: w.transport,
        account: ACCOUNT,
        clock: w.clock,
        wait: (ms) => Promise.resolve(w.advance(ms)),
        proxyUrl: (id, port) => w.emu.proxyUrl(id, port),
        extraCaPem: w.caPem,
        secretName: "vllm_key",
        vllmKey: new RedactedString(VLLM_KEY),
        gpuTypes: ["NVIDIA H100 80GB HBM3"],
        cloudType: "SECURE",
        deadlineMs: 20 * 60_000,
        maxUsd: 0.5,
        pollMs: 15_000,
        log: () => undefined,
      }),
    ).rejects.toThrow(/budget/);
    expect(w.emu.pods.list().map((p) => p.wire.status)).toEqual(["TERMINATED"]);
  });
});

describe.skipIf(liveKey === undefined)(
  "live Runpod conformance — skipped unless PAIR_LIVE_RUNPOD_KEY is set: it rents a real GPU (hard budget, docs/live-conformance.md)",
  () => {
    it(
      "env read back, secret substituted, proxy serves, DELETE ends billing — on live Runpod",
      { timeout: 30 * 60_000 },
      async () => {
        const need = (name: string) => {
          const value = process.env[name];
          if (value === undefined || value === "")
            throw new Error(`${name} is not set: see docs/live-conformance.md (the live run needs it)`);
          return value;
        };
        const deadlineMs = Number(process.env["PAIR_LIVE_RUNPOD_DEADLINE_MIN"] ?? "20") * 60_000;
        const maxUsd = Number(process.env["PAIR_LIVE_RUNPOD_MAX_USD"] ?? "0.50");
        expect(deadlineMs > 0 && deadlineMs <= 30 * 60_000, "deadline at most 30 min").toBe(true);
        expect(maxUsd > 0 && maxUsd <= 2, "budget at most 2 USD").toBe(true);
        const transport = new HttpsRunpodTransport({
          baseUrl: process.env["PAIR_LIVE_RUNPOD_API"] ?? "https://api.runpod.io",
          apiKey: new RedactedString(liveKey ?? "", "runpod key"),
        });
        const clock = { now: () => ({ wallMs: Date.now(), monoMs: performance.now() }) };
        try {
          const findings = await runConformance({
            transport,
            account: process.env["PAIR_LIVE_RUNPOD_ACCOUNT"] ?? "live",
            clock,
            wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
            secretName: need("PAIR_LIVE_RUNPOD_SECRET_NAME"),
            vllmKey: new RedactedString(need("PAIR_LIVE_RUNPOD_VLLM_KEY"), "vllm key"),
            gpuTypes: (
              process.env["PAIR_LIVE_RUNPOD_GPUS"] ??
              "NVIDIA RTX A4000,NVIDIA RTX A5000,NVIDIA RTX 4000 Ada Generation"
            )
              .split(",")
              .map((g) => g.trim()),
            cloudType: process.env["PAIR_LIVE_RUNPOD_CLOUD"] === "SECURE" ? "SECURE" : "COMMUNITY",
            deadlineMs,
            maxUsd,
            pollMs: 15_000,
            log: (line) => console.log(`[live runpod] ${line}`),
          });
          console.log(`[live runpod] findings ${JSON.stringify(findings)}`);
        } finally {
          await transport.close();
        }
      },
    );
  },
);
