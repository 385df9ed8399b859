// Replayed pairing messages between real nodes on loopback. A relay records every envelope of one
// successful pairing (hello, share, confirm, confirmed); each is then replayed: to the same
// responder after the pairing completed, to the same responder under a new PIN, to another node, out
// of order, and the responder's half back to the initiator. Every replay is refused with a pairing
// code, no node pins anything new, and the PIN's attempt counter moves exactly as docs/security.md
// says: a failure counts only once the responder has sent its PIN-derived share.
// Wrong PINs beyond the limit (3, then burnt even for the right PIN) are proved by
// test/cluster/pairing-nodes.test.ts ("counts wrong PINs and burns the PIN after 3") and, on the
// core, packages/cluster/test/pairing/pairing-flow.test.ts; not repeated here.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Client } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HANDSHAKE_PATH } from "../../src/cluster-node/index.js";
import {
  admin,
  errorCode,
  joinWith,
  peersOf,
  showPin,
  startTestNode,
  type TestNode,
} from "../cluster/node-pair-harness.js";

type Envelope = { cert?: string; cluster_port?: number; message: Record<string, unknown> };

interface Recording {
  readonly hello: Envelope;
  readonly share: Envelope;
  readonly confirm: Envelope;
  readonly confirmed: Envelope;
}

const servers: Server[] = [];
let laptop: TestNode; // the initiator of the recorded pairing
let desktop: TestNode; // its responder
let recorded: Recording;
let pin: string;

/** A relay to `target`'s pairing port that records both directions, one upstream per connection. */
async function recordingRelay(target: TestNode, seen: Envelope[]): Promise<string> {
  const upstreams = new WeakMap<Socket, Client>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        let upstream = upstreams.get(req.socket);
        if (upstream === undefined) {
          const client = new Client(`http://${target.clusterAddress}`, { pipelining: 1 });
          upstreams.set(req.socket, client);
          req.socket.once("close", () => void client.destroy());
          upstream = client;
        }
        const text = Buffer.concat(chunks).toString();
        seen.push(JSON.parse(text) as Envelope);
        const answer = await upstream.request({ path: req.url ?? "/", method: "POST", body: text });
        const back = await answer.body.text();
        seen.push(JSON.parse(back) as Envelope);
        res.writeHead(answer.statusCode, { "content-type": "application/json" }).end(back);
      })().catch(() => res.destroy());
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A fake responder that answers each connection's requests with `answers`, in order. */
async function replayingResponder(answers: readonly Envelope[]): Promise<string> {
  const sent = new WeakMap<Socket, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const n = sent.get(req.socket) ?? 0;
      sent.set(req.socket, n + 1);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answers[n]));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Answer {
  readonly status: number;
  readonly message: Record<string, unknown>;
}

/**
 * Sends `envelopes` to `target`'s handshake, in order, on one connection (as a replaying attacker
 * would), stopping at the first refusal: the responder closes the connection after one.
 */
async function replay(target: TestNode, envelopes: readonly Envelope[]): Promise<Answer[]> {
  const client = new Client(`http://${target.clusterAddress}`, { pipelining: 1 });
  const answers: Answer[] = [];
  try {
    for (const envelope of envelopes) {
      const res = await client.request({
        path: HANDSHAKE_PATH,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(envelope),
      });
      const { message } = (await res.body.json()) as { message: Record<string, unknown> };
      answers.push({ status: res.statusCode, message });
      if (message["type"] === "pair.refused") break;
    }
  } finally {
    await client.close();
  }
  return answers;
}

const refused = (code: string) => ({ version: 1, type: "pair.refused", code });

const pinnedOf = (n: TestNode) => peersOf(n).map((p) => `${p.name}@${p.fingerprint}`);

beforeAll(async () => {
  [laptop, desktop] = await Promise.all([startTestNode("laptop"), startTestNode("pc-3090")]);
  const seen: Envelope[] = [];
  const relay = await recordingRelay(desktop, seen);
  pin = await showPin(desktop);
  const joined = await joinWith(laptop, relay, pin);
  if (joined.status !== 200) throw new Error(`the recorded pairing failed: ${JSON.stringify(joined.json)}`);
  const [hello, share, confirm, confirmed] = seen;
  recorded = { hello: hello!, share: share!, confirm: confirm!, confirmed: confirmed! };
  expect(seen.map((e) => e.message["type"])).toEqual([
    "pair.hello",
    "pair.share",
    "pair.confirm",
    "pair.confirmed",
  ]);
});

afterAll(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await Promise.all([laptop?.close(), desktop?.close()]);
});

const others: TestNode[] = [];
afterEach(async () => {
  await Promise.all(others.splice(0).map((n) => n.close()));
});

