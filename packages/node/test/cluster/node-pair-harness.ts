/**
 * Real PAIR nodes for the cluster tests: each with its own data dir, client port and cluster port
 * on 127.0.0.1 (port 0, so files run in parallel), no engines. Helpers call a node's admin API with
 * its bearer token, and talk to its cluster port over mTLS (createPeerAgent) or plain HTTP.
 * Must not know: how pairing works inside; it drives the node as a user or a peer would.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator, type EngineModelConfig } from "@pair/emulators";
import { request, type Agent } from "undici";
import { createPeerAgent } from "@pair/cluster";
import { PEER_HELLO_PATH, type PeerJson } from "../../src/cluster-node/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startNode, type RunningNode } from "../../src/node.js";
import { until } from "../support/eventually.js";

export interface TestNode {
  readonly node: RunningNode;
  readonly name: string;
  readonly dataDir: string;
  /** `127.0.0.1:PORT` of the cluster port, as `pair join` takes it. */
  readonly clusterAddress: string;
  /** A config file for the CLI that points at this node (its client port and data dir). */
  readonly configFile: string;
  /** Every line the node logged. */
  readonly log: readonly string[];
  /** The node's engine emulator, if it has one. */
  readonly engine: EngineEmulator | undefined;
  /** Stop the node and remove its files (and its engine, if any). */
  close(): Promise<void>;
  /** Stop the node only: its data dir, ports and engine stay for `restart`. */
  stop(): Promise<void>;
  /** Start it again on the same data dir and ports (after `stop`). */
  restart(): Promise<TestNode>;
}

export interface TestNodeOptions {
  /** Models of an engine emulator the node adopts (none: no engine). */
  readonly models?: readonly (string | EngineModelConfig)[];
  /** That engine's API (default `ollama`). */
  readonly engineApi?: "ollama" | "openai";
  /** Membership refresh and timeout (ms). */
  readonly refreshMs?: number;
  readonly timeoutMs?: number;
  /** The engine's delay between tokens and tokens per answer (defaults 0 and 8). */
  readonly tokenDelayMs?: number;
  readonly maxTokens?: number;
  /** The engine's `max_concurrent` (default 3). */
  readonly maxConcurrent?: number;
  /** Each model's context window in the engine (default: the emulator's). */
  readonly contextTokens?: number;
  /** The built dashboard the node serves at /ui (default: packages/dashboard/dist). */
  readonly uiDir?: string;
}

export function startTestNode(name: string): Promise<TestNode> {
  return startTestNodeWith(name, {});
}

export async function startTestNodeWith(name: string, options: TestNodeOptions): Promise<TestNode> {
  const dir = mkdtempSync(join(tmpdir(), `pair-cluster-${name}-`));
  const engine =
    options.models === undefined
      ? undefined
      : await startEngineEmulator({
          api: options.engineApi ?? "ollama",
          name: `${name}-${options.engineApi ?? "ollama"}`,
          models: options.models.map((model) => ({
            maxTokens: options.maxTokens ?? 8,
            ...(options.contextTokens === undefined ? {} : { contextTokens: options.contextTokens }),
            ...(typeof model === "string" ? { name: model } : model),
          })),
          tokenDelayMs: options.tokenDelayMs ?? 0,
        });
  return launch(name, dir, engine, options, { port: 0, clusterPort: 0 });
}

