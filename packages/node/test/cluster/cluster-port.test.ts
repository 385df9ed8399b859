// The cluster port's bounds: first-byte routing, idle and long-lived connections, pairing connection
// limits, and a pairing abandoned half-way.
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { Client } from "undici";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import {
  CLUSTER_PORT_CHANNEL,
  type NodeIdentity,
  createInitiatorPairing,
  SYSTEM_RUNTIME,
} from "@pair/cluster";
import {
  envelopeText,
  HANDSHAKE_PATH,
  startClusterNode,
  type ClusterNode,
  type ClusterNodeOptions,
} from "../../src/cluster-node/index.js";
import { makeIdentity, TempDirs } from "../../../cluster/test/cluster-fixtures.js";

const dirs = new TempDirs();
let mallory: NodeIdentity;
beforeAll(async () => {
  mallory = await makeIdentity(dirs, "mallory");
});
afterAll(() => dirs.removeAll());

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(
  limits: ClusterNodeOptions["limits"] = {},
  joinTimeoutMs?: number,
): Promise<ClusterNode> {
  const dataDir = mkdtempSync(join(tmpdir(), "pair-cluster-port-"));
  const node = await startClusterNode({
    name: "pc-3090",
    dataDir,
    listen: { host: "127.0.0.1", port: 0 },
    runtime: SYSTEM_RUNTIME,
    limits,
    ...(joinTimeoutMs === undefined ? {} : { joinTimeoutMs }),
  });
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  cleanups.push(() => node.close());
  return node;
}

/** A plain connection that has sent `first` (if any); resolves once connected. */
function open(port: number, first?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      if (first !== undefined) socket.write(first);
      resolve(socket);
    });
    socket.on("error", reject);
    cleanups.push(() => void socket.destroy());
  });
}

function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.resume();
  });
}

describe("the cluster port", () => {
  it("closes a connection that sends nothing within the first-byte timeout", async () => {
    const node = await start({ port: { firstByteTimeoutMs: 150 } });
    const events: unknown[] = [];
    const onEvent = (event: unknown) => void events.push(event);
    subscribe(CLUSTER_PORT_CHANNEL, onEvent);
    cleanups.push(() => void unsubscribe(CLUSTER_PORT_CHANNEL, onEvent));
    const silent = await open(node.port);
    expect(await closedWithin(silent, 2_000)).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ reason: "no_first_byte" }));
  });

  it("routes a TLS hello to the mTLS server (which refuses an unpinned client) and text to pairing", async () => {
    const node = await start();
    const tls = await open(node.port, "\x16\x03\x01\x00\x05hello"); // not a valid ClientHello
    let received = "";
    tls.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    expect(await closedWithin(tls, 2_000)).toBe(true);
    expect(received).not.toMatch(/HTTP/); // a TLS alert at most, never the HTTP side's answer
    const plain = await open(node.port, "GET / HTTP/1.1\r\nhost: x\r\n\r\n");
    const answer = await new Promise<string>((resolve) =>
      plain.once("data", (d: Buffer) => resolve(String(d))),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
  });

  it("bounds concurrent pairing connections and their lifetime", async () => {
    const node = await start({ pairing: { maxConnections: 2, connectionLifetimeMs: 400 } });
    const first = await open(node.port, "P");
    const second = await open(node.port, "P");
    await new Promise((r) => setTimeout(r, 50));
    const third = await open(node.port, "P");
    expect(await closedWithin(third, 1_000)).toBe(true);
    expect(await closedWithin(first, 100)).toBe(false);
    // Whatever they do, pairing connections end after their lifetime.
    expect(await closedWithin(first, 2_000)).toBe(true);
    expect(await closedWithin(second, 2_000)).toBe(true);
    // And the slots are free again.
    expect(await closedWithin(await open(node.port, "P"), 100)).toBe(false);
  });

  it("counts a pairing whose initiator drops the connection after the share as a failed attempt", async () => {
    const node = await start();
    const pin = node.issuePin().pin;
    const initiator = createInitiatorPairing({
      self: { nodeId: mallory.nodeId, name: "mallory", fingerprint: mallory.fingerprint },
      pin,
      randomBytes: (n) => new Uint8Array(n).fill(7),
    });
    if (!initiator.ok) throw new Error("PIN refused");
    const client = new Client(`http://127.0.0.1:${node.port}`);
    const answer = await client.request({
      path: HANDSHAKE_PATH,
      method: "POST",
      body: envelopeText(initiator.value.start(), mallory.certPem),
    });
    const share = (await answer.body.json()) as { cert?: string; message: { type: string } };
    expect(share.message.type).toBe("pair.share");
    expect(share.cert).toBe(node.identity.certPem);
    expect(node.pinStatus()).toMatchObject({ attemptsLeft: 3, inFlight: true });
    await client.destroy();
    const deadline = Date.now() + 2_000;
    while (JSON.stringify(node.pinStatus()).includes('"inFlight":true') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(node.pinStatus()).toMatchObject({ state: "active", attemptsLeft: 2, inFlight: false });
    expect(node.pairedPeers()).toEqual([]);
  });

  it("gives up a join on an address that accepts but never answers, within the join timeout", async () => {
    const node = await start({}, 300);
    const silent = createServer((socket) => cleanups.push(() => void socket.destroy()));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    const joined = await node.join({ host: "127.0.0.1", port }, "123456");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(joined).toEqual({
      ok: false,
      error: {
        code: "peer_unreachable",
        message: `nothing answers on 127.0.0.1:${port} (no answer within the time allowed)`,
        remote: false,
      },
    });
  });
});
