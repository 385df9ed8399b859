// `pair demo --tour-only --json` in-process: the two-node sandbox comes up on loopback (A sponsor, B
// peer, paired by PIN, an emulated Hugging Face over HTTPS with the demo's own CA, the token only in
// the sandbox credential source — no Secret Service needed), the tour runs the seed's validation
// steps 1–7 on virtual time, and each step's outcome is asserted from the JSON line; then the
// sandbox is gone. A second run stays up: `pair nodes` on B works with the printed config, Ctrl-C
// removes everything.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoClusterJson } from "@pair/demo";
import type { TourStep } from "@pair/demo";
import {
  manualSignals,
  portClosed,
  runCli,
  startCli,
  type CliResult,
} from "../../node/test/cli/cli-harness.js";

let tmp: string;
let run: CliResult;
let json: DemoClusterJson;
const TOUR_TIMEOUT_MS = 120_000;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "pair-demo-tour-test-"));
  run = await runCli(["demo", "--tour-only", "--json", "--port", "0"], { tmpDir: tmp });
  json = JSON.parse(run.stdout) as DemoClusterJson;
}, TOUR_TIMEOUT_MS);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function step(n: number): TourStep {
  const found = json.steps.find((s) => s.step === n);
  if (found === undefined) throw new Error(`no step ${n}; stderr:\n${run.stderr}`);
  return found;
}

describe("pair demo --tour-only --json", () => {
  it("exits 0 with one JSON line: seven steps, all shown; the narrative on stderr; the sandbox removed", () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split("\n")).toHaveLength(2);
    expect(json.ok).toBe(true);
    expect(json.steps.map((s) => [s.step, s.ok])).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => [n, true]));
    expect(json.nodes.a.name).toBe("node-a");
    expect(json.nodes.b.name).toBe("node-b");
    for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(run.stderr).toContain(`✓ step ${n} shown`);
    expect(run.stderr).toContain("The tour showed all 7 steps");
    expect(existsSync(json.dir)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("seed step 1 (attach and share): refused naming gpu-hf while unshared; shared, served and streamed from B; in Jobs on A and B; no token on B", () => {
    expect(step(1).outcome).toMatchObject({
      refused: { status: 403, code: "rented_node_not_shared" },
      served: { status: 200, served_by: "gpu-hf" },
      job_on_a: "gpu-hf",
      job_on_b: "gpu-hf",
      token_found_on_b: [],
    });
    expect((step(1).outcome["refused"] as { message: string }).message).toContain("gpu-hf");
    expect((step(1).outcome["served"] as { events: number }).events).toBeGreaterThan(1);
  });

  it("seed step 2 (cold start): served from scaled-to-zero past the old 120 s, held by X-Scale-Up-Timeout", () => {
    const outcome = step(2).outcome;
    expect(outcome).toMatchObject({ before: "scaledToZero", status: 200, served_by: "gpu-hf" });
    expect(outcome["cold_start_ms"]).toBeGreaterThan(120_000);
    expect(outcome["held"]).toBeGreaterThan(0);
  });

  it("seed step 3 (idle pause and wake): paused by idle; wake off refuses naming the paused node; wake on serves", () => {
    const outcome = step(3).outcome;
    expect(outcome).toMatchObject({
      paused_state: "paused",
      paused_by: "idle",
      wake_on: { status: 200, served_by: "gpu-hf" },
    });
    const off = outcome["wake_off"] as { status: number; code: string; message: string };
    expect(off.status).toBe(409);
    expect(["rented_node_paused", "rented_node_ineligible"]).toContain(off.code);
    expect(off.message).toMatch(/gpu-hf.*paused/);
    expect(off.message).not.toMatch(/inventory unavailable/);
  });

  it("seed step 4 (budget): the $0.10/day cap pauses the endpoint; B sees it ineligible with the reason", () => {
    const outcome = step(4).outcome;
    expect(outcome).toMatchObject({ state: "paused", paused_by: "budget-exceeded", eligible_on_b: false });
    expect(outcome["spend_today_usd"]).toBeLessThanOrEqual(0.1);
    expect(outcome["spend_today_usd"]).toBeGreaterThan(0.08);
    expect(outcome["billed_minutes"]).toBeGreaterThanOrEqual(6);
    expect(outcome["reason_on_b"]).toMatch(/budget/);
    expect(JSON.stringify(outcome["refused"])).toMatch(/budget/);
  });

  it("seed step 5 (sponsor exit): running before A quits, paused after", () => {
    expect(step(5).outcome).toEqual({ before: "running", after: "paused" });
  });

  it("seed step 6 (precedence): default → the local copy serves both; overflow with it busy → gpu-hf serves", () => {
    expect(step(6).outcome).toEqual({ default: ["node-a", "node-a"], overflow: ["node-a", "gpu-hf"] });
  });

  it("seed step 7 (refusals): http:// off loopback, a public endpoint, a wrong token — each its own error", () => {
    expect(step(7).outcome).toEqual({
      http_url: { status: 400, code: "insecure_url" },
      public_endpoint: "public_endpoint_refused",
      wrong_token: "credential_rejected",
    });
  });
});

describe("pair demo (stays up after the tour)", () => {
  it(
    "prints what to try; pair nodes on B answers with the printed config; Ctrl-C removes everything",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "pair-demo-stay-test-"));
      try {
        const signals = manualSignals();
        const demo = startCli(["demo", "--port", "0"], { signals, tmpDir: dir });
        const guide = await demo.waitFor("stdout", /Ctrl-C stops both nodes/, TOUR_TIMEOUT_MS);
        const configB = /PAIR_CONFIG=(\S+) npx pair nodes/.exec(guide)?.[1] ?? "";
        const urlB = /B {2}node-b \(peer\) +(http:\/\/127\.0\.0\.1:\d+)/.exec(guide)?.[1] ?? "";
        expect(guide).toContain(`curl -sN ${urlB}/v1/chat/completions`);
        expect(guide).toMatch(/npx pair ui/);
        expect(guide).toMatch(/npx pair jobs/);
        const nodes = await runCli(["nodes", "--json"], { env: { PAIR_CONFIG: configB } });
        expect(nodes.code, nodes.stderr).toBe(0);
        const rows = JSON.parse(nodes.stdout) as { name: string; kind: string }[];
        expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(["node-a", "node-b", "gpu-hf"]));
        signals.send("SIGINT");
        expect((await demo.done).code).toBe(0);
        expect(existsSync(configB)).toBe(false);
        expect(await portClosed(Number(new URL(urlB).port))).toBe(true);
        expect(readdirSync(dir)).toEqual([]);
        expect(signals.listeners).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TOUR_TIMEOUT_MS,
  );

  it(
    "Ctrl-C during the tour stops it between steps: exit 0, nothing left behind",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "pair-demo-stop-test-"));
      try {
        const signals = manualSignals();
        const demo = startCli(["demo", "--tour-only", "--port", "0"], { signals, tmpDir: dir });
        await demo.waitFor("stdout", /Step 1 — /, TOUR_TIMEOUT_MS);
        signals.send("SIGINT");
        const result = await demo.done;
        expect(result.code).toBe(0);
        expect(result.stderr).toMatch(/stopped during the tour, after [12] of 7 steps/);
        expect(result.stdout).not.toContain("Step 3 — ");
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TOUR_TIMEOUT_MS,
  );
});
