// Real nodes on loopback, paired by PIN, keep each other's inventory fresh over mTLS.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { PEERS_FILE } from "@pair/cluster";
import { PEER_INVENTORY_PATH, readEnvelope, envelopeText } from "../../src/cluster-node/index.js";
import { runCli } from "../cli/cli-harness.js";
import {
  admin,
  agentBetween,
  joinWith,
  showPin,
  startTestNode,
  startTestNodeWith,
  type TestNode,
} from "./node-pair-harness.js";
import { until } from "../support/eventually.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(
    cleanups
      .splice(0)
      .reverse()
      .map((cleanup) => cleanup()),
  );
});

const FAST = { refreshMs: 150, timeoutMs: 400 };

async function node(name: string, models: readonly string[]): Promise<TestNode> {
  const n = await startTestNodeWith(name, { models, ...FAST });
  cleanups.push(() => n.close());
  return n;
}

interface ModelRow {
  model: string;
  nodes: string[];
}
interface NodeRow {
  name: string;
  kind: string;
  node_id: string;
  state: string;
  models: string[];
  in_flight: number;
  capacity: number;
  last_seen: string | null;
  clock_offset_ms?: number | null;
}

/** The merged model list, without each node's context window (docs/context.md; test/e2e/context.test.ts). */
async function models(n: TestNode): Promise<ModelRow[]> {
  const answer = await admin(n, "/pair/v1/models");
  expect(answer.status).toBe(200);
  return (answer.json as (ModelRow & { context_tokens: Record<string, number> })[]).map((row) => {
    // Every node listed for a model reports a window for it (the emulator's engines all know theirs).
    expect(Object.keys(row.context_tokens).sort()).toEqual([...row.nodes].sort());
    return { model: row.model, nodes: row.nodes };
  });
}

async function nodesOf(n: TestNode): Promise<NodeRow[]> {
  const answer = await admin(n, "/pair/v1/nodes");
  expect(answer.status).toBe(200);
  return answer.json as NodeRow[];
}

async function pair(a: TestNode, b: TestNode): Promise<void> {
  const joined = await joinWith(a, b, await showPin(b));
  expect(joined.status).toBe(200);
}

function peersFile(n: TestNode): { peers: { name: string; address?: string }[] } {
  return JSON.parse(readFileSync(join(n.dataDir, PEERS_FILE), "utf8")) as {
    peers: { name: string; address?: string }[];
  };
}

