/**
 * The crash tests' world: the sponsor as a real `pair serve` child process with one managed Hugging
 * Face endpoint (`gpu-hf` → alice/qwen) against the HF emulator running in the test process over
 * HTTPS (a throwaway CA trusted through `tls.extra_ca_file`), the token in the real OS credential
 * store. The child's wall clock and the emulator's run on the same virtual time, SCALE times real
 * time (the `scaled-clock.mjs` preload), so minutes bill in seconds while the child keeps its default
 * pass interval (10 s real) and poll (1 s real). The child can be SIGKILLed, SIGTERMed and started
 * again on the same data dir; its SQLite stores are read from here.
 * Must not know: what a test asserts.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  startHuggingFaceEmulator,
  type HuggingFaceEmulator,
  type JobsEmulatorOptions,
} from "@pair/emulators";
import { HfToken, HttpsEndpointsTransport, type HfEndpointSpec } from "@pair/huggingface";
import { spendOf, type NodeSpend } from "@pair/ledger";
import type { HostingState } from "@pair/provision";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "../../src/cluster/index.js";
import type { CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { uniqueName } from "../credentials/secret-service.js";
import { fakeHfToken } from "../support/fake-token.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));
const CLOCK_PRELOAD = fileURLToPath(new URL("./scaled-clock.mjs", import.meta.url));

/** Virtual ms per real ms: a billed minute is 3 s; the child's 10 s pass is 200 virtual s. */
export const SCALE = 20;
export const MIN = 60_000;
export const NODE = "gpu-hf";
export const MODEL = "Qwen/Qwen3-0.6B";

export const SPEC: HfEndpointSpec = {
  name: "qwen",
  accessType: "private",
  vendor: "aws",
  region: "us-east-1",
  accelerator: "gpu",
  instanceType: "nvidia-l4",
  instanceSize: "x1",
  minReplica: 0,
  maxReplica: 1,
  scaleToZeroTimeoutMin: 15,
  repository: MODEL,
};

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `check` every 25 ms until it gives a value, or throws after `withinMs` real ms. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  withinMs: number,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface SponsorChild {
  readonly hf: HuggingFaceEmulator;
  /** The test's own Endpoints API client (alice's token). */
  readonly api: HttpsEndpointsTransport;
  readonly dataDir: string;
  readonly url: string;
  /** Everything the children wrote on stdout and stderr, across restarts. */
  output: string;
  readonly process: ChildProcess | undefined;
  /** Start `pair serve` (again) on the same data dir; resolves once it answers on its port. */
  start(): Promise<void>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** Send SIGTERM (a graceful stop: pause at exit) without waiting. */
  term(): void;
  /** Resolves with the exit code once the child exited. */
  exited(): Promise<number | null>;
  adminToken(): string;
  /** The credential reference (`os-credential-store:service/account`) holding the HF token. */
  readonly credentialRef: string;
  /** Files of the data dir and lines of the children's output that hold the HF token (should be none). */
  tokenLeaks(): string[];
  /** GET an admin path with the admin token. */
  admin(path: string): Promise<unknown>;
  /** A managed node's hosting store (default the configured one), read from SQLite (the child may be running or dead). */
  hosting(node?: string): HostingState;
  /** A managed node's ledger spend (default the configured one), read from SQLite at the emulator's now. */
  spend(node?: string): NodeSpend | undefined;
  cleanup(): Promise<void>;
}

/** More of the world, for other providers (the Hugging Face endpoint node is the default). */
export interface SponsorChildExtra {
  /** The `rented_nodes:` items instead of the `gpu-hf` endpoint node (`lifecycle` is then unused). */
  readonly nodes?: (credentialRef: string) => readonly string[];
  /** The Jobs API's timings (and flavors, page size) in the emulator. */
  readonly jobs?: JobsEmulatorOptions;
}

