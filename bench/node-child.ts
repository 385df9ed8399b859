/**
 * Child process of the benchmarks: one PAIR node (`startNode`, config through `parseConfig` as
 * `pair serve` reads it) on 127.0.0.1 with ephemeral client and cluster ports, over the engines named
 * in the JSON argument (none: a node that only forwards to peers), with its data dir in a fresh temp
 * folder removed on close. Reports its URL, name, cluster address and admin token once every engine's
 * model is in the inventory; the parent pairs nodes through their admin APIs, as `pair join` does.
 * Must not know: the load, the report, how the engines were started, which peers it will have.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseConfig } from "../packages/node/src/config/index.js";
import { startNode, type RunningNode } from "../packages/node/src/node.js";
import { serveParent } from "./child-protocol.js";

export interface NodeChildArg {
  /** The node's name, which `x-pair-served-by` carries (default `bench-node`). */
  readonly name?: string;
  /** Membership refresh (how often it polls its peers' inventories), ms; the node's default if absent. */
  readonly membershipRefreshMs?: number;
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
  readonly name: string;
  /** `127.0.0.1:PORT` of its cluster port, as `pair join` takes it. */
  readonly clusterAddress: string;
  /** Bearer token of its admin API (pairing). A secret: the parent uses it and never prints it. */
  readonly adminToken: string;
}

const INVENTORY_WAIT_MS = 10_000;

const arg = JSON.parse(process.argv[2] ?? "{}") as NodeChildArg;
const dataDir = mkdtempSync(join(tmpdir(), "pair-bench-node-"));
// However this process ends (short of SIGKILL), its data dir goes with it.
process.on("exit", () => rmSync(dataDir, { recursive: true, force: true }));
const name = arg.name ?? "bench-node";
const yaml = [
  "node:",
  `  name: ${name}`,
  `  data_dir: ${dataDir}`,
  "  listen: 127.0.0.1:11434",
  "  cluster_listen: 127.0.0.1:14323",
  arg.engines.length === 0 ? "engines: []" : "engines:",
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
  node = await startNode({
    config,
    portOverride: 0,
    clusterPortOverride: 0,
    ...(arg.membershipRefreshMs === undefined ? {} : { membership: { refreshMs: arg.membershipRefreshMs } }),
  });
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
const ready: NodeChildReady = {
  url: node.url,
  name: node.name,
  clusterAddress: `127.0.0.1:${node.cluster.port}`,
  adminToken: node.adminToken,
};
serveParent(ready, async () => {
  try {
    await node.close(1_000);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
