/**
 * A real loopback cluster for the dashboard's browser tests and screenshots: a sponsor node holding
 * a rented node `gpu-rent` (an HTTPS OpenAI-compatible emulator behind a throwaway CA, reached with
 * a bearer token) and a managed Hugging Face endpoint `gpu-hf` (alice/qwen on the Hugging Face
 * emulator over HTTPS, virtual time running at real speed from now, caps $5/day and $50/month, unless told), and
 * a peer `laptop` with a local Ollama emulator, paired by PIN. Both serve the dashboard built into a
 * temp folder from the current sources. The sponsor's tokens are handed to it in memory (the
 * credential store has its own tests), so no Secret Service is needed.
 * Must not know: what a test asserts, the browser.
 */

import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import { HfToken, HttpsEndpointsTransport } from "@pair/huggingface";
import { createTestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import { parseConfig } from "../../../node/src/config/index.js";
import { startNode } from "../../../node/src/node.js";
import {
  joinWith,
  showPin,
  startTestNodeWith,
  type TestNode,
} from "../../../node/test/cluster/node-pair-harness.js";
import { startRentedEndpoint, type RentedEndpoint } from "../../../node/test/rented/rented-harness.js";
import { SPEC } from "../../../node/test/support/hf-alice.js";
import { sponsorNodeOptions } from "../../../node/test/support/sponsor-options.js";

/** Made at run time: the repository never holds a token-shaped string. */
export const RENTED_TOKEN = `hf_${randomBytes(18).toString("hex")}`;
export const RENTED_MODEL = "llama-70b";
/** The managed Hugging Face endpoint's token, node name and model. */
export const HF_TOKEN = `hf_${randomBytes(18).toString("hex")}`;
export const HF_NODE = "gpu-hf";
export const HF_MODEL = SPEC.repository;
export const LAPTOP_MODEL = "qwen2.5:7b";

const DASHBOARD_DIR = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Build the dashboard from its sources into `outDir` (what `npm run build:ui` does into dist/), so a
 * test always drives the current sources. Vite's CLI in a child process: its JS API would pull Vite
 * into the test's module graph for nothing.
 */
export async function buildDashboard(outDir: string): Promise<void> {
  const vite = join(dirname(createRequire(import.meta.url).resolve("vite/package.json")), "bin", "vite.js");
  await promisify(execFile)(
    process.execPath,
    [vite, "build", "--outDir", outDir, "--emptyOutDir", "--logLevel", "warn"],
    {
      cwd: DASHBOARD_DIR,
      timeout: 60_000,
    },
  );
}

export interface UiCluster {
  readonly sponsor: TestNode;
  readonly laptop: TestNode;
  readonly rented: RentedEndpoint;
  readonly hf: HuggingFaceEmulator;
  close(): Promise<void>;
}

export interface UiClusterOptions {
  /** The rented node's delay between tokens (ms) and tokens per answer: how long a job runs. */
  readonly tokenDelayMs?: number;
  readonly maxTokens?: number;
  /** The Hugging Face world: where its virtual clock starts (default now), gpu-hf's daily cap in USD
   * (default 5; null: no cap, `budget: { unlimited: true }`) and its endpoint's scale-to-zero in min
   * (default 15). */
  readonly hf?: {
    readonly startMs?: number;
    readonly usdPerDay?: number | null;
    readonly scaleToZeroMin?: number;
  };
}

export async function startUiCluster(options: UiClusterOptions = {}): Promise<UiCluster> {
  const dir = mkdtempSync(join(tmpdir(), "pair-ui-cluster-"));
  const cleanups: (() => Promise<unknown>)[] = [
    () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  ];
  const close = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const uiDir = join(dir, "ui");
    await buildDashboard(uiDir);
    const ca = await createTestCa();
    const rented = await startRentedEndpoint(ca, {
      apiKey: RENTED_TOKEN,
      models: [RENTED_MODEL],
      tokenDelayMs: options.tokenDelayMs ?? 0,
      maxTokens: options.maxTokens ?? 6,
    });
    cleanups.push(() => rented.engine.close());
    const hf = await startHf(ca, options.hf?.startMs ?? Date.now(), options.hf?.scaleToZeroMin ?? 15);
    cleanups.push(() => hf.close());
    const sponsor = await startSponsor(
      dir,
      uiDir,
      ca.certPem,
      rented.baseUrl,
      hf,
      options.hf?.usdPerDay === undefined ? 5 : options.hf.usdPerDay,
    );
    cleanups.push(() => sponsor.close());
    const laptop = await startTestNodeWith("laptop", {
      models: [LAPTOP_MODEL],
      refreshMs: 150,
      timeoutMs: 400,
      uiDir,
    });
    cleanups.push(() => laptop.close());
    const joined = await joinWith(laptop, sponsor, await showPin(sponsor));
    if (joined.status !== 200) throw new Error(`laptop could not pair with sponsor: HTTP ${joined.status}`);
    return { sponsor, laptop, rented, hf, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The Hugging Face emulator with alice/qwen created (running within a second of real time). */
async function startHf(
  ca: Awaited<ReturnType<typeof createTestCa>>,
  startMs: number,
  scaleToZeroTimeoutMin: number,
): Promise<HuggingFaceEmulator> {
  const leaf = await ca.issue();
  const hf = await startHuggingFaceEmulator({
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    tokens: { [HF_TOKEN]: { namespace: "alice" } },
    startMs,
    timeScale: 1,
    timings: { pendingMs: 200, initializingMs: 400, scaleUpMs: 400, updatingMs: 400 },
  });
  const api = new HttpsEndpointsTransport({
    token: new HfToken(HF_TOKEN),
    endpointsApi: hf.endpointsApiUrl,
    hubApi: hf.hubApiUrl,
    extraCaPem: ca.certPem,
  });
  try {
    await api.createEndpoint("alice", { ...SPEC, scaleToZeroTimeoutMin });
  } finally {
    await api.close();
  }
  return hf;
}

/**
 * The sponsor: no engine; `gpu-rent` (not shared at first) and the managed `gpu-hf`, their tokens
 * in memory; managed passes every 200 ms on the emulator's clock.
 */
async function startSponsor(
  dir: string,
  uiDir: string,
  caPem: string,
  baseUrl: string,
  hf: HuggingFaceEmulator,
  usdPerDay: number | null,
): Promise<TestNode> {
  const dataDir = join(dir, "sponsor-data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, caPem);
  const yaml = (port: number, clusterPort: number) =>
    [
      "node:",
      "  name: sponsor",
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      `  cluster_listen: 127.0.0.1:${clusterPort}`,
      "  discovery: { mdns: false }",
      "engines: []",
      "rented_nodes:",
      "  - name: gpu-rent",
      "    provider: openai-compatible",
      `    base_url: ${baseUrl}`,
      "    credential: os-credential-store:pair/dashboard-test",
      "    share_with_cluster: false",
      "    timeouts: { cold_start_s: 10 }",
      `  - name: ${HF_NODE}`,
      "    provider: huggingface-endpoint",
      "    endpoint: alice/qwen",
      "    credential: os-credential-store:pair/dashboard-hf",
      "    timeouts: { cold_start_s: 20 }",
      "    lifecycle: { managed: true, idle_pause_min: 240, exit_timeout_s: 2 }",
      usdPerDay === null
        ? "    budget: { unlimited: true }"
        : `    budget: { usd_per_day: ${usdPerDay}, usd_per_month: 50 }`,
      "providers:",
      `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl}, catalog_api: ${hf.catalogApiUrl} }`,
      "tls:",
      `  extra_ca_file: ${caFile}`,
    ].join("\n");
  const config = parseConfig(yaml(11434, 14323), "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
  const log: string[] = [];
  const node = await startNode({
    config,
    // Wall time is the emulator's (billing, budgets, idle): a test or the screenshots may move it on.
    ...sponsorNodeOptions({
      log,
      wallMs: () => hf.nowMs(),
      tickMs: 200,
      pollMs: 50,
      seams: {
        credentials: {
          get: (ref) =>
            Promise.resolve(
              new Redacted(
                ref.account === "dashboard-hf" || ref.account === "hf" ? HF_TOKEN : RENTED_TOKEN,
                "test token",
              ),
            ),
        },
        uiDir,
      },
    }),
  });
  const configFile = join(dir, "sponsor.yaml");
  writeFileSync(configFile, yaml(node.port, node.cluster.port));
  return {
    node,
    name: "sponsor",
    dataDir,
    clusterAddress: `127.0.0.1:${node.cluster.port}`,
    configFile,
    log,
    engine: undefined,
    close: () => node.close(500),
    stop: () => node.close(500),
    restart: () => Promise.reject(new Error("not supported")),
  };
}
