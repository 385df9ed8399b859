// Real nodes find each other by mDNS bound to loopback: unpaired ones are listed, paired ones that
// move are found again — but only where their pinned certificate answers.
import { SYSTEM_CLOCK } from "@pair/cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Bonjour from "bonjour-service";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateIdentity } from "@pair/cluster";
import type { DiscoveryEvent } from "../../src/cluster-node/index.js";
import { runCli } from "../cli/cli-harness.js";
import {
  LOOPBACK_MDNS,
  startDiscoveryNode,
  udpSockets,
  until,
  type DiscoveryNode,
} from "./discovery-harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  // Every mDNS socket was closed (goodbye sent, socket destroyed; the handle goes a tick later).
  await until(() => udpSockets() === 0, 1_000);
});

async function node(name: string, models?: readonly string[]): Promise<DiscoveryNode> {
  const n = await startDiscoveryNode(name, { mdns: true, ...(models === undefined ? {} : { models }) });
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

/** `joiner` pairs with `shower` through the real PIN flow. */
async function pair(joiner: DiscoveryNode, shower: DiscoveryNode): Promise<void> {
  const pin = ((await admin(shower, "/pair/v1/pin", {})).json as { pin: string }).pin;
  const joined = await admin(joiner, "/pair/v1/join", { address: shower.clusterAddress, pin });
  expect(joined.status).toBe(200);
}

const idOf = (n: DiscoveryNode): string => n.node.cluster.identity.nodeId;
const recorded = (at: DiscoveryNode, of: DiscoveryNode): string | undefined =>
  at.node.cluster.peers.active().find((p) => p.node_id === idOf(of))?.address;
const modelsOf = (at: DiscoveryNode, of: DiscoveryNode): readonly string[] | undefined => {
  const m = at.node.membership.members().find((v) => v.node_id === idOf(of));
  return m?.state === "up" ? m.models.map((x) => x.model) : undefined;
};

/** A raw advertiser on loopback, as another host on the LAN would be. */
function advertiser(): InstanceType<typeof Bonjour> {
  const b = new Bonjour({ ...LOOPBACK_MDNS } as unknown as ConstructorParameters<typeof Bonjour>[0]);
  cleanups.push(() => new Promise<void>((resolve) => b.unpublishAll(() => b.destroy(() => resolve()))));
  return b;
}

describe("discovery by mDNS (loopback only)", () => {
  it("three nodes: the unpaired one is listed as discovered, not paired — admin API and pair peers", async () => {
    const [a, b, c] = await Promise.all([node("node-a"), node("node-b"), node("node-c")]);
    await pair(a, b);
    const took = await until(() => a.node.cluster.discovered().some((d) => d.node_id === idOf(c)));
    expect(took).toBeLessThan(3_000);

    const listed = (await admin(a, "/pair/v1/discovered")).json as { node_id: string }[];
    expect(listed).toContainEqual({
      node_id: idOf(c),
      name: "node-c",
      address: c.clusterAddress,
      seen_via: ["mdns"],
      last_seen: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });
    // Paired (b) and self (a) are never "discovered".
    expect(listed.map((d) => d.node_id)).not.toContain(idOf(b));
    expect(listed.map((d) => d.node_id)).not.toContain(idOf(a));

    const json = await runCli(["peers", "--config", a.configFile, "--json"]);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as { node_id: string; paired: boolean; address?: string }[];
    expect(rows[0]).toMatchObject({ node_id: idOf(b), paired: true, address: b.clusterAddress });
    expect(rows).toContainEqual(
      expect.objectContaining({ node_id: idOf(c), paired: false, address: c.clusterAddress }),
    );
    const text = await runCli(["peers", "--config", a.configFile]);
    expect(text.stdout).toMatch(/^discovered, not paired .*pair join ADDRESS --pin PIN/m);
    expect(text.stdout).toMatch(
      new RegExp(`^node-c +${idOf(c)} +${c.clusterAddress.replace(/\./g, "\\.")} +mdns `, "m"),
    );
    // Nothing of a certificate or key is advertised or listed.
    expect(JSON.stringify(listed)).not.toMatch(/BEGIN|PRIVATE|fingerprint/);

    // A graceful stop says goodbye: c leaves the list at once. Without the goodbye it would stay
    // until stale: at least 700 ms from now (1 s after its last answer, at most 300 ms ago).
    await c.stop();
    await until(() => !a.node.cluster.discovered().some((d) => d.node_id === idOf(c)), 500);
  });

  it("a paired node restarted on a new cluster port is found again, and its models return", async () => {
    const a = await node("node-a");
    let b = await node("node-b", ["llama3:8b"]);
    await pair(a, b);
    await until(() => modelsOf(a, b)?.includes("llama3:8b") === true);
    const before = recorded(a, b);
    expect(before).toBe(b.clusterAddress);

    await b.stop();
    b = await b.restart(0);
    cleanups.push(() => b.close());
    expect(b.clusterAddress).not.toBe(before);
    const took = await until(
      () => recorded(a, b) === b.clusterAddress && modelsOf(a, b)?.includes("llama3:8b") === true,
    );
    expect(took).toBeLessThan(3_000);
    expect(a.events).toContainEqual({
      type: "PeerMoved",
      nodeId: idOf(b),
      from: before,
      to: b.clusterAddress,
    });
    expect(a.log.some((l) => l.includes(`found at ${b.clusterAddress}`))).toBe(true);
  });

  it("a spoofed advertisement (the node's id, another certificate) does not move its recorded address", async () => {
    const a = await node("node-a");
    const b = await node("node-b");
    await pair(a, b);
    const before = recorded(a, b);
    await b.stop(); // the recorded address no longer answers, so a would move if it believed a sighting

    // Another key's certificate, answering the hello as b would.
    const dir = mkdtempSync(join(tmpdir(), "pair-spoof-"));
    cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const mallory = await loadOrCreateIdentity(dir, { name: "mallory", clock: SYSTEM_CLOCK });
    const server: Server = createServer(
      { key: mallory.privateKeyPem.reveal(), cert: mallory.certPem, minVersion: "TLSv1.3" },
      (_req, res) => res.end(JSON.stringify({ node_id: idOf(b), name: "node-b" })),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const spoofPort = (server.address() as AddressInfo).port;
    advertiser().publish({
      name: `pair-${idOf(b)}`,
      type: "pair",
      port: spoofPort,
      txt: { id: idOf(b), name: "node-b", v: "1" },
      probe: false,
    });

    const rejected = (e: DiscoveryEvent): boolean =>
      e.type === "PeerAddressRejected" && e.nodeId === idOf(b) && e.address === `127.0.0.1:${spoofPort}`;
    await until(() => a.events.some(rejected));
    expect(a.events.find(rejected)).toMatchObject({ reason: "another certificate than the pinned one" });
    expect(recorded(a, b)).toBe(before);
    expect(a.events.some((e) => e.type === "PeerMoved")).toBe(false);
  });

  it("malformed advertisements from another host are ignored; a well-formed one is listed", async () => {
    const a = await node("node-a");
    const raw = advertiser();
    const bad = [
      { id: "abcdefghijklmnopqrst", name: "v2", v: "2" },
      { id: "NOT-A-NODE-ID", name: "badid", v: "1" },
      { id: "bbbbbbbbbbbbbbbbbbbb", name: "<b>html</b>", v: "1" },
      { name: "noid", v: "1" },
    ];
    bad.forEach((txt, i) =>
      raw.publish({ name: `junk-${i}`, type: "pair", port: 40_000 + i, txt, probe: false }),
    );
    raw.publish({
      name: "canary",
      type: "pair",
      port: 41_000,
      txt: { id: "cccccccccccccccccccc", name: "canary", v: "1" },
      probe: false,
    });
    await until(() => a.node.cluster.discovered().some((d) => d.name === "canary"));
    const seen = a.node.cluster.discovered();
    expect(seen.filter((d) => d.address.startsWith("127.0.0.1:4")).map((d) => d.name)).toEqual(["canary"]);
    // The node still answers.
    expect((await admin(a, "/pair/v1/discovered")).status).toBe(200);
  });
});
