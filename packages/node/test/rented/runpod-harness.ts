/**
 * A sponsor with one managed Runpod node (`gpu-rp`, a `pod:` section) against the Runpod emulator over
 * HTTPS (a throwaway CA trusted through `tls.extra_ca_file`), both keys (Runpod API, vLLM) in the real
 * OS credential store, the emulator's virtual clock as wall time and no automatic pass: the test moves
 * time (`advance`) and runs passes. The sponsor can be closed and started again on the same data dir.
 * Must not know: what a test asserts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRunpodEmulator, type RunpodEmulator, type RunpodEmulatorOptions } from "@pair/emulators";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { uniqueName } from "../credentials/secret-service.js";
import { budgetLines } from "../support/rented-budget.js";
import { sponsorNodeOptions } from "../support/sponsor-options.js";
import { chatReply, type ChatReply } from "../support/chat.js";

export const NODE = "gpu-rp";
export const SERVED = "qwen";
/** Emulator defaults: provision 5 s + image pull 60 s + model load 120 s. */
export const COLD_START_MS = 185_000;

/** Made at run time: no token-shaped secret is committed. */
function secret(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
}

/** The default `pod:` section (L40S, 50 GB disk + 20 GB volume), idle timeout in minutes. */
export function podLines(idleMin = 5): string[] {
  return [
    `      model: ${SERVED}`,
    "      vllm_model: Qwen/Qwen2.5-7B-Instruct",
    "      gpu_types: [NVIDIA L40S]",
    "      image: vllm/vllm-openai:v0.11.0",
    "      volume_gb: 20",
    "      vllm_args: [--max-model-len, '8192']",
    "      api_key_secret: vllm_key",
    `      idle_timeout_min: ${idleMin}`,
  ];
}

export interface RunpodNodeWorld {
  readonly emu: RunpodEmulator;
  readonly dir: string;
  readonly dataDir: string;
  readonly log: string[];
  readonly vllmKey: string;
  readonly apiKey: string;
  node: RunningNode;
  start(): Promise<RunningNode>;
  /** Move virtual time in steps, with a pass after each. */
  advance(ms: number, stepMs?: number): Promise<void>;
  /** Move virtual time while `pending` has not settled (a request waiting for its pod). */
  advanceUntil<T>(pending: Promise<T>, maxMs: number, stepMs?: number): Promise<T>;
  cleanup(): Promise<void>;
}

/** `pod:` lines (indented for the entry) replace the defaults given here. */
export async function runpodWorld(
  ca: TestCa,
  options: {
    pod?: readonly string[];
    lines?: readonly string[];
    /** Store the vLLM key in the credential store (default true). */
    storeVllmKey?: boolean;
    /** The `lifecycle:` flow mapping (default `{ exit_timeout_s: 5 }`). */
    lifecycle?: string;
    emulator?: Partial<RunpodEmulatorOptions>;
    /** The YAML of `engines:` list items (a local engine beside the rented node); none by default. */
    engines?: readonly string[];
    /** The cold-start budget (`timeouts.cold_start_s`, real seconds; default 600). */
    coldStartS?: number;
  } = {},
): Promise<RunpodNodeWorld> {
  const leaf = await ca.issue();
  const apiKey = secret("rp_test_");
  const vllmKey = secret("sk-vllm-");
  const clock = { ms: Date.parse("2026-03-02T10:00:00Z") };
  const emu = await startRunpodEmulator({
    apiKey,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    secrets: { vllm_key: vllmKey },
    now: () => clock.ms,
    ...options.emulator,
  });
  const dir = mkdtempSync(join(tmpdir(), "pair-runpod-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const apiRef: CredentialRef = { service: "pair", account: uniqueName("runpod-api") };
  const vllmRef: CredentialRef = { service: "pair", account: uniqueName("runpod-vllm") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(apiRef, new Redacted(apiKey, "test Runpod key"));
  if (options.storeVllmKey !== false) await store.set(vllmRef, new Redacted(vllmKey, "test vLLM key"));
  const configText = [
    "node:",
    "  name: sponsor",
    `  data_dir: ${dataDir}`,
    "  listen: 127.0.0.1:11434",
    "  cluster_listen: 127.0.0.1:14323",
    "  discovery: { mdns: false }",
    ...(options.engines === undefined || options.engines.length === 0
      ? ["engines: []"]
      : ["engines:", ...options.engines]),
    "rented_nodes:",
    `  - name: ${NODE}`,
    "    provider: runpod",
    `    credential: os-credential-store:${apiRef.service}/${apiRef.account}`,
    `    vllm_api_key: os-credential-store:${vllmRef.service}/${vllmRef.account}`,
    `    timeouts: { cold_start_s: ${options.coldStartS ?? 600} }`,
    `    lifecycle: ${options.lifecycle ?? "{ exit_timeout_s: 5 }"}`,
    "    pod:",
    ...(options.pod ?? podLines()),
    ...(options.lines ?? []),
    ...budgetLines(options.lines ?? []),
    "providers:",
    `  runpod: { api: ${emu.apiBaseUrl} }`,
    "tls:",
    `  extra_ca_file: ${caFile}`,
  ].join("\n");
  const log: string[] = [];
  let closed = false;
  const world: RunpodNodeWorld = {
    emu,
    dir,
    dataDir,
    log,
    vllmKey,
    apiKey,
    node: undefined as unknown as RunningNode,
    start: async () => {
      const config = parseConfig(configText, "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
      world.node = await startNode({
        config,
        ...sponsorNodeOptions({
          log,
          wallMs: () => clock.ms,
          overrides: { runpodProxyUrl: (podId, port) => emu.proxyUrl(podId, port) },
        }),
      });
      return world.node;
    },
    advance: async (ms, stepMs = 5_000) => {
      for (let t = 0; t < ms; t += stepMs) {
        const step = Math.min(stepMs, ms - t);
        clock.ms += step;
        emu.advance(0);
        await world.node.runpod.tick();
      }
    },
    advanceUntil: async (pending, maxMs, stepMs = 5_000) => {
      let settled = false;
      void pending.then(
        () => (settled = true),
        () => (settled = true),
      );
      for (let t = 0; t < maxMs && !settled; t += stepMs) {
        await world.node.runpod.node(NODE)?.supervisor.settled();
        clock.ms += stepMs;
        emu.advance(0);
        await world.node.runpod.tick();
        await new Promise((r) => setTimeout(r, 25));
      }
      return pending;
    },
    cleanup: async () => {
      if (closed) return;
      closed = true;
      await world.node?.close(200).catch(() => undefined);
      await emu.close();
      await store.delete(apiRef).catch(() => false);
      await store.delete(vllmRef).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** A chat request for the pod's model through the sponsor; the text of the answer (SSE when streamed). */
export function chat(w: RunpodNodeWorld, stream = true): Promise<ChatReply> {
  return chatReply(w.node.url, { model: SERVED, stream });
}
