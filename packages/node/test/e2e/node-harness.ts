// Start a node over engine emulators on loopback, with its data dir in a fresh temp folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startEngineEmulator,
  type EngineEmulator,
  type EngineModelConfig,
  type OpenAiFlavor,
} from "@pair/emulators";
import { parseConfig } from "../../src/config/index.js";
import { startNode, type NodeOptions, type RunningNode } from "../../src/node.js";

export interface EngineDecl {
  readonly name: string;
  readonly api: "openai" | "ollama";
  /** Names (8 tokens a reply), or configs (capabilities, context window, …). */
  readonly models: readonly (string | EngineModelConfig)[];
  readonly maxConcurrent?: number;
  readonly tokenDelayMs?: number;
  readonly firstByteTimeoutS?: number;
  /** Embeddings as floats whatever `encoding_format` asked (some OpenAI-compatible servers). */
  readonly ignoreEncodingFormat?: boolean;
  /** Which OpenAI-compatible server the emulator plays (default vLLM). */
  readonly flavor?: OpenAiFlavor;
  /** More YAML lines of the engine's entry (indented by four), e.g. `    context_tokens: 8192`. */
  readonly yaml?: readonly string[];
}

export interface Cluster {
  readonly node: RunningNode;
  readonly engines: Map<string, EngineEmulator>;
  readonly dataDir: string;
  close(): Promise<void>;
}

export interface ClusterSetup {
  /** Runs on the fresh data dir before the node starts (e.g. to create API keys). */
  readonly beforeStart?: (dataDir: string) => Promise<void> | void;
  /** More YAML lines of the `node:` section (indented by two), e.g. `  allowed_hosts: [box.lan]`. */
  readonly nodeYaml?: readonly string[];
}

export async function startCluster(
  decls: readonly EngineDecl[],
  extra: Omit<NodeOptions, "config"> = {},
  setup: ClusterSetup = {},
): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), "pair-node-"));
  const engines = new Map<string, EngineEmulator>();
  for (const d of decls)
    engines.set(
      d.name,
      await startEngineEmulator({
        api: d.api,
        name: d.name,
        models: d.models.map((m) =>
          typeof m === "string" ? { name: m, maxTokens: 8 } : { maxTokens: 8, ...m },
        ),
        tokenDelayMs: d.tokenDelayMs ?? 0,
        ignoreEncodingFormat: d.ignoreEncodingFormat ?? false,
        ...(d.flavor === undefined ? {} : { flavor: d.flavor }),
      }),
    );
  const yaml = [
    "node:",
    "  name: node-a",
    `  data_dir: ${dataDir}`,
    "  listen: 127.0.0.1:11434",
    "  cluster_listen: 127.0.0.1:14323",
    "  discovery: { mdns: false }",
    ...(setup.nodeYaml ?? []),
    "engines:",
    ...decls.flatMap((d) => [
      `  - name: ${d.name}`,
      `    api: ${d.api}`,
      `    base_url: ${engines.get(d.name)!.url}${d.api === "openai" ? "/v1" : ""}`,
      `    max_concurrent: ${d.maxConcurrent ?? 4}`,
      "    probe_interval_s: 0.2",
      `    first_byte_timeout_s: ${d.firstByteTimeoutS ?? 5}`,
      ...(d.yaml ?? []),
    ]),
  ].join("\n");
  const config = parseConfig(yaml, "test.yaml", { homeDir: dataDir, hostName: "test" });
  await setup.beforeStart?.(dataDir);
  const node = await startNode({
    config,
    ...extra,
    overrides: { port: 0, clusterPort: 0, ...extra.overrides },
  });
  return {
    node,
    engines,
    dataDir,
    close: async () => {
      await node.close(1_000);
      for (const e of engines.values()) await e.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
