// Bad input on the cluster port (fast-check, bounded runs). Over mTLS with a *paired* client
// certificate, so the fuzz gets past the TLS pin check and reaches the peer API's decoders: every
// forwarded client route (`POST /pair/v1/peer/route/…`), the `changed` notice, the hello and
// inventory routes and unknown paths get random JSON, a valid body with one field replaced (random
// JSON, wrong types, huge numbers, 200 kB strings, 2,000-deep nesting), truncated bodies, invalid
// UTF-8 and binary. Always an answer below 500, a JSON error with every 4xx, no unhandled rejection,
// and the node serves its peer afterwards. On the plain-HTTP side, the pairing handshake (which
// accepts unpaired clients) gets the same kinds of hello envelopes while a PIN is shown: a pairing
// message or a `pair.refused` with a documented code, never a 5xx.
// Seeds are printed by fast-check on failure; rerun with { seed, path } to replay.
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { Client, request, type Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDSHAKE_PATH, PEER_CHANGED_PATH } from "../../src/cluster-node/index.js";
import {
  calculateGenerator,
  sampleScalar,
  scalarMult,
} from "../../../cluster/src/pairing/cpace-ristretto255.js";
import { createInitiatorPairing, PAIRING_ERROR_CODES } from "@pair/cluster";
import { makeIdentity, TempDirs } from "../../../cluster/test/cluster-fixtures.js";
import {
  agentBetween,
  joinWith,
  peerHello,
  showPin,
  startTestNode,
  startTestNodeWith,
  type TestNode,
} from "../cluster/node-pair-harness.js";

const MODEL = "qwen:0.5b";
const RUNS = 200;
const ROUTE = "/pair/v1/peer/route";

const unhandled: unknown[] = [];
const trap = (reason: unknown) => void unhandled.push(reason);
const dirs = new TempDirs();
let server: TestNode; // has the engine; the fuzz target
let peer: TestNode; // paired with `server`; its certificate opens the peer port
let agent: Agent;
let hello: { cert: string; cluster_port: number; message: Record<string, unknown> };

beforeAll(async () => {
  process.on("unhandledRejection", trap);
  [server, peer] = await Promise.all([
    startTestNodeWith("gpu-box", { models: [MODEL] }),
    startTestNode("laptop"),
  ]);
  const joined = await joinWith(peer, server, await showPin(server));
  if (joined.status !== 200) throw new Error(`pairing for the fuzz failed: ${JSON.stringify(joined.json)}`);
  agent = agentBetween(peer, server);
  // A well-formed hello from a third identity, the base the handshake fuzz mutates.
  const stranger = await makeIdentity(dirs, "stranger");
  const initiator = createInitiatorPairing({
    self: { nodeId: stranger.nodeId, name: "stranger", fingerprint: stranger.fingerprint },
    pin: "123456",
    randomBytes: (n) => randomBytes(n),
  });
  if (!initiator.ok) throw new Error(initiator.error.message);
  hello = { cert: stranger.certPem, cluster_port: 14323, message: { ...initiator.value.start() } };
});

afterAll(async () => {
  await agent?.destroy();
  await Promise.all([server?.close(), peer?.close()]);
  dirs.removeAll();
  process.off("unhandledRejection", trap);
});

/** The valid bodies of the forwarded client routes, as a peer relays them. */
const FORWARDED: Readonly<Record<string, Record<string, unknown>>> = {
  "/v1/chat/completions": { model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3 },
  "/v1/completions": { model: MODEL, prompt: "hi", max_tokens: 3 },
  "/v1/embeddings": { model: MODEL, input: "hi" },
  "/api/chat": { model: MODEL, messages: [{ role: "user", content: "hi" }], stream: false },
  "/api/generate": { model: MODEL, prompt: "hi", stream: false },
  "/api/embed": { model: MODEL, input: "hi" },
  "/api/show": { model: MODEL },
};

/** Every other peer route (and a few that do not exist), with the body a valid call would carry. */
const OTHER: Readonly<Record<string, { method: string; valid: Record<string, unknown> }>> = {
  [PEER_CHANGED_PATH]: { method: "POST", valid: { state: "changed" } },
  "/pair/v1/peer/hello": { method: "POST", valid: {} },
  "/pair/v1/peer/inventory": { method: "POST", valid: {} },
  // The peer route answers model listings (a node's own /v1/models, /api/tags, /api/ps) to merge:
  // a route it does not know is 404, whatever the body.
  [`${ROUTE}/v1/no-such-route`]: { method: "POST", valid: {} },
  [`${ROUTE}/pair/v1/status`]: { method: "POST", valid: {} },
  "/pair/v1/pin": { method: "POST", valid: {} },
  "/pair/v1/peer/nothing": { method: "PUT", valid: { state: "changed" } },
};

