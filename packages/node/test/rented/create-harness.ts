/**
 * A sponsor with no rented node yet, for `pair rented create`: the Hugging Face emulator over HTTPS (a
 * throwaway CA trusted through `tls.extra_ca_file`), the token in the real OS credential store under
 * a reference the test passes with `--credential`, managed endpoints on the emulator's virtual clock
 * with no automatic pass, and a config file the CLI reads (rewritten at each start: the port changes).
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
import { sponsorNodeOptions } from "../support/sponsor-options.js";
import { hfForAlice } from "../support/hf-alice.js";

export const TOKEN = fakeHfToken();
export const MIN = 60_000;

export interface CreateWorld {
  readonly hf: HuggingFaceEmulator;
  readonly api: HttpsEndpointsTransport;
  readonly dataDir: string;
  /** `os-credential-store:pair/<unique>`: where the token is. */
  readonly credential: string;
  readonly configFile: string;
  readonly log: string[];
  node: RunningNode;
  start(): Promise<RunningNode>;
  cleanup(): Promise<void>;
}

export interface CreateWorldOptions {
  /** An OpenAI-compatible engine the sponsor adopts (its `/v1` URL); default none. */
  readonly engineUrl?: string;
}

export async function createWorld(ca: TestCa, options: CreateWorldOptions = {}): Promise<CreateWorld> {
  const { hf, api } = await hfForAlice(ca, TOKEN);
  const dir = mkdtempSync(join(tmpdir(), "pair-create-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const ref: CredentialRef = { service: "pair", account: uniqueName("create") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  await store.set(ref, new Redacted(TOKEN, "test token"));
  const configText = (port: number) =>
    [
      "node:",
      "  name: sponsor",
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      "  cluster_listen: 127.0.0.1:14323",
      "  discovery: { mdns: false }",
      ...(options.engineUrl === undefined
        ? ["engines: []"]
        : ["engines:", "  - name: sponsor-vllm", "    api: openai", `    base_url: ${options.engineUrl}`]),
      "providers:",
      "  huggingface:",
      `    endpoints_api: ${hf.endpointsApiUrl}`,
      `    hub_api: ${hf.hubApiUrl}`,
      `    catalog_api: ${hf.catalogApiUrl}`,
      "tls:",
      `  extra_ca_file: ${caFile}`,
    ].join("\n");
  const configFile = join(dir, "pair.yaml");
  const log: string[] = [];
  let closed = false;
  const world: CreateWorld = {
    hf,
    api,
    dataDir,
    credential: `os-credential-store:${ref.service}/${ref.account}`,
    configFile,
    log,
    node: undefined as unknown as RunningNode,
    start: async () => {
      const config = parseConfig(configText(11434), "sponsor.yaml", { homeDir: dir, hostName: "sponsor" });
      world.node = await startNode({
        config,
        ...sponsorNodeOptions({ log, wallMs: () => hf.nowMs() }),
      });
      writeFileSync(configFile, configText(world.node.port));
      return world.node;
    },
    cleanup: async () => {
      if (closed) return;
      closed = true;
      await world.node?.close(200).catch(() => undefined);
      await api.close();
      await hf.close();
      await store.delete(ref).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/**
 * Moves `w`'s virtual time 2 s per 20 ms (the node's passes run on real timers) until `done`, at
 * most `steps` times (900: 30 virtual minutes).
 */
export async function advanceUntil(w: CreateWorld, done: () => Promise<boolean>, steps = 900): Promise<void> {
  for (let i = 0; i < steps && !(await done()); i++) {
    w.hf.advance(2_000);
    await new Promise((r) => setTimeout(r, 20));
  }
}