async function launch(
  name: string,
  dir: string,
  engine: EngineEmulator | undefined,
  options: TestNodeOptions,
  ports: { port: number; clusterPort: number },
): Promise<TestNode> {
  const dataDir = join(dir, "data");
  const yaml = (port: number, clusterPort: number) =>
    [
      "node:",
      `  name: ${name}`,
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      `  cluster_listen: 127.0.0.1:${clusterPort}`,
      // Discovery has its own tests (discovery-*.test.ts); here nodes meet only through pair join.
      "  discovery: { mdns: false }",
      ...(engine === undefined
        ? ["engines: []"]
        : [
            "engines:",
            `  - name: ${name}-${options.engineApi ?? "ollama"}`,
            `    api: ${options.engineApi ?? "ollama"}`,
            `    base_url: ${engine.url}${options.engineApi === "openai" ? "/v1" : ""}`,
            `    max_concurrent: ${options.maxConcurrent ?? 3}`,
            "    probe_interval_s: 0.2",
          ]),
    ].join("\n");
  const config = parseConfig(yaml(11434, 14323), "test.yaml", { homeDir: dir, hostName: name });
  const log: string[] = [];
  const node = await startNode({
    config,
    overrides: {
      port: ports.port,
      clusterPort: ports.clusterPort,
      membership: {
        ...(options.refreshMs === undefined ? {} : { refreshMs: options.refreshMs }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    },
    seams: {
      log: (line) => void log.push(line),
      ...(options.uiDir === undefined ? {} : { uiDir: options.uiDir }),
    },
  });
  const configFile = join(dir, "pair.yaml");
  writeFileSync(configFile, yaml(node.port, node.cluster.port));
  return {
    node,
    name,
    dataDir,
    clusterAddress: `127.0.0.1:${node.cluster.port}`,
    configFile,
    log,
    engine,
    close: async () => {
      await node.close(500);
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
    },
    stop: () => node.close(500),
    restart: () => launch(name, dir, engine, options, { port: node.port, clusterPort: node.cluster.port }),
  };
}

export interface AdminAnswer {
  readonly status: number;
  readonly json: unknown;
}

/** Call an admin route of `n` with its token (POST when `body` is given). */
export async function admin(n: TestNode, path: string, body?: unknown): Promise<AdminAnswer> {
  const res = await fetch(`${n.node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${n.node.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json: unknown = await res.json();
  return { status: res.status, json };
}

export async function showPin(n: TestNode): Promise<string> {
  const answer = await admin(n, "/pair/v1/pin", {});
  if (answer.status !== 200) throw new Error(`pin: HTTP ${answer.status}`);
  return (answer.json as { pin: string }).pin;
}

/** `joiner` runs `pair join` against `shower`'s cluster port with `pin`. */
export function joinWith(joiner: TestNode, shower: TestNode | string, pin: string): Promise<AdminAnswer> {
  const address = typeof shower === "string" ? shower : shower.clusterAddress;
  return admin(joiner, "/pair/v1/join", { address, pin });
}

export function errorCode(answer: AdminAnswer): string | undefined {
  return (answer.json as { error?: { code?: string } }).error?.code;
}

/** A PIN other than `pin`. */
export function wrongPin(pin: string): string {
  return String((Number(pin) + 1) % 1_000_000).padStart(6, "0");
}

/**
 * An mTLS agent from `from` to `to`, trusting `to`'s certificate as a pin would (whether or not
 * `from` really pinned it: the server side decides what counts).
 */
export function agentBetween(from: TestNode, to: TestNode): Agent {
  const { identity } = to.node.cluster;
  return createPeerAgent({
    identity: from.node.cluster.identity,
    peer: { node_id: identity.nodeId, cert_pem: identity.certPem, fingerprint: identity.fingerprint },
    limits: { connectTimeoutMs: 2_000, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 },
  });
}

/** `GET /pair/v1/peer/hello` on `to`'s cluster port over mTLS with `agent`. */
export async function peerHello(to: TestNode, agent: Agent): Promise<{ status: number; json: unknown }> {
  const res = await request(`https://127.0.0.1:${to.node.cluster.port}${PEER_HELLO_PATH}`, {
    dispatcher: agent,
  });
  return { status: res.statusCode, json: await res.body.json() };
}

export function peersOf(n: TestNode): readonly PeerJson[] {
  return n.node.cluster.pairedPeers();
}

/** Membership quick enough for tests: a poll every 150 ms, down after 400 ms of silence. */
export const FAST_MEMBERSHIP = { refreshMs: 150, timeoutMs: 400 } as const;

/** Start nodes with FAST_MEMBERSHIP (options win), each closed by `defer` after its test. */
export function fastNodes(
  defer: (cleanup: () => unknown) => void,
): (name: string, options?: TestNodeOptions) => Promise<TestNode> {
  return async (name, options = {}) => {
    const n = await startTestNodeWith(name, { ...FAST_MEMBERSHIP, ...options });
    defer(() => n.close());
    return n;
  };
}

/** Wait until `n` sees `model` served by the cluster (a peer's inventory reached it). */
export async function sees(n: TestNode, model: string): Promise<void> {
  await until(async () => {
    const rows = (await admin(n, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
    return rows.some((r) => r.model === model && r.nodes.length > 0);
  });
}
