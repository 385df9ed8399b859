/**
 * Real PAIR nodes for the discovery tests: like node-pair-harness.ts (own data dir, 127.0.0.1,
 * port 0), plus discovery turned on as asked — mDNS bound to loopback only (`interface 127.0.0.1,
 * bind 0.0.0.0`, stack-notes.md §8: never eth0) and/or static `peers` — with fast timings, the
 * discovery events collected, and a restart on a new cluster port.
 * Must not know: how discovery works inside; it drives nodes as a user would and reads their state.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import type { DiscoveryEvent, MdnsNetwork } from "../../src/cluster-node/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { until as untilEventually } from "../support/eventually.js";

/** mDNS on loopback only. */
export const LOOPBACK_MDNS: MdnsNetwork = Object.freeze({ interface: "127.0.0.1", bind: "0.0.0.0" });

export const FAST_DISCOVERY = Object.freeze({
  queryIntervalMs: 300,
  staticIntervalMs: 200,
  reconcileMs: 100,
  recheckMs: 300,
  timeoutMs: 500,
});

export interface DiscoveryNodeOptions {
  readonly mdns?: boolean;
  /** Static peer addresses `host:port`. */
  readonly peers?: readonly string[];
  /** Models of an Ollama engine emulator the node adopts (none: no engine). */
  readonly models?: readonly string[];
  /** The cluster port (default 0: any free one). */
  readonly clusterPort?: number;
}

export interface DiscoveryNode {
  readonly node: RunningNode;
  readonly name: string;
  readonly clusterAddress: string;
  readonly configFile: string;
  readonly events: readonly DiscoveryEvent[];
  readonly log: readonly string[];
  /** Stop the node; its data dir and engine stay for `restart`. */
  stop(): Promise<void>;
  /** Start it again on the same data dir, on `clusterPort` (default 0: a new free port). */
  restart(clusterPort?: number): Promise<DiscoveryNode>;
  /** Stop the node (if running) and remove its files and engine. */
  close(): Promise<void>;
}

export async function startDiscoveryNode(
  name: string,
  options: DiscoveryNodeOptions,
): Promise<DiscoveryNode> {
  const dir = mkdtempSync(join(tmpdir(), `pair-discovery-${name}-`));
  const engine =
    options.models === undefined
      ? undefined
      : await startEngineEmulator({
          api: "ollama",
          name: `${name}-ollama`,
          models: options.models.map((model) => ({ name: model, maxTokens: 8 })),
          tokenDelayMs: 0,
        });
  return launch(name, dir, engine, options, options.clusterPort ?? 0);
}

async function launch(
  name: string,
  dir: string,
  engine: EngineEmulator | undefined,
  options: DiscoveryNodeOptions,
  clusterPort: number,
): Promise<DiscoveryNode> {
  const dataDir = join(dir, "data");
  const peers = options.peers ?? [];
  const yaml = (port: number, cport: number) =>
    [
      "node:",
      `  name: ${name}`,
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      `  cluster_listen: 127.0.0.1:${cport}`,
      `  discovery: { mdns: ${options.mdns === true} }`,
      `  peers: [${peers.map((p) => JSON.stringify(p)).join(", ")}]`,
      ...(engine === undefined
        ? ["engines: []"]
        : [
            "engines:",
            `  - name: ${name}-ollama`,
            "    api: ollama",
            `    base_url: ${engine.url}`,
            "    max_concurrent: 3",
            "    probe_interval_s: 0.2",
          ]),
    ].join("\n");
  const config = parseConfig(yaml(11434, 14323), "test.yaml", { homeDir: dir, hostName: name });
  const events: DiscoveryEvent[] = [];
  const log: string[] = [];
  const node = await startNode({
    config,
    overrides: { port: 0, clusterPort, membership: { refreshMs: 150, timeoutMs: 400 } },
    seams: {
      log: (line) => void log.push(line),
      discovery: { ...FAST_DISCOVERY, mdns: LOOPBACK_MDNS, onEvent: (event) => void events.push(event) },
    },
  });
  const configFile = join(dir, "pair.yaml");
  writeFileSync(configFile, yaml(node.port, node.cluster.port));
  let running = true;
  const stop = async (): Promise<void> => {
    if (!running) return;
    running = false;
    await node.close(500);
  };
  return {
    node,
    name,
    clusterAddress: `127.0.0.1:${node.cluster.port}`,
    configFile,
    events,
    log,
    stop,
    restart: (port = 0) => launch(name, dir, engine, options, port),
    close: async () => {
      await stop();
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Poll `check` until it holds (false or a throw: not yet), within `withinMs`: the shared `until`, bounded at 4 s. */
export const until = (check: () => boolean | Promise<boolean>, withinMs = 4_000): Promise<number> =>
  untilEventually(check, withinMs, 25);

/** Open UDP sockets of this process (mDNS ones included). */
export function udpSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "UDPWrap").length;
}
