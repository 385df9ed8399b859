/**
 * A sponsor node with a rented node for the rented-node tests: an OpenAI-compatible HTTPS emulator
 * (vLLM-like, bearer key) with a leaf from a throwaway CA, the CA trusted through `tls.extra_ca_file`,
 * the key stored in the real OS credential store, and the sponsor's config naming it by reference.
 * Must not know: what a test asserts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import { parseConfig, type CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { uniqueName } from "../credentials/secret-service.js";
import type { TestNode } from "../cluster/node-pair-harness.js";

export interface RentedEndpoint {
  readonly engine: EngineEmulator;
  /** `https://127.0.0.1:PORT/v1` */
  readonly baseUrl: string;
  /** Authorization headers the endpoint received, in order. */
  readonly seenAuthorization: (string | undefined)[];
}

/** An HTTPS OpenAI-compatible endpoint; with `apiKey`, it refuses any other bearer token (401). */
export async function startRentedEndpoint(
  ca: TestCa,
  options: { apiKey?: string; models?: string[]; tokenDelayMs?: number; maxTokens?: number } = {},
): Promise<RentedEndpoint> {
  const leaf = await ca.issue();
  const seen: (string | undefined)[] = [];
  const engine = await startEngineEmulator({
    api: "openai",
    name: "rented-vllm",
    models: (options.models ?? ["llama-70b"]).map((name) => ({ name, maxTokens: options.maxTokens ?? 6 })),
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    tokenDelayMs: options.tokenDelayMs ?? 0,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    onUsage: (_usage, request: { headers: IncomingHttpHeaders }) =>
      void seen.push(request.headers.authorization),
  });
  return { engine, baseUrl: `${engine.url}/v1`, seenAuthorization: seen };
}

export interface Sponsor {
  readonly node: RunningNode;
  readonly dir: string;
  readonly dataDir: string;
  readonly configFile: string;
  readonly configText: string;
  readonly log: string[];
  readonly credential: CredentialRef;
  close(): Promise<void>;
}

export interface SponsorOptions {
  readonly name?: string;
  readonly token: string;
  readonly baseUrl: string;
  readonly caPem: string;
  readonly share?: boolean;
  readonly coldStartS?: number;
  readonly models?: readonly string[];
  /** Store the token in the credential store (default true). */
  readonly storeToken?: boolean;
  /** The rented node's keys instead of provider/base_url (YAML lines, indented for the entry). */
  readonly target?: readonly string[];
  /** The `engines:` list items (YAML lines); none by default. */
  readonly engines?: readonly string[];
  /** A `providers:` section (YAML lines). */
  readonly providers?: readonly string[];
  /** More top-level sections (YAML lines), e.g. `model_aliases:`. */
  readonly topLevel?: readonly string[];
}

/** A sponsor node whose config has one rented node `gpu-rent` (openai-compatible). */
export async function startSponsor(options: SponsorOptions): Promise<Sponsor> {
  const name = options.name ?? "sponsor";
  const dir = mkdtempSync(join(tmpdir(), `pair-rented-${name}-`));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, options.caPem);
  const credential: CredentialRef = { service: "pair", account: uniqueName("rented") };
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  if (options.storeToken !== false) await store.set(credential, new Redacted(options.token, "test token"));
  const configText = [
    "node:",
    `  name: ${name}`,
    `  data_dir: ${dataDir}`,
    "  listen: 127.0.0.1:11434",
    "  cluster_listen: 127.0.0.1:14323",
    "  discovery: { mdns: false }",
    ...(options.engines === undefined ? ["engines: []"] : ["engines:", ...options.engines]),
    "rented_nodes:",
    "  - name: gpu-rent",
    ...(options.target ?? ["    provider: openai-compatible", `    base_url: ${options.baseUrl}`]),
    `    credential: os-credential-store:${credential.service}/${credential.account}`,
    `    share_with_cluster: ${options.share === true ? "true" : "false"}`,
    ...(options.models === undefined ? [] : [`    models: [${options.models.join(", ")}]`]),
    `    timeouts: { cold_start_s: ${options.coldStartS ?? 10} }`,
    ...(options.providers ?? []),
    ...(options.topLevel ?? []),
    "tls:",
    `  extra_ca_file: ${caFile}`,
  ].join("\n");
  const config = parseConfig(configText, "sponsor.yaml", { homeDir: dir, hostName: name });
  const log: string[] = [];
  const node = await startNode({
    config,
    overrides: {
      port: 0,
      clusterPort: 0,
      membership: { refreshMs: 150, timeoutMs: 400 },
      rentedProbeIntervalMs: 200,
    },
    seams: { log: (line) => void log.push(line) },
  });
  const configFile = join(dir, "pair.yaml");
  writeFileSync(
    configFile,
    configText
      .replace("127.0.0.1:11434", `127.0.0.1:${node.port}`)
      .replace("127.0.0.1:14323", `127.0.0.1:${node.cluster.port}`),
  );
  return {
    node,
    dir,
    dataDir,
    configFile,
    configText,
    log,
    credential,
    close: async () => {
      await node.close(500);
      await store.delete(credential).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The sponsor as the pairing harness's helpers (`joinWith`, `showPin`, `admin`) take a node. */
export function sponsorAsTestNode(s: Sponsor): TestNode {
  return {
    node: s.node,
    name: s.node.name,
    dataDir: s.dataDir,
    clusterAddress: `127.0.0.1:${s.node.cluster.port}`,
    configFile: s.configFile,
    log: s.log,
    engine: undefined,
    close: () => s.close(),
    stop: () => s.node.close(500),
    restart: () => Promise.reject(new Error("not supported")),
  };
}
