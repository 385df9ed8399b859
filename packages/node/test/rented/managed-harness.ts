/**
 * A sponsor with one managed Hugging Face endpoint (`gpu-hf` → alice/qwen) against the Hugging Face
 * emulator over HTTPS (a throwaway CA trusted through `tls.extra_ca_file`), the token in the real OS
 * credential store, and the managed endpoints on the emulator's virtual clock with no automatic pass:
 * the test moves time (`advance`) and runs passes (`tick`). The sponsor can be closed and started
 * again on the same data dir (a restart).
 * Must not know: what a test asserts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HuggingFaceEmulator } from "@pair/emulators";
import type { HttpsEndpointsTransport } from "@pair/huggingface";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { uniqueName } from "../credentials/secret-service.js";
import { fakeHfToken } from "../support/fake-token.js";
import { budgetLines } from "../support/rented-budget.js";
import { sponsorNodeOptions } from "../support/sponsor-options.js";
import { aliceEndpoint, hfForAlice, SPEC, type AliceEndpointOptions } from "../support/hf-alice.js";

export { SPEC } from "../support/hf-alice.js";
export const TOKEN = fakeHfToken();
export const NODE = "gpu-hf";
export const MODEL = SPEC.repository;
export const MIN = 60_000;

export interface ManagedWorld {
  readonly hf: HuggingFaceEmulator;
  readonly api: HttpsEndpointsTransport;
  readonly dir: string;
  readonly dataDir: string;
  readonly log: string[];
  node: RunningNode;
  /** Start the sponsor (again) on the same data dir; `firstPassWaitMs`: the start's wait for the first pass. */
  start(options?: { readonly firstPassWaitMs?: number }): Promise<RunningNode>;
  /** Move virtual time in steps, with a managed pass after each. */
  advance(ms: number, stepMs?: number): Promise<void>;
  cleanup(): Promise<void>;
}

/** What the world does before it is handed over, in this order. */
export interface ManagedSetup {
  /** alice's endpoint made and brought to a state (`aliceEndpoint`); none unless given. */
  readonly endpoint?: AliceEndpointOptions;
  /** The sponsor started. */
  readonly start?: boolean;
}

/**
 * YAML lines of the managed node's `lifecycle:` and `budget:` (indented for the entry); `engines`:
 * the YAML of the `engines:` list items (a local engine beside the rented node), none by default.
 */
export async function managedWorld(
  ca: TestCa,
  lines: readonly string[] = [],
  engines: readonly string[] = [],
  setup: ManagedSetup = {},
): Promise<ManagedWorld> {
  const { hf, api } = await hfForAlice(ca, TOKEN);
  const dir = mkdtempSync(join(tmpdir(), "pair-managed-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const credential: CredentialRef = { service: "pair", account: uniqueName("managed") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(credential, new Redacted(TOKEN, "test token"));
  const configText = [
    "node:",
    "  name: sponsor",
    `  data_dir: ${dataDir}`,
    "  listen: 127.0.0.1:11434",
    "  cluster_listen: 127.0.0.1:14323",
    "  discovery: { mdns: false }",
    ...(engines.length === 0 ? ["engines: []"] : ["engines:", ...engines]),
    "rented_nodes:",
    `  - name: ${NODE}`,
    "    provider: huggingface-endpoint",
    "    endpoint: alice/qwen",
    `    credential: os-credential-store:${credential.service}/${credential.account}`,
    // The default cold-start budget, unless the caller's lines give their own `timeouts:`.
    ...(lines.some((l) => l.trim().startsWith("timeouts:")) ? [] : ["    timeouts: { cold_start_s: 20 }"]),
    ...lines,
    ...budgetLines(lines),
    "providers:",
    `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
    "tls:",
    `  extra_ca_file: ${caFile}`,
  ].join("\n");
  const log: string[] = [];
  const start = async (firstPassWaitMs: number | undefined) => {
    const config = parseConfig(configText, "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
    return startNode({
      config,
      ...sponsorNodeOptions({
        log,
        wallMs: () => hf.nowMs(),
        pollMs: 50,
        overrides: firstPassWaitMs === undefined ? {} : { managedFirstPassWaitMs: firstPassWaitMs },
      }),
    });
  };
  let closed = false;
  const world: ManagedWorld = {
    hf,
    api,
    dir,
    dataDir,
    log,
    node: undefined as unknown as RunningNode,
    start: async (options = {}) => {
      world.node = await start(options.firstPassWaitMs);
      return world.node;
    },
    advance: async (ms, stepMs = 10_000) => {
      for (let t = 0; t < ms; t += stepMs) {
        hf.advance(Math.min(stepMs, ms - t));
        await world.node.managed.tick();
      }
    },
    cleanup: async () => {
      if (closed) return;
      closed = true;
      await world.node?.close(200).catch(() => undefined);
      await api.close();
      await hf.close();
      await store.delete(credential).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    if (setup.endpoint !== undefined) await aliceEndpoint(world, setup.endpoint);
    if (setup.start === true) await world.start();
  } catch (cause) {
    await world.cleanup(); // the caller never got the world to clean up
    throw cause;
  }
  return world;
}
