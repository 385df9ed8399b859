// Static `peers` with mDNS off: a node at a configured address that none of our pinned peers answers
// at is listed by the name its port gives (node_id null: nothing verified names it), and a paired
// node that comes back there is recognised by its pin and reached again.
import { afterEach, describe, expect, it } from "vitest";
import { freePort, runCli } from "../cli/cli-harness.js";
import { startDiscoveryNode, udpSockets, until, type DiscoveryNode } from "./discovery-harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function node(name: string, options: Parameters<typeof startDiscoveryNode>[1]): Promise<DiscoveryNode> {
  const n = await startDiscoveryNode(name, options);
  cleanups.push(() => n.close());
  return n;
}

async function admin(
  n: DiscoveryNode,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${n.node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${n.node.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

const idOf = (n: DiscoveryNode): string => n.node.cluster.identity.nodeId;

describe("discovery at static peer addresses (mDNS off)", () => {
  it("an unpaired node at a static address is listed by name, node_id null (admin API, pair peers); no mDNS socket opens", async () => {
    const c = await node("node-c", {});
    const own = await freePort();
    // Its own address among the peers (one config for every node) is never listed.
    const a = await node("node-a", {
      peers: [c.clusterAddress, "127.0.0.1:1", `localhost:${own}`],
      clusterPort: own,
    });
    expect(udpSockets()).toBe(0);
    await until(() => a.node.cluster.discovered().length > 0);
    expect((await admin(a, "/pair/v1/discovered")).json).toEqual([
      {
        node_id: null,
        name: "node-c",
        address: c.clusterAddress,
        seen_via: ["static"],
        last_seen: expect.any(String) as unknown,
      },
    ]);
    const json = await runCli(["peers", "--config", a.configFile, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ node_id: null, name: "node-c", address: c.clusterAddress, paired: false }),
    ]);
    const text = await runCli(["peers", "--config", a.configFile]);
    expect(text.stdout).toMatch(
      new RegExp(`^node-c +- +${c.clusterAddress.replace(/\./g, "\\.")} +static `, "m"),
    );
    // Once paired, it is no longer "discovered".
    const pin = ((await admin(c, "/pair/v1/pin", {})).json as { pin: string }).pin;
    expect((await admin(a, "/pair/v1/join", { address: c.clusterAddress, pin })).status).toBe(200);
    expect(a.node.cluster.discovered()).toEqual([]);
  });

  it("a paired node restarted at a static address on another port is found there and its models return", async () => {
    const later = await freePort();
    const a = await node("node-a", { peers: [`127.0.0.1:${later}`] });
    let b = await node("node-b", { models: ["qwen2.5:7b"] });
    const pin = ((await admin(b, "/pair/v1/pin", {})).json as { pin: string }).pin;
    expect((await admin(a, "/pair/v1/join", { address: b.clusterAddress, pin })).status).toBe(200);
    const before = b.clusterAddress;
    const up = (): boolean =>
      a.node.membership
        .members()
        .some(
          (m) => m.node_id === idOf(b) && m.state === "up" && m.models.some((x) => x.model === "qwen2.5:7b"),
        );
    await until(up);

    await b.stop();
    b = await b.restart(later);
    cleanups.push(() => b.close());
    const recorded = (): string | undefined =>
      a.node.cluster.peers.active().find((p) => p.node_id === idOf(b))?.address;
    const took = await until(() => recorded() === `127.0.0.1:${later}` && up());
    expect(took).toBeLessThan(3_000);
    expect(a.events).toContainEqual({
      type: "PeerMoved",
      nodeId: idOf(b),
      from: before,
      to: `127.0.0.1:${later}`,
    });
    // Known and paired: never listed as discovered.
    expect(a.node.cluster.discovered()).toEqual([]);
  });

  it("a static address where the paired node still answers at its recorded one does not move it", async () => {
    const b = await node("node-b", {});
    const alias = `localhost:${b.node.cluster.port}`; // the same node, by another name
    const a = await node("node-a", { peers: [alias] });
    const pin = ((await admin(b, "/pair/v1/pin", {})).json as { pin: string }).pin;
    expect((await admin(a, "/pair/v1/join", { address: b.clusterAddress, pin })).status).toBe(200);
    await until(() => a.events.some((e) => e.type === "PeerAddressKept" && e.seenAt === alias));
    expect(a.node.cluster.peers.active()[0]?.address).toBe(b.clusterAddress);
  });
});