describe("membership between two paired nodes", () => {
  it("records each other's address, merges models, and shows every node", async () => {
    const laptop = await node("laptop", ["llama3:8b"]);
    const desktop = await node("pc-3090", ["qwen:32b", "llama3:8b"]);
    await until(async () => (await models(laptop)).length === 1 && (await models(desktop)).length === 2);
    await pair(laptop, desktop);

    // The joiner keeps the address it joined; the responder the joiner's IP and cluster port.
    expect(peersFile(laptop).peers).toEqual([
      expect.objectContaining({ name: "pc-3090", address: desktop.clusterAddress }),
    ]);
    expect(peersFile(desktop).peers).toEqual([
      expect.objectContaining({ name: "laptop", address: `127.0.0.1:${laptop.node.cluster.port}` }),
    ]);

    const merged = [
      { model: "llama3:8b", nodes: ["laptop", "pc-3090"] },
      { model: "qwen:32b", nodes: ["pc-3090"] },
    ];
    await until(async () => JSON.stringify(await models(laptop)) === JSON.stringify(merged));
    await until(
      async () =>
        JSON.stringify(await models(desktop)) ===
        JSON.stringify([
          { model: "llama3:8b", nodes: ["pc-3090", "laptop"] },
          { model: "qwen:32b", nodes: ["pc-3090"] },
        ]),
    );

    const rows = await nodesOf(laptop);
    expect(rows).toEqual([
      expect.objectContaining({
        name: "laptop",
        kind: "self",
        node_id: laptop.node.cluster.identity.nodeId,
        state: "up",
        models: ["llama3:8b"],
        in_flight: 0,
        capacity: 3,
      }),
      expect.objectContaining({
        name: "pc-3090",
        kind: "peer",
        node_id: desktop.node.cluster.identity.nodeId,
        state: "up",
        models: ["llama3:8b", "qwen:32b"],
        in_flight: 0,
        capacity: 3,
      }),
    ]);
    expect(Date.parse(rows[1]!.last_seen ?? "")).not.toBeNaN();
    // One machine, one clock: the offset measured is within the round trip.
    expect(Math.abs(rows[1]!.clock_offset_ms ?? Infinity)).toBeLessThan(1_000);

    // `pair nodes` shows the same, as a table and as JSON.
    const table = await runCli(["nodes", "--config", laptop.configFile]);
    expect(table).toMatchObject({ code: 0, stderr: "" });
    expect(table.stdout).toMatch(/^NAME +KIND +STATE +LOAD +LAST SEEN +MODELS\n/);
    expect(table.stdout).toMatch(/\nlaptop +self +up +0\/3 +- +llama3:8b\n/);
    expect(table.stdout).toMatch(/\npc-3090 +peer +up +0\/3 +\S+ +llama3:8b, qwen:32b\n/);
    const json = await runCli(["nodes", "--json", "--config", laptop.configFile]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as NodeRow[]).map((r) => [r.name, r.kind, r.state])).toEqual([
      ["laptop", "self", "up"],
      ["pc-3090", "peer", "up"],
    ]);

    // The client routes list what the cluster serves: a peer's model can be asked for here.
    const tags = (await (await fetch(`${laptop.node.url}/api/tags`)).json()) as {
      models: { name: string }[];
    };
    expect(tags.models.map((m) => m.name)).toEqual(["llama3:8b", "qwen:32b"]);
  });

  it("serves only the node's own models on the peer inventory route, to pinned peers only", async () => {
    const laptop = await node("laptop", ["llama3:8b"]);
    const desktop = await node("pc-3090", ["qwen:32b"]);
    await pair(laptop, desktop);
    await until(async () => (await models(desktop)).some((m) => m.model === "llama3:8b"));
    const agent = agentBetween(laptop, desktop);
    cleanups.push(() => agent.destroy());
    const res = await request(`https://${desktop.clusterAddress}${PEER_INVENTORY_PATH}`, {
      dispatcher: agent,
    });
    const body = (await res.body.json()) as Record<string, unknown>;
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      node_id: desktop.node.cluster.identity.nodeId,
      name: "pc-3090",
      models: [{ model: "qwen:32b", engines: 1 }],
      in_flight: 0,
      capacity: 3,
    });
    expect(Date.parse(body["generated_at"] as string)).not.toBeNaN();

    // A node that is not pinned is refused before any route.
    const stranger = await startTestNode("stranger");
    cleanups.push(() => stranger.close());
    const strangerAgent = agentBetween(stranger, desktop);
    cleanups.push(() => strangerAgent.destroy());
    await expect(
      request(`https://${desktop.clusterAddress}${PEER_INVENTORY_PATH}`, { dispatcher: strangerAgent }).then(
        (r) => r.body.text(),
      ),
    ).rejects.toThrow();
  });

  it("marks a stopped peer down and drops its models, and brings it back when it restarts", async () => {
    const laptop = await node("laptop", ["llama3:8b"]);
    let desktop = await node("pc-3090", ["qwen:32b"]);
    await pair(laptop, desktop);
    await until(async () => (await models(laptop)).some((m) => m.model === "qwen:32b"));

    await desktop.stop();
    const downIn = await until(async () => {
      const peer = (await nodesOf(laptop)).find((r) => r.name === "pc-3090");
      return peer?.state === "down" && peer.models.length === 0;
    });
    expect(downIn).toBeLessThan(FAST.refreshMs + FAST.timeoutMs + 1_000);
    expect((await models(laptop)).map((m) => m.model)).toEqual(["llama3:8b"]);

    desktop = await desktop.restart();
    cleanups.push(() => desktop.close());
    await until(async () => {
      const peer = (await nodesOf(laptop)).find((r) => r.name === "pc-3090");
      return peer?.state === "up" && peer.models.includes("qwen:32b");
    });
    expect(await models(laptop)).toEqual([
      { model: "llama3:8b", nodes: ["laptop"] },
      { model: "qwen:32b", nodes: ["pc-3090"] },
    ]);
    // The restarted node still knows the laptop and sees it too.
    await until(async () => (await models(desktop)).some((m) => m.model === "llama3:8b"));
  });

  it("drops an unpaired peer from the views at once", async () => {
    const laptop = await node("laptop", ["llama3:8b"]);
    const desktop = await node("pc-3090", ["qwen:32b"]);
    await pair(laptop, desktop);
    await until(async () => (await models(laptop)).some((m) => m.model === "qwen:32b"));
    const unpaired = await admin(laptop, "/pair/v1/unpair", { node: "pc-3090" });
    expect(unpaired.status).toBe(200);
    expect((await nodesOf(laptop)).map((r) => r.name)).toEqual(["laptop"]);
    expect(await models(laptop)).toEqual([{ model: "llama3:8b", nodes: ["laptop"] }]);
    // And the other side, no longer accepted by the laptop, marks it down.
    await until(async () => (await nodesOf(desktop)).find((r) => r.name === "laptop")?.state === "down");
  });
});

describe("the cluster_port of a pairing envelope", () => {
  it("is optional, and an integer from 1 to 65535 when present", () => {
    const message = { type: "pair.confirm" };
    expect(readEnvelope(envelopeText(message))).toMatchObject({ ok: true, value: { message } });
    expect(readEnvelope(envelopeText(message, undefined, 14323))).toMatchObject({
      ok: true,
      value: { clusterPort: 14323 },
    });
    for (const bad of [0, 65_536, 1.5, "14323", null])
      expect(readEnvelope(JSON.stringify({ message, cluster_port: bad }))).toMatchObject({
        ok: false,
        error: { code: "malformed_message" },
      });
  });
});
