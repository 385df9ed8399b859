/**
 * The seed's validation setup on loopback (seed 001, "Validation approach"): node A, the sponsor, with
 * a managed Hugging Face endpoint (`gpu-hf` → alice/qwen serving Qwen/Qwen3-0.6B) on the Hugging Face
 * emulator over HTTPS (a throwaway CA trusted through `tls.extra_ca_file`), its token only in the real
 * OS credential store; node B, a peer paired with A through the real PIN flow. Time on the emulator is
 * virtual (the test moves it and runs managed passes) or scaled (`timeScale` virtual ms per real ms),
 * and A's managed endpoints read their wall clock from it.
 * Must not know: what a step asserts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startEngineEmulator,
  type EngineEmulator,
  type HuggingFaceEmulator,
  type startHuggingFaceEmulator,
} from "@pair/emulators";
import type { HttpsEndpointsTransport } from "@pair/huggingface";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../../src/config/index.js";
import { OsCredentialStore } from "../../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../../src/node.js";
import { joinWith, showPin, startTestNodeWith, type TestNode } from "../../cluster/node-pair-harness.js";
import { uniqueName } from "../../credentials/secret-service.js";
import { until } from "../../support/eventually.js";
import { fakeHfToken } from "../../support/fake-token.js";
import { budgetLines } from "../../support/rented-budget.js";
import { sponsorNodeOptions } from "../../support/sponsor-options.js";
import { HF_TIMINGS, hfForAlice, SPEC } from "../../support/hf-alice.js";

export const TOKEN = fakeHfToken();
export const RENTED = "gpu-hf";
export { SPEC } from "../../support/hf-alice.js";
export const MODEL = SPEC.repository;
export const MIN = 60_000;

export interface WorldOptions {
  /** YAML lines added to gpu-hf's entry (indented for it): `lifecycle:`, `budget:`, `share_with_cluster:`. */
  readonly rentedLines?: readonly string[];
  /** More `rented_nodes:` entries (YAML lines). */
  readonly moreRented?: readonly string[];
  /** A's local Ollama engine (max_concurrent 1) with these models; none by default. */
  readonly localModels?: readonly string[];
  /** The context window of every local model, A's and B's (default: the emulator's). */
  readonly localContextTokens?: number;
  /** B's own Ollama engine with these models; none by default. */
  readonly bModels?: readonly string[];
  /** More top-level YAML (e.g. `model_aliases:`). */
  readonly topLevel?: readonly string[];
  /** 0 (default): virtual time, moved by `advance`. > 0: also this many virtual ms per real ms. */
  readonly timeScale?: number;
  readonly timings?: NonNullable<Parameters<typeof startHuggingFaceEmulator>[0]>["timings"];
  /** Where the endpoint is when A starts (default running). */
  readonly at?: "running" | "paused";
  /** The endpoint's engine pacing (real ms) and answer length. */
  readonly tokenDelayMs?: number;
  readonly maxTokens?: number;
  readonly coldStartS?: number;
  /** Runs once the emulator is up, before A starts (more endpoints, …). */
  readonly beforeStart?: (hf: HuggingFaceEmulator, api: HttpsEndpointsTransport) => Promise<void>;
}

export interface ValidationWorld {
  readonly hf: HuggingFaceEmulator;
  readonly api: HttpsEndpointsTransport;
  readonly a: RunningNode;
  /** A's config file with its real ports (for the CLI). */
  readonly aConfigFile: string;
  readonly aDir: string;
  readonly aLog: readonly string[];
  readonly b: TestNode;
  readonly credential: CredentialRef;
  readonly local: EngineEmulator | undefined;
  /** Quit A (the sponsor's exit, with its exit pause). */
  quitA(): Promise<void>;
  /** Move virtual time in steps, with a managed pass on A after each. */
  advance(ms: number, stepMs?: number): Promise<void>;
  cleanup(): Promise<void>;
}

