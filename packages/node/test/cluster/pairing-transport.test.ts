// The plain-HTTP pairing side of the cluster port: what it reveals, and a man-in-the-middle relay.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";
import { Client } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodeIdentity } from "@pair/cluster";
import { HANDSHAKE_PATH } from "../../src/cluster-node/index.js";
import { makeIdentity, TempDirs } from "../../../cluster/test/cluster-fixtures.js";
import { errorCode, joinWith, peersOf, showPin, startTestNode, type TestNode } from "./node-pair-harness.js";

const dirs = new TempDirs();
let mallory: NodeIdentity;
beforeAll(async () => {
  mallory = await makeIdentity(dirs, "mallory");
});
afterAll(() => dirs.removeAll());

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function nodes<const N extends readonly string[]>(...names: N): Promise<{ [K in keyof N]: TestNode }> {
  const started = await Promise.all(names.map(startTestNode));
  for (const n of started) cleanups.push(() => n.close());
  return started as { [K in keyof N]: TestNode };
}

/** One raw HTTP/1.1 exchange on a fresh plain connection; everything the server sent back. */
function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
  });
}

type Envelope = { cert?: string; message: Record<string, unknown> };
type Rewrite = (direction: "request" | "response", envelope: Envelope) => Envelope;

/**
 * A relay on 127.0.0.1 that forwards each connection's handshake requests to `target` over one
 * upstream connection of its own, rewriting every envelope on the way (both directions).
 */
async function startRelay(target: TestNode, rewrite: Rewrite): Promise<string> {
  const upstreams = new WeakMap<Socket, Client>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        let upstream = upstreams.get(req.socket);
        if (upstream === undefined) {
          upstream = new Client(`http://${target.clusterAddress}`, { pipelining: 1 });
          upstreams.set(req.socket, upstream);
          const client = upstream;
          req.socket.once("close", () => void client.destroy());
        }
        const sent = rewrite("request", JSON.parse(Buffer.concat(chunks).toString()) as Envelope);
        const answer = await upstream.request({
          path: req.url ?? "/",
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(sent),
        });
        const back = rewrite("response", (await answer.body.json()) as Envelope);
        res.writeHead(answer.statusCode, { "content-type": "application/json" });
        res.end(JSON.stringify(back));
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the plain-HTTP side of the cluster port", () => {
  it("answers 404 to anything but the handshake, revealing only the node's name", async () => {
    const [desktop] = await nodes("pc-3090");
    const { identity } = desktop.node.cluster;
    const port = desktop.node.cluster.port;
    for (const request of [
      "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      "GET /pair/v1/peer/hello HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      "GET /pair/v1/status HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      `GET ${HANDSHAKE_PATH} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      "POST /pair/v1/pin HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
    ]) {
      const answer = await rawHttp(port, request);
      expect(answer, request).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer.slice(answer.indexOf("\r\n\r\n") + 4)).toBe('{"node":"pc-3090"}');
      for (const secret of [identity.nodeId, identity.fingerprint, "BEGIN", desktop.node.adminToken])
        expect(answer).not.toContain(secret);
    }
  });

  it("refuses a hello while no PIN is shown without revealing the node's identity", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const { identity } = desktop.node.cluster;
    const seen: string[] = [];
    const relay = await startRelay(desktop, (direction, envelope) => {
      seen.push(JSON.stringify(envelope));
      return envelope;
    });
    expect(errorCode(await joinWith(laptop, relay, "123456"))).toBe("pin_expired");
    expect(seen).toHaveLength(2);
    expect(JSON.parse(seen[1]!)).toEqual({
      message: { version: 1, type: "pair.refused", code: "pin_expired" },
    });
    for (const secret of [identity.nodeId, identity.fingerprint]) expect(seen[1]).not.toContain(secret);
  });

  it("refuses a body that is not an envelope, or too large, and still serves the next pairing", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const port = desktop.node.cluster.port;
    const post = (body: string) =>
      rawHttp(
        port,
        `POST ${HANDSHAKE_PATH} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    expect(await post("not json")).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"malformed_message"/);
    expect(await post('{"message":{},"extra":1}')).toMatch(/"code":"malformed_message"/);
    expect(await post(`{"cert":"x","message":{}}`)).toMatch(/"code":"malformed_message"/);
    expect(await post(JSON.stringify({ message: "x".repeat(20_000) }))).toMatch(/^HTTP\/1\.1 400 /);
    expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
  });

  it("pairs through an honest relay (the control for the next test)", async () => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const relay = await startRelay(desktop, (_direction, envelope) => envelope);
    expect((await joinWith(laptop, relay, await showPin(desktop))).status).toBe(200);
    expect(peersOf(desktop).map((p) => p.name)).toEqual(["laptop"]);
  });
});

describe("a man-in-the-middle swapping certificates in transit", () => {
  /** Put mallory's certificate (and, with `claims`, mallory's claimed identity) into every hello. */
  function swapper(claims: boolean): Rewrite {
    return (_direction, envelope) => {
      if (envelope.cert === undefined) return envelope;
      const node = envelope.message["node"] as Record<string, unknown>;
      const message = claims
        ? { ...envelope.message, node: { ...node, id: mallory.nodeId, fingerprint: mallory.fingerprint } }
        : envelope.message;
      return { cert: mallory.certPem, message };
    };
  }

  it.each([
    ["swaps only the certificate PEM", false],
    ["swaps the certificate and the identity the hellos claim", true],
  ])("%s: pairing fails on both sides and nobody is pinned", async (_what, claims) => {
    const [laptop, desktop] = await nodes("laptop", "pc-3090");
    const relay = await startRelay(desktop, swapper(claims));
    const pin = await showPin(desktop);
    const joined = await joinWith(laptop, relay, pin);
    expect(joined.status).toBe(403);
    expect(errorCode(joined)).toBe("pairing_failed");
    expect(peersOf(laptop)).toEqual([]);
    expect(peersOf(desktop)).toEqual([]);
    expect(desktop.log).toContain("pairing refused: pairing_failed");
    expect(desktop.log.join("\n")).not.toMatch(/paired by PIN/);
    // Swapping only the PEM is caught before the PIN is touched. With the claims rewritten too, the
    // responder ran the exchange and the failed key confirmation spent an attempt.
    expect(desktop.node.cluster.pinStatus()).toMatchObject({
      state: "active",
      attemptsLeft: claims ? 2 : 3,
      inFlight: false,
    });
    expect((await joinWith(laptop, desktop, pin)).status).toBe(200);
  });
});
