/**
 * A sponsor with one managed Hugging Face Jobs node (`batch`, a `job:` section) against the Hugging
 * Face emulator with Jobs over HTTPS (a throwaway CA trusted through `tls.extra_ca_file`), the HF token
 * in the real OS credential store, the emulator's virtual clock as wall time and no automatic pass: the
 * test moves time (`advance`) and runs passes. The sponsor can be closed and started again on the same
 * data dir (a restart). `startServed` checks one thing, that the first request is served.
 * Must not know: what a test asserts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import type { TestCa } from "@pair/testkit";
import { request } from "undici";
import { expect } from "vitest";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { uniqueName } from "../credentials/secret-service.js";
import { fakeHfToken } from "../support/fake-token.js";
import { budgetLines } from "../support/rented-budget.js";
import { sponsorNodeOptions } from "../support/sponsor-options.js";
import { chatReply, type ChatReply } from "../support/chat.js";

export const NODE = "batch";
export const NS = "alice";
export const REPO = "Qwen/Qwen3-0.6B";
export const MIN = 60_000;
/** Emulator timings: scheduling 20 s, then the model loads for 90 s. */
export const COLD_START_MS = 110_000;

export interface JobWorld {
  readonly hf: HuggingFaceEmulator;
  readonly token: string;
  readonly dir: string;
  readonly log: string[];
  node: RunningNode;
  start(): Promise<RunningNode>;
  /** Move virtual time in steps, with a pass after each. */
  advance(ms: number, stepMs?: number): Promise<void>;
  /** Move virtual time while `pending` has not settled (a request waiting for its job). */
  advanceUntil<T>(pending: Promise<T>, maxMs: number, stepMs?: number): Promise<T>;
  cleanup(): Promise<void>;
}

/** `lines`: more YAML of the entry (lifecycle, budget), indented for it. */
export async function jobWorld(
  ca: TestCa,
  options: {
    windowMin?: number;
    lines?: readonly string[];
    /** The configured flavor (default l4x1, which the emulator lists). */
    flavor?: string;
    /** The Job secret HF_TOKEN's reference (default: the stored token's). */
    secretRef?: string;
    /** The node's cold-start budget (real seconds, default 600). */
    coldStartS?: number;
    /** More YAML items of `rented_nodes:` after the Jobs node (e.g. a managed endpoint). */
    moreNodes?: (credentialRef: string) => readonly string[];
  } = {},
): Promise<JobWorld> {
  const leaf = await ca.issue();
  const token = fakeHfToken();
  const hf = await startHuggingFaceEmulator({
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    tokens: { [token]: { namespace: NS } },
    jobs: { timings: { schedulingMs: 20_000, loadMs: 90_000 } },
  });
  const dir = mkdtempSync(join(tmpdir(), "pair-jobnode-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const credential: CredentialRef = { service: "pair", account: uniqueName("hf-job") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(credential, new Redacted(token, "test HF token"));
  const ref = `os-credential-store:${credential.service}/${credential.account}`;
  const configText = [
    "node:",
    "  name: sponsor",
    `  data_dir: ${dataDir}`,
    "  listen: 127.0.0.1:11434",
    "  cluster_listen: 127.0.0.1:14323",
    "  discovery: { mdns: false }",
    "engines: []",
    "rented_nodes:",
    `  - name: ${NODE}`,
    "    provider: huggingface-job",
    `    credential: ${ref}`,
    `    timeouts: { cold_start_s: ${options.coldStartS ?? 600} }`,
    "    job:",
    `      repo: ${REPO}`,
    `      flavor: ${options.flavor ?? "l4x1"}`,
    `      window_min: ${options.windowMin ?? 30}`,
    `      secrets: { HF_TOKEN: "${options.secretRef ?? ref}" }`,
    ...(options.lines ?? ["    lifecycle: { exit_timeout_s: 5 }"]),
    ...budgetLines(options.lines ?? []),
    ...(options.moreNodes?.(ref) ?? []),
    "providers:",
    `  huggingface: { hub_api: ${hf.hubApiUrl}, endpoints_api: ${hf.endpointsApiUrl} }`,
    "tls:",
    `  extra_ca_file: ${caFile}`,
  ].join("\n");
  const log: string[] = [];
  let closed = false;
  const world: JobWorld = {
    hf,
    token,
    dir,
    log,
    node: undefined as unknown as RunningNode,
    start: async () => {
      const config = parseConfig(configText, "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
      world.node = await startNode({
        config,
        ...sponsorNodeOptions({ log, wallMs: () => hf.nowMs() }),
      });
      return world.node;
    },
    advance: async (ms, stepMs = 10_000) => {
      for (let t = 0; t < ms; t += stepMs) {
        hf.advance(Math.min(stepMs, ms - t));
        await world.node.jobs.tick();
      }
    },
    advanceUntil: async (pending, maxMs, stepMs = 10_000) => {
      let settled = false;
      void pending.then(
        () => (settled = true),
        () => (settled = true),
      );
      for (let t = 0; t < maxMs && !settled; t += stepMs) {
        await world.node.jobs.node(NODE)?.settled();
        hf.advance(stepMs);
        await world.node.jobs.tick();
        await new Promise((r) => setTimeout(r, 25));
      }
      return pending;
    },
    cleanup: async () => {
      if (closed) return;
      closed = true;
      await world.node?.close(200).catch(() => undefined);
      await hf.close();
      await store.delete(credential).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** One chat request for the Jobs node's model, through the sponsor's client port (any sponsor's). */
export function chat(w: { readonly node: { readonly url: string } }): Promise<ChatReply> {
  return chatReply(w.node.url, { model: REPO });
}

/**
 * Starts the sponsor and brings its job up: `first` (a first request; by default `chat`) is served
 * (200) while virtual time moves, within the cold start plus five minutes.
 */
export async function startServed(
  w: JobWorld,
  first: (w: JobWorld) => Promise<{ readonly status: number }> = chat,
): Promise<void> {
  await w.start();
  expect((await w.advanceUntil(first(w), COLD_START_MS + 5 * MIN)).status).toBe(200);
}

/** The Jobs node's row of `GET /pair/v1/rented` (what `pair rented list --json` shows). */
export async function rentedRow(w: JobWorld): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE) ?? {};
}
