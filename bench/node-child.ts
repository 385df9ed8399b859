/**
 * Child process of the proxy-overhead benchmark: one PAIR node (`startNode`, config through
 * `parseConfig` as `pair serve` reads it) on 127.0.0.1 with an ephemeral port, over the engines named
 * in the JSON argument, with its data dir in a fresh temp folder removed on close. Reports
 * `{ url }` once every engine's model is in the inventory.
 * Must not know: the load, the report, how the engines were started.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseConfig } from "../packages/node/src/config/index.js";
import { startNode, type RunningNode } from "../packages/node/src/node.js";
import { serveParent } from "./child-protocol.js";

export interface NodeChildArg {
  readonly engines: readonly {
    readonly name: string;
    readonly model: string;
    /** OpenAI base URL of the engine, ending in /v1. */
    readonly baseUrl: string;
    readonly maxConcurrent: number;
  }[];
}

export interface NodeChildReady {
  readonly url: string;
}

const INVENTORY_WAIT_MS = 10_000;

const arg = JSON.parse(process.argv[2] ?? "{}") as NodeChildArg;
const dataDir = mkdtempSync(join(tmpdir(), "pair-bench-node-"));
// However this process ends (short of SIGKILL), its data dir goes with it.
process.on("exit", () => rmSync(dataDir, { recursive: true, force: true }));
const yaml = [
  "node:",
  "  name: bench-node",
  `  data_dir: ${dataDir}`,
  "  listen: 127.0.0.1:11434",
  "  cluster_listen: 127.0.0.1:14323",
  "engines:",
  ...arg.engines.flatMap((e) => [
    `  - name: ${e.name}`,
    "    api: openai",
    `    base_url: ${e.baseUrl}`,
    `    max_concurrent: ${e.maxConcurrent}`,
  ]),
].join("\n");
let node: RunningNode;
try {
  const config = parseConfig(yaml, "bench.yaml", { homeDir: dataDir, hostName: "bench" });
  node = await startNode({ config, portOverride: 0, clusterPortOverride: 0 });
  const deadline = performance.now() + INVENTORY_WAIT_MS;
  while (!arg.engines.every((e) => node.inventory.models().has(e.model))) {
    if (performance.now() > deadline) throw new Error("bench node: engines not in the inventory in time");
    await node.inventory.probeOnce();
    await sleep(50);
  }
} catch (error) {
  rmSync(dataDir, { recursive: true, force: true });
  throw error;
}
const ready: NodeChildReady = { url: node.url };
serveParent(ready, async () => {
  try {
    await node.close(1_000);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
