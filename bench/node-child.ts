/**
 * Child process of the benchmarks: one PAIR node (`startNode`, config through `parseConfig` as
 * `pair serve` reads it) on 127.0.0.1 with ephemeral client and cluster ports, over the engines named
 * in the JSON argument (none: a node that only forwards to peers), with its data dir in a fresh temp
 * folder removed on close. Reports its URL, name, cluster address and admin token once every engine's
 * model is in the inventory; the parent pairs nodes through their admin APIs, as `pair join` does.
 * With `rented`, the node also sponsors one rented node (openai-compatible, HTTPS with a bearer
 * token, its CA trusted through `tls.extra_ca_file`), the token read from an in-memory credential
 * store (the bench has no OS keyring), and it is ready once the rented models are listed.
 * Must not know: the load, the report, how the engines were started, which peers it will have.
 */

import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { getHeapSpaceStatistics } from "node:v8";
import { Session } from "node:inspector/promises";
import { Redacted } from "@pair/cluster";
import { parseConfig } from "../packages/node/src/config/index.js";
import { startNode, type RunningNode } from "../packages/node/src/node.js";
import { childArg, serveParent } from "./child-protocol.js";

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
  /** Write the workload history on a worker thread (the node's default) or on the event loop. */
  readonly historyOnThread?: boolean;
  /** `false`: no idle collector (the node's default runs one: packages/node/src/memory/). */
  readonly idleCollect?: false;
  /** Batch lines in flight at once (the node's default otherwise). */
  readonly batchLines?: number;
  readonly rented?: {
    /** `https://127.0.0.1:PORT/v1` */
    readonly baseUrl: string;
    /** PEM of the CA that issued the endpoint's certificate. */
    readonly caPem: string;
    /** The bearer token (made for this run; never printed). */
    readonly token: string;
    readonly models: readonly string[];
    /** Its `max_concurrent`: the local engines' slots, so PAIR queues on neither route. */
    readonly maxConcurrent: number;
  };
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

const arg = childArg<NodeChildArg>();
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
  ...(arg.rented === undefined
    ? []
    : [
        "rented_nodes:",
        "  - name: bench-rented",
        "    provider: openai-compatible",
        `    base_url: ${arg.rented.baseUrl}`,
        `    max_concurrent: ${arg.rented.maxConcurrent}`,
        "    credential: os-credential-store:pair/bench-rented",
        "tls:",
        `  extra_ca_file: ${join(dataDir, "bench-ca.pem")}`,
      ]),
].join("\n");
if (arg.rented !== undefined) writeFileSync(join(dataDir, "bench-ca.pem"), arg.rented.caPem);
const rentedToken = arg.rented?.token;
let node: RunningNode;
try {
  const config = parseConfig(yaml, "bench.yaml", { homeDir: dataDir, hostName: "bench" });
  node = await startNode({
    config,
    ...(rentedToken === undefined
      ? {}
      : {
          seams: {
            credentials: { get: () => Promise.resolve(new Redacted(rentedToken, "bench rented token")) },
          },
        }),
    overrides: {
      port: 0,
      clusterPort: 0,
      ...(rentedToken === undefined ? {} : { rentedProbeIntervalMs: 200 }),
      ...(arg.membershipRefreshMs === undefined
        ? {}
        : { membership: { refreshMs: arg.membershipRefreshMs } }),
      ...(arg.batchLines === undefined ? {} : { batchLines: arg.batchLines }),
    },
    tuning: {
      ...(arg.historyOnThread === undefined ? {} : { historyOnThread: arg.historyOnThread }),
      ...(arg.idleCollect === false ? { idleCollect: false } : {}),
    },
  });
  const deadline = performance.now() + INVENTORY_WAIT_MS;
  while (!arg.engines.every((e) => node.inventory.models().has(e.model))) {
    if (performance.now() > deadline) throw new Error("bench node: engines not in the inventory in time");
    await node.inventory.probeOnce();
    await sleep(50);
  }
  const rentedModels = arg.rented?.models ?? [];
  while (rentedModels.length > 0) {
    const res = await fetch(`${node.url}/v1/models`);
    const listed = ((await res.json()) as { data?: { id?: unknown }[] }).data?.map((m) => m.id) ?? [];
    if (rentedModels.every((m) => listed.includes(m))) break;
    if (performance.now() > deadline) throw new Error("bench node: rented models not listed in time");
    await sleep(100);
  }
} catch (error) {
  rmSync(dataDir, { recursive: true, force: true });
  throw error;
}
// For looking inside a run: PAIR_BENCH_MEMORY_LOG=FILE appends the process's memory, by part, 4 times a second.
const memoryLog = process.env["PAIR_BENCH_MEMORY_LOG"];
if (memoryLog !== undefined && memoryLog !== "") {
  const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  setInterval(() => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name.replace(/_space$/, ""), mib(s.space_size)]),
    );
    const line = {
      name,
      t: Math.round(performance.now()),
      rss: mib(m.rss),
      heap: mib(m.heapTotal),
      used: mib(m.heapUsed),
      external: mib(m.external),
      arrayBuffers: mib(m.arrayBuffers),
      spaces,
    };
    appendFileSync(memoryLog, `${JSON.stringify(line)}\n`);
  }, 250).unref();
}
const ready: NodeChildReady = {
  url: node.url,
  name: node.name,
  clusterAddress: `127.0.0.1:${node.cluster.port}`,
  adminToken: node.adminToken,
};
// PAIR_BENCH_ALLOC_PROFILE=FILE: a sampling profile of every allocation (collected ones included),
// written to FILE when the node closes, for `bench/summarize-alloc-profile.ts`.
const allocProfile = process.env["PAIR_BENCH_ALLOC_PROFILE"];
const inspector = allocProfile === undefined || allocProfile === "" ? undefined : new Session();
if (inspector !== undefined) {
  inspector.connect();
  await inspector.post("HeapProfiler.startSampling", {
    samplingInterval: 8192,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
serveParent(ready, async () => {
  try {
    if (inspector !== undefined && allocProfile !== undefined) {
      const { profile } = await inspector.post("HeapProfiler.stopSampling");
      writeFileSync(allocProfile, JSON.stringify(profile));
    }
    await node.close(1_000);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