export async function validationWorld(ca: TestCa, o: WorldOptions = {}): Promise<ValidationWorld> {
  const cleanups: (() => unknown)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse())
      await Promise.resolve()
        .then(c)
        .catch(() => undefined);
  };
  try {
    const { hf, api } = await hfForAlice(ca, TOKEN, {
      timeScale: o.timeScale ?? 0,
      timings: { ...HF_TIMINGS, ...o.timings },
      engine: { tokenDelayMs: o.tokenDelayMs ?? 0, maxTokens: o.maxTokens ?? 4 },
    });
    cleanups.push(() => hf.close());
    cleanups.push(() => api.close());
    await api.createEndpoint("alice", SPEC);
    if ((o.timeScale ?? 0) === 0)
      hf.advance((o.timings?.pendingMs ?? 30_000) + (o.timings?.initializingMs ?? 60_000) + 1_000);
    else await until(() => hf.endpoints.get("alice", "qwen")?.state === "running", 10_000);
    if (o.at === "paused") await api.pause("alice", "qwen");
    await o.beforeStart?.(hf, api);

    const local =
      o.localModels === undefined
        ? undefined
        : await startEngineEmulator({
            api: "ollama",
            name: "a-ollama",
            models: o.localModels.map((name) => ({
              name,
              maxTokens: 50,
              ...(o.localContextTokens === undefined ? {} : { contextTokens: o.localContextTokens }),
            })),
            tokenDelayMs: 20,
          });
    if (local !== undefined) cleanups.push(() => local.close());

    const aDir = mkdtempSync(join(tmpdir(), "pair-validation-a-"));
    cleanups.push(() => rmSync(aDir, { recursive: true, force: true }));
    const dataDir = join(aDir, "data");
    const caFile = join(aDir, "test-ca.pem");
    writeFileSync(caFile, ca.certPem);
    const credential: CredentialRef = { service: "pair", account: uniqueName("validation") };
    const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
    await store.set(credential, new Redacted(TOKEN, "test token"));
    cleanups.push(() => store.delete(credential));
    const yaml = (port: number, clusterPort: number) =>
      [
        "node:",
        "  name: node-a",
        `  data_dir: ${dataDir}`,
        `  listen: 127.0.0.1:${port}`,
        `  cluster_listen: 127.0.0.1:${clusterPort}`,
        "  discovery: { mdns: false }",
        ...(local === undefined
          ? ["engines: []"]
          : [
              "engines:",
              "  - name: a-ollama",
              "    api: ollama",
              `    base_url: ${local.url}`,
              "    max_concurrent: 1",
              "    probe_interval_s: 0.2",
            ]),
        "rented_nodes:",
        `  - name: ${RENTED}`,
        "    provider: huggingface-endpoint",
        "    endpoint: alice/qwen",
        `    credential: os-credential-store:${credential.service}/${credential.account}`,
        `    timeouts: { cold_start_s: ${o.coldStartS ?? 20} }`,
        ...(o.rentedLines ?? []),
        ...budgetLines(o.rentedLines ?? []),
        ...(o.moreRented ?? []).map((l) =>
          l.replaceAll("CREDENTIAL", `${credential.service}/${credential.account}`),
        ),
        ...(o.topLevel ?? []),
        "providers:",
        `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
        "tls:",
        `  extra_ca_file: ${caFile}`,
      ].join("\n");
    const aLog: string[] = [];
    const a = await startNode({
      config: parseConfig(yaml(11434, 14323), "node-a.yaml", { homeDir: aDir, hostName: "node-a" }),
      ...sponsorNodeOptions({
        log: aLog,
        wallMs: () => hf.nowMs(),
        pollMs: 50,
        overrides: { rentedProbeIntervalMs: 100 },
      }),
    });
    let aClosed = false;
    cleanups.push(() => (aClosed ? undefined : a.close(200)));
    const aConfigFile = join(aDir, "pair.yaml");
    writeFileSync(aConfigFile, yaml(a.port, a.cluster.port));

    const b = await startTestNodeWith("node-b", {
      refreshMs: 150,
      timeoutMs: 400,
      ...(o.bModels === undefined ? {} : { models: o.bModels }),
      ...(o.localContextTokens === undefined ? {} : { contextTokens: o.localContextTokens }),
    });
    cleanups.push(() => b.close());
    const aAsNode: TestNode = {
      node: a,
      name: "node-a",
      dataDir,
      clusterAddress: `127.0.0.1:${a.cluster.port}`,
      configFile: aConfigFile,
      log: aLog,
      engine: local,
      close: () => a.close(200),
      stop: () => a.close(200),
      restart: () => Promise.reject(new Error("not supported")),
    };
    const joined = await joinWith(b, aAsNode, await showPin(aAsNode));
    if (joined.status !== 200) throw new Error(`pairing B with A failed: HTTP ${joined.status}`);
    const world: ValidationWorld = {
      hf,
      api,
      a,
      aConfigFile,
      aDir,
      aLog,
      b,
      credential,
      local,
      advance: async (ms, stepMs = 10_000) => {
        for (let t = 0; t < ms; t += stepMs) {
          hf.advance(Math.min(stepMs, ms - t));
          await a.managed.tick();
        }
      },
      quitA: async () => {
        aClosed = true;
        await a.close(200);
      },
      cleanup,
    };
    return world;
  } catch (cause) {
    await cleanup();
    throw cause;
  }
}

/** Admin API call on a running node with its token (POST when `body` is given). */
export async function adminOf(node: RunningNode, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${node.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.json();
}

/** The row of `pair nodes` (`/pair/v1/nodes`) for `name`. */
export async function nodeRow(
  node: RunningNode,
  name = RENTED,
): Promise<Record<string, unknown> | undefined> {
  const rows = (await adminOf(node, "/pair/v1/nodes")) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name);
}