const huge = fc.constantFrom<unknown>(
  1e308,
  -1,
  2 ** 53 + 1,
  "x".repeat(200_000),
  Array.from({ length: 5_000 }, () => ({ role: "user", content: "hi" })),
  JSON.parse("[".repeat(2_000) + "]".repeat(2_000)) as unknown,
);

/** A replacement at one place of `valid` (a top-level key, or `key.sub` one level down). */
function replaced(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const paths: [string, string | undefined][] = [];
  for (const [key, value] of Object.entries(valid)) {
    paths.push([key, undefined]);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      for (const sub of Object.keys(value)) paths.push([key, sub]);
  }
  if (paths.length === 0) paths.push(["model", undefined]);
  return fc
    .tuple(fc.constantFrom(...paths), fc.oneof(fc.jsonValue(), huge, fc.constant(undefined)))
    .map(([[key, sub], v]) =>
      sub === undefined
        ? { ...valid, [key]: v }
        : { ...valid, [key]: { ...(valid[key] as Record<string, unknown>), [sub]: v } },
    );
}

/** A body for `valid`: random JSON, one field replaced, truncated, with invalid UTF-8, or binary. */
function bodies(valid: Record<string, unknown>): fc.Arbitrary<Buffer> {
  const text = JSON.stringify(valid);
  return fc.oneof(
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
    replaced(valid).map((v) => Buffer.from(JSON.stringify(v))),
    fc.nat({ max: text.length - 1 }).map((n) => Buffer.from(text.slice(0, n))),
    fc
      .tuple(fc.nat({ max: text.length }), fc.uint8Array({ minLength: 1, maxLength: 8 }))
      .map(([at, bytes]) =>
        Buffer.concat([
          Buffer.from(text.slice(0, at)),
          Buffer.from(bytes.map((b) => 0x80 | (b & 0x3f))),
          Buffer.from(text.slice(at)),
        ]),
      ),
    fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s)),
    fc.constant(Buffer.from("[".repeat(100_000))),
  );
}

interface Answer {
  readonly status: number;
  readonly text: string;
}