/** `lifecycle` are YAML lines for the rented node entry (indented four spaces). */
export async function sponsorChild(
  ca: TestCa,
  lifecycle: readonly string[],
  engine: { tokenDelayMs?: number; maxTokens?: number } = {},
  pendingMs = 30_000,
  extra: SponsorChildExtra = {},
): Promise<SponsorChild> {
  const token = fakeHfToken();
  const leaf = await ca.issue();
  const originMs = Date.now();
  const hf = await startHuggingFaceEmulator({
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    tokens: { [token]: { namespace: "alice" } },
    startMs: originMs,
    timeScale: SCALE,
    timings: { pendingMs, initializingMs: 60_000, scaleUpMs: 30_000, updatingMs: 30_000 },
    engine: { tokenDelayMs: engine.tokenDelayMs ?? 0, maxTokens: engine.maxTokens ?? 4 },
    ...(extra.jobs === undefined ? {} : { jobs: extra.jobs }),
  });
  const api = new HttpsEndpointsTransport({
    token: new HfToken(token),
    endpointsApi: hf.endpointsApiUrl,
    hubApi: hf.hubApiUrl,
    extraCaPem: ca.certPem,
  });
  const dir = mkdtempSync(join(tmpdir(), "pair-crash-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const credential: CredentialRef = { service: "pair", account: uniqueName("crash") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(credential, new Redacted(token, "test token"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const configFile = join(dir, "pair.yaml");
  writeFileSync(
    configFile,
    [
      "node:",
      "  name: sponsor",
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      `  cluster_listen: 127.0.0.1:${await freePort()}`,
      "  discovery: { mdns: false }",
      "engines: []",
      "rented_nodes:",
      ...(extra.nodes?.(`os-credential-store:${credential.service}/${credential.account}`) ?? [
        `  - name: ${NODE}`,
        "    provider: huggingface-endpoint",
        "    endpoint: alice/qwen",
        `    credential: os-credential-store:${credential.service}/${credential.account}`,
        "    timeouts: { cold_start_s: 30 }",
        ...lifecycle,
      ]),
      "providers:",
      `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
      "tls:",
      `  extra_ca_file: ${caFile}`,
      "",
    ].join("\n"),
  );

  let child: ChildProcess | undefined;
  let exit: Promise<number | null> = Promise.resolve(null);
  const world: SponsorChild = {
    hf,
    api,
    dataDir,
    url,
    output: "",
    get process() {
      return child;
    },
    async start() {
      const started = spawn(
        process.execPath,
        ["--import", CLOCK_PRELOAD, PAIR_BIN, "serve", "--config", configFile],
        {
          stdio: ["ignore", "pipe", "pipe"],
          env: {
            ...process.env,
            PAIR_TEST_TIME_SCALE: String(SCALE),
            PAIR_TEST_TIME_ORIGIN_MS: String(originMs),
          },
        },
      );
      child = started;
      exit = new Promise((resolve) => started.once("exit", (code) => resolve(code)));
      started.stdout?.on("data", (d: Buffer) => (world.output += d.toString()));
      started.stderr?.on("data", (d: Buffer) => (world.output += d.toString()));
      await until("pair serve answers", async () => (await fetch(`${url}/`)).status === 200, 30_000).catch(
        (e: unknown) => {
          throw new Error(`${String(e)}\n${world.output}`);
        },
      );
    },
    async kill() {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exit;
    },
    term() {
      child?.kill("SIGTERM");
    },
    exited: () => exit,
    adminToken: () => readFileSync(join(dataDir, "admin.token"), "utf8").trim(),
    credentialRef: `os-credential-store:${credential.service}/${credential.account}`,
    tokenLeaks() {
      const files = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name))
        .filter((f) => readFileSync(f).includes(token));
      const lines = world.output.split("\n").filter((l) => l.includes(token));
      return [...files, ...lines];
    },
    async admin(path) {
      const res = await fetch(`${url}${path}`, {
        headers: { authorization: `Bearer ${world.adminToken()}` },
      });
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      return res.json();
    },
    hosting(node = NODE) {
      const hosting = new SqliteHostingStore({ path: join(dataDir, "managed", `${node}.db`) });
      try {
        return hosting.load();
      } finally {
        hosting.close();
      }
    },
    spend(node = NODE) {
      const ledger = new SqliteLedgerStore({ path: join(dataDir, "managed", "ledger.db") });
      try {
        const state = ledger.load();
        return state === undefined ? undefined : spendOf(state, node, hf.nowMs());
      } finally {
        ledger.close();
      }
    },
    async cleanup() {
      await world.kill();
      await api.close();
      await hf.close();
      await store.delete(credential).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}
