// Real nodes on loopback pair through the real PIN flow (admin API) and then talk over mTLS.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { ListenError, startNode } from "../../src/node.js";
import { freePort, portClosed } from "../cli/cli-harness.js";
import {
  admin,
  agentBetween,
  errorCode,
  joinWith,
  peerHello,
  peersOf,
  showPin,
  startTestNode,
  wrongPin,
  type TestNode,
} from "./node-pair-harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(
    cleanups
      .splice(0)
      .reverse()
      .map((cleanup) => cleanup()),
  );
});

async function nodes<const N extends readonly string[]>(...names: N): Promise<{ [K in keyof N]: TestNode }> {
  const started = await Promise.all(names.map(startTestNode));
  for (const n of started) cleanups.push(() => n.close());
  return started as { [K in keyof N]: TestNode };
}

function agent(from: TestNode, to: TestNode): Agent {
  const a = agentBetween(from, to);
  cleanups.push(() => a.destroy());
  return a;
}

describe("pairing two real nodes by PIN", () => {
  it("pins both certificates, and then each node reaches the other over mTLS", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const pin = await showPin(desktop);
    const joined = await joinWith(laptop, desktop, pin);
    expect(joined.status).toBe(200);
    const desktopId = desktop.node.cluster.identity;
    const laptopId = laptop.node.cluster.identity;
    expect(joined.json).toMatchObject({
      node_id: desktopId.nodeId,
      name: "pc-3090",
      fingerprint: desktopId.fingerprint,
    });
    expect(JSON.stringify(joined.json)).not.toMatch(/BEGIN|PRIVATE/);

    expect(peersOf(laptop).map((p) => p.fingerprint)).toEqual([desktopId.fingerprint]);
    expect(peersOf(desktop)).toEqual([expect.objectContaining({ node_id: laptopId.nodeId, name: "laptop" })]);
    const listed = await admin(desktop, "/pair/v1/peers");
    expect(listed).toMatchObject({ status: 200, json: [{ node_id: laptopId.nodeId, name: "laptop" }] });
    expect(JSON.stringify(listed.json)).not.toMatch(/BEGIN|PRIVATE/);

    // The very next mTLS request is accepted, both ways, without a restart.
    expect(await peerHello(desktop, agent(laptop, desktop))).toEqual({
      status: 200,
      json: { node_id: desktopId.nodeId, name: "pc-3090" },
    });
    expect(await peerHello(laptop, agent(desktop, laptop))).toEqual({
      status: 200,
      json: { node_id: laptopId.nodeId, name: "laptop" },
    });

    // The PIN was single use.
    const third = (await nodes("stranger"))[0];
    const again = await joinWith(third, desktop, pin);
    expect(errorCode(again)).toBe("pin_expired");
    expect((again.json as { error: { remote: boolean } }).error.remote).toBe(true);

    const status = await admin(laptop, "/pair/v1/status");
    expect(status.json).toMatchObject({
      node_id: laptopId.nodeId,
      cluster_listen: laptop.clusterAddress,
      peers: [{ name: "pc-3090" }],
    });
  });

  it("counts wrong PINs and burns the PIN after 3, even for the right one", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const pin = await showPin(desktop);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const wrong = await joinWith(laptop, desktop, wrongPin(pin));
      expect(wrong.status).toBe(403);
      expect(errorCode(wrong)).toBe("pairing_failed");
      expect(desktop.node.cluster.pinStatus()).toEqual(
        attempt < 3
          ? expect.objectContaining({ state: "active", attemptsLeft: 3 - attempt })
          : { state: "burnt" },
      );
    }
    const right = await joinWith(laptop, desktop, pin);
    expect(errorCode(right)).toBe("pin_attempts_exhausted");
    expect(peersOf(laptop)).toEqual([]);
    expect(peersOf(desktop)).toEqual([]);
    // A new PIN works.
    expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
  });

  it("refuses an unpaired node's mTLS request before reading it", async () => {
    const [desktop, stranger] = await nodes("pc-3090", "stranger");
    await expect(peerHello(desktop, agent(stranger, desktop))).rejects.toThrow();
  });

  it("after unpair, closes the peer's open connection and refuses it", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
    const toDesktop = agent(laptop, desktop);
    const disconnected = new Promise<void>((resolve) => toDesktop.once("disconnect", () => resolve()));
    expect((await peerHello(desktop, toDesktop)).status).toBe(200); // a keep-alive connection stays open

    const revoked = await admin(desktop, "/pair/v1/unpair", { node: "laptop" });
    expect(revoked).toMatchObject({
      status: 200,
      json: { name: "laptop", node_id: laptop.node.cluster.identity.nodeId, already_revoked: false },
    });
    await disconnected;
    await expect(peerHello(desktop, toDesktop)).rejects.toThrow();
    expect(peersOf(desktop)).toEqual([]);
    // Unpairing is local: the laptop still answers the desktop.
    expect((await peerHello(laptop, agent(desktop, laptop))).status).toBe(200);

    // The record stays (by node id); by name only trusted peers are found.
    const again = await admin(desktop, "/pair/v1/unpair", { node: laptop.node.cluster.identity.nodeId });
    expect(again).toMatchObject({ status: 200, json: { already_revoked: true } });
    expect(errorCode(await admin(desktop, "/pair/v1/unpair", { node: "laptop" }))).toBe("unknown_peer");
  });

  it("reports an address where nothing listens, or something that is not a cluster port", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const closed = (await nodes("gone"))[0];
    const address = closed.clusterAddress;
    await closed.close();
    const unreachable = await joinWith(laptop, address, "123456");
    expect(unreachable.status).toBe(502);
    expect(errorCode(unreachable)).toBe("peer_unreachable");
    expect((unreachable.json as { error: { message: string } }).error.message).toContain(address);

    const clientPort = await joinWith(laptop, `127.0.0.1:${desktop.node.port}`, "123456");
    expect(errorCode(clientPort)).toBe("not_a_pair_node");
    expect(errorCode(await joinWith(laptop, desktop, "12345"))).toBe("invalid_pin");
    expect(errorCode(await joinWith(laptop, "not an address", "123456"))).toBe("invalid_request");
  });

  it("keeps the pairing routes behind the admin token", async () => {
    const [desktop] = await nodes("pc-3090");
    for (const [path, method] of [
      ["/pair/v1/pin", "POST"],
      ["/pair/v1/join", "POST"],
      ["/pair/v1/peers", "GET"],
      ["/pair/v1/unpair", "POST"],
    ] as const) {
      const res = await fetch(`${desktop.node.url}${path}`, {
        method,
        body: method === "POST" ? "{}" : null,
      });
      expect(res.status, path).toBe(401);
      expect(await res.text()).not.toMatch(/"pin"/);
    }
    expect((await admin(desktop, "/pair/v1/pin")).status).toBe(405); // GET
  });
});

describe("the node's cluster port", () => {
  it("refuses to start on a taken cluster port, naming node.cluster_listen, and frees its client port", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), "pair-cluster-taken-"));
    cleanups.push(async () => {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    });
    const port = await freePort();
    const yaml = `node:\n  data_dir: ${dir}/data\n  listen: 127.0.0.1:${port}\n  cluster_listen: 127.0.0.1:${taken}\nengines: []\n`;
    const config = parseConfig(yaml, "t.yaml", { homeDir: dir, hostName: "t" });
    const error = await startNode({ config }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListenError);
    expect(error).toMatchObject({ code: "port_in_use" });
    expect((error as Error).message).toContain(`node.cluster_listen 127.0.0.1:${taken} is already in use`);
    expect(await portClosed(port)).toBe(true);
  });
});