/** A request on the peer port, over mTLS with the paired peer's certificate. */
async function peerCall(method: string, path: string, body: Buffer): Promise<Answer> {
  const res = await request(`https://127.0.0.1:${server.node.cluster.port}${path}`, {
    dispatcher: agent,
    method: method as "POST",
    headers: { "content-type": "application/json", "x-pair-requester": "fuzz" },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

function expectClean(what: string, body: Buffer, answer: Answer): void {
  const said = `${what} ${body.subarray(0, 120).toString("latin1")} → ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, said).toBeLessThan(500);
  if (answer.status >= 400) expect(JSON.stringify(JSON.parse(answer.text)), said).toMatch(/error/);
}

/** The server still answers its peer: the mTLS hello and a forwarded chat. */
async function stillServes(): Promise<void> {
  expect((await peerHello(server, agent)).status).toBe(200);
  const chat = await peerCall(
    "POST",
    `${ROUTE}/api/chat`,
    Buffer.from(JSON.stringify(FORWARDED["/api/chat"])),
  );
  expect(chat.status, chat.text).toBe(200);
}

describe("bad input on the peer API, over mTLS with a paired certificate", () => {
  it(`forwarded client routes: ${RUNS} runs per route, always < 500, never an unhandled rejection`, async () => {
    const statuses = new Set<number>();
    for (const [route, valid] of Object.entries(FORWARDED))
      await fc.assert(
        fc.asyncProperty(bodies(valid), async (body) => {
          const answer = await peerCall("POST", `${ROUTE}${route}`, body);
          statuses.add(answer.status);
          expectClean(`${ROUTE}${route}`, body, answer);
        }),
        { numRuns: RUNS },
      );
    // The fuzz reached the decoders (400s) and, with some bodies still valid, the engine (200s).
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400]));
    await stillServes();
    expect(unhandled).toEqual([]);
  });

  it(`the changed notice, hello, inventory and unknown routes: ${RUNS} runs each, always a 4xx JSON error or success`, async () => {
    for (const [path, { method, valid }] of Object.entries(OTHER))
      await fc.assert(
        fc.asyncProperty(bodies(valid), async (body) => {
          const answer = await peerCall(method, path, body);
          expectClean(`${method} ${path}`, body, answer);
          if (path !== PEER_CHANGED_PATH) expect(answer.status).toBe(404);
        }),
        { numRuns: RUNS },
      );
    await stillServes();
    expect(unhandled).toEqual([]);
  });
});

describe("bad input on the pairing handshake (plain HTTP, unpaired clients)", () => {
  /** One handshake request on a fresh connection (the envelope is a hello: one per connection). */
  async function handshake(body: Buffer): Promise<Answer> {
    const res = await request(`http://127.0.0.1:${server.node.cluster.port}${HANDSHAKE_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  it(`hello envelopes while a PIN is shown: ${RUNS} runs, a pairing message or a documented refusal, never 5xx`, async () => {
    const envelope = hello as unknown as Record<string, unknown>;
    const mutated = fc.oneof(
      bodies(envelope),
      replaced(hello.message).map((message) => Buffer.from(JSON.stringify({ ...hello, message }))),
    );
    const codes: string[] = [];
    await fc.assert(
      fc.asyncProperty(mutated, async (body) => {
        // Spent attempts burn a PIN: show a fresh one whenever it is not active, so hellos reach
        // the PIN issuer and the key exchange rather than stopping at `pin_expired`.
        if (server.node.cluster.pinStatus().state !== "active") await showPin(server);
        const answer = await handshake(body);
        const said = `${body.subarray(0, 120).toString("latin1")} → ${answer.status} ${answer.text.slice(0, 200)}`;
        expect(answer.status, said).toBeLessThan(500);
        const message = (JSON.parse(answer.text) as { message: { type: string; code?: string } }).message;
        if (message.type === "pair.refused") {
          expect(PAIRING_ERROR_CODES, said).toContain(message.code);
          codes.push(message.code ?? "");
        } else
          expect({ status: answer.status, type: message.type }, said).toEqual({
            status: 200,
            type: "pair.share",
          });
      }),
      { numRuns: RUNS },
    );
    // The fuzz reached past the envelope reader: some hellos were read and refused for their message.
    expect(new Set(codes)).toContain("malformed_message");
    expect(server.node.cluster.pairedPeers().map((p) => p.name)).toEqual(["laptop"]);
    await stillServes();
    expect(unhandled).toEqual([]);
  });

  it(`the second message after a good hello (where pair.confirm belongs): ${RUNS} runs, a documented refusal, never 5xx`, async () => {
    // Shaped like a confirm (a valid group element as the share, a 64-byte tag), so replacing one
    // field still reaches the key confirmation; the tag is random, so it never succeeds.
    const confirm = {
      message: {
        version: 1,
        type: "pair.confirm",
        share: Buffer.from(
          scalarMult(
            sampleScalar((n) => randomBytes(n)),
            calculateGenerator(randomBytes(8), randomBytes(8), randomBytes(8)),
          ),
        ).toString("base64url"),
        mac: randomBytes(64).toString("base64url"),
      },
    };
    const mutated = fc.oneof(
      bodies(confirm),
      replaced(confirm.message).map((message) => Buffer.from(JSON.stringify({ message }))),
      fc.constant(Buffer.from(JSON.stringify(confirm))),
    );
    const codes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(mutated, async (body) => {
        if (server.node.cluster.pinStatus().state !== "active") await showPin(server);
        const client = new Client(`http://127.0.0.1:${server.node.cluster.port}`, { pipelining: 1 });
        try {
          const post = async (payload: Buffer | string): Promise<Answer> => {
            const res = await client.request({
              path: HANDSHAKE_PATH,
              method: "POST",
              headers: { "content-type": "application/json" },
              body: payload,
            });
            return { status: res.statusCode, text: await res.body.text() };
          };
          const share = await post(JSON.stringify(hello));
          expect(share.text).toContain('"type":"pair.share"');
          const answer = await post(body);
          const said = `${body.subarray(0, 120).toString("latin1")} → ${answer.status} ${answer.text.slice(0, 200)}`;
          expect(answer.status, said).toBeLessThan(500);
          const message = (JSON.parse(answer.text) as { message: { type: string; code: string } }).message;
          expect(message.type, said).toBe("pair.refused");
          expect(PAIRING_ERROR_CODES, said).toContain(message.code);
          codes.add(message.code);
        } finally {
          await client.destroy();
        }
      }),
      { numRuns: RUNS },
    );
    // Both the message reader and the key confirmation were reached.
    expect([...codes].sort(), [...codes].join()).toEqual(
      expect.arrayContaining(["malformed_message", "pairing_failed"]),
    );
    expect(server.node.cluster.pairedPeers().map((p) => p.name)).toEqual(["laptop"]);
    await stillServes();
    expect(unhandled).toEqual([]);
  });
});