describe("replayed pairing messages", () => {
  it("after the pairing completed, to the same responder: refused, the used PIN stays used, nothing new is pinned", async () => {
    const before = pinnedOf(desktop);
    expect(before).toEqual([`laptop@${laptop.node.cluster.identity.fingerprint}`]);
    expect(desktop.node.cluster.pinStatus()).toEqual({ state: "consumed" });

    // The whole exchange again: the hello finds no usable PIN (it was single use).
    expect(await replay(desktop, [recorded.hello, recorded.confirm])).toEqual([
      { status: 200, message: refused("pin_expired") },
    ]);
    // The confirm alone, on a connection of its own: there is no exchange for it.
    expect(await replay(desktop, [recorded.confirm])).toEqual([
      { status: 400, message: refused("malformed_message") },
    ]);
    expect(desktop.node.cluster.pinStatus()).toEqual({ state: "consumed" });
    expect(pinnedOf(desktop)).toEqual(before);
  });

  it("to the same responder under a new PIN, once it unpaired the initiator: key confirmation fails, one attempt is spent, the node stays unpaired", async () => {
    const unpaired = await admin(desktop, "/pair/v1/unpair", { node: "laptop" });
    expect(unpaired.status).toBe(200);
    await showPin(desktop);
    const answers = await replay(desktop, [recorded.hello, recorded.confirm]);
    // The hello is taken at face value (a PAKE hello proves nothing) and gets a fresh share; the
    // recorded confirmation tag is bound to the old session id and PIN, so it fails.
    expect(answers.map((a) => a.message["type"])).toEqual(["pair.share", "pair.refused"]);
    expect(answers[0]!.message["nonce"]).not.toBe(recorded.share.message["nonce"]);
    expect(answers[1]).toEqual({ status: 200, message: refused("pairing_failed") });
    expect(desktop.node.cluster.pinStatus()).toMatchObject({
      state: "active",
      attemptsLeft: 2,
      inFlight: false,
    });
    expect(peersOf(desktop)).toEqual([]);
    expect(desktop.log).toContain("pairing refused: pairing_failed");
  });

  it("to another node showing a PIN: refused, one attempt spent there, nothing pinned", async () => {
    const other = await startTestNode("other");
    others.push(other);
    await showPin(other);
    const answers = await replay(other, [recorded.hello, recorded.confirm]);
    expect(answers.map((a) => a.message["type"])).toEqual(["pair.share", "pair.refused"]);
    expect(answers[1]).toEqual({ status: 200, message: refused("pairing_failed") });
    expect(other.node.cluster.pinStatus()).toMatchObject({ state: "active", attemptsLeft: 2 });
    expect(peersOf(other)).toEqual([]);
  });

  it("out of order: refused; what comes before a share spends no attempt, what breaks an exchange after it spends one", async () => {
    const other = await startTestNode("other");
    others.push(other);
    await showPin(other);
    const attemptsLeft = () => (other.node.cluster.pinStatus() as { attemptsLeft?: number }).attemptsLeft;

    // Messages that cannot open an exchange, each on a fresh connection: the PIN is not touched.
    for (const [what, envelope, status, code] of [
      ["the confirm first", recorded.confirm, 400, "malformed_message"],
      ["the confirmed", recorded.confirmed, 400, "malformed_message"],
      ["the responder's share as a hello", recorded.share, 200, "malformed_message"],
    ] as const) {
      expect(await replay(other, [envelope]), what).toEqual([{ status, message: refused(code) }]);
      expect(attemptsLeft(), what).toBe(3);
    }

    // After a share went out, a second hello, the share or the confirmed in place of the confirm
    // end the exchange and each spends one attempt; the third burns the PIN.
    for (const [what, second, code, left] of [
      ["hello, hello", recorded.hello, "pairing_failed", 2],
      ["hello, share", recorded.share, "pairing_failed", 1],
      ["hello, confirmed", recorded.confirmed, "malformed_message", 0],
    ] as const) {
      const answers = await replay(other, [recorded.hello, second]);
      expect(
        answers.map((a) => a.message["type"]),
        what,
      ).toEqual(["pair.share", "pair.refused"]);
      expect(answers[1]!.message["code"], what).toBe(code);
      expect(other.node.cluster.pinStatus(), what).toEqual(
        left > 0 ? expect.objectContaining({ state: "active", attemptsLeft: left }) : { state: "burnt" },
      );
    }
    // Burnt: even the next well-formed hello is refused.
    expect(await replay(other, [recorded.hello])).toEqual([
      { status: 200, message: refused("pin_attempts_exhausted") },
    ]);
    expect(peersOf(other)).toEqual([]);
  });

  it("the responder's half replayed to the initiator by a fake responder: the initiator refuses and pins nothing", async () => {
    const joiner = await startTestNode("joiner");
    others.push(joiner);
    const fake = await replayingResponder([recorded.share, recorded.confirmed]);
    // Even with the PIN of the recorded pairing: the initiator's fresh nonce changes the session
    // id, so the recorded tag of `pair.confirmed` cannot match.
    const joined = await joinWith(joiner, fake, pin);
    expect(joined.status).toBe(403);
    expect(errorCode(joined)).toBe("pairing_failed");
    expect(peersOf(joiner)).toEqual([]);

    // The laptop of the recorded pairing itself, after it unpaired the desktop, fares no better.
    expect((await admin(laptop, "/pair/v1/unpair", { node: "pc-3090" })).status).toBe(200);
    const again = await joinWith(laptop, fake, pin);
    expect(errorCode(again)).toBe("pairing_failed");
    expect(peersOf(laptop)).toEqual([]);
  });
});
