// The peer-transport benchmark's two children, end to end on loopback: through each of the three
// transports, A relays B's SSE streams whole (HTTP 200, every event, `data: [DONE]`) and as they come
// (more than one read per stream at the client), over the HTTP version the transport is named after;
// B admits only A's pinned certificate; A refuses a B whose certificate is not the pinned one. A few
// short streams each, no timing asserted.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateIdentity, SYSTEM_CLOCK, type NodeIdentity } from "@pair/cluster";
import { forkChild, type BenchChild } from "./child-protocol.js";
import { runLoad } from "./load-generator.js";
import { chatBody } from "./measure.js";
import {
  PEER_HTTP_VERSION_HEADER,
  TRANSPORTS,
  expectedHttpVersion,
  type Transport,
} from "./peer-transport-report.js";
import type { PeerRelayChildArg, PeerRelayChildReady } from "./peer-transport-relay-child.js";
import type { PeerServerChildArg, PeerServerChildReady } from "./peer-transport-server-child.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const CHUNKS = 8;

let dir: string;
let a: NodeIdentity;
let b: NodeIdentity;
let stranger: NodeIdentity;
const children: BenchChild[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-peer-transport-test-"));
  a = await loadOrCreateIdentity(join(dir, "a"), { name: "a", clock: SYSTEM_CLOCK });
  b = await loadOrCreateIdentity(join(dir, "b"), { name: "b", clock: SYSTEM_CLOCK });
  stranger = await loadOrCreateIdentity(join(dir, "s"), { name: "s", clock: SYSTEM_CLOCK });
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function startB(protocol: "h1" | "h2", server = b): Promise<number> {
  const arg: PeerServerChildArg = {
    protocol,
    certPem: server.certPem,
    keyPem: server.privateKeyPem.reveal(),
    clientCertPem: a.certPem,
    chunks: CHUNKS,
    chunkDelayMs: 5,
  };
  return ((await started(`B ${protocol}`, "peer-transport-server-child.ts", arg)) as PeerServerChildReady)
    .port;
}

/** A child of this folder, stopped after the test; its ready value. */
async function started(name: string, script: string, arg: unknown): Promise<unknown> {
  const child = await forkChild({ name, script: resolve(HERE, script), arg, cwd: ROOT });
  children.push(child);
  return child.ready;
}

async function startA(transport: Transport, serverPort: number): Promise<number> {
  const arg: PeerRelayChildArg = {
    transport,
    certPem: a.certPem,
    keyPem: a.privateKeyPem.reveal(),
    serverCertPem: b.certPem,
    serverFingerprint: b.fingerprint,
    serverPort,
  };
  return ((await started(`A ${transport}`, "peer-transport-relay-child.ts", arg)) as PeerRelayChildReady)
    .port;
}

const load = (port: number, transport: Transport) =>
  runLoad({
    target: {
      label: "bare",
      host: "127.0.0.1",
      port,
      chatPath: "/v1/chat/completions",
      warmPath: "/health",
      mustHaveHeader: PEER_HTTP_VERSION_HEADER,
      mustHaveHeaderValue: expectedHttpVersion(transport),
    },
    body: chatBody("bench", CHUNKS),
    concurrency: 4,
    requestsPerWorker: 2,
    rampRequestsPerWorker: 0,
    staggerMs: 0,
    requestTimeoutMs: 10_000,
  });

describe("peer-transport children", () => {
  it.each(TRANSPORTS)("relays every stream whole and as it comes through %s", async (transport) => {
    const bPort = await startB(transport === "h1" ? "h1" : "h2");
    const result = await load(await startA(transport, bPort), transport);
    expect(result.firstError).toBeUndefined();
    expect(result.errors).toBe(0);
    expect(result.samples).toHaveLength(8);
    for (const s of result.samples) {
      expect(s.events).toBe(CHUNKS + 1);
      expect(s.reads).toBeGreaterThan(1);
    }
  });

  it("B refuses a client without a certificate and one with another certificate", async () => {
    const port = await startB("h2");
    const attempt = (who?: NodeIdentity) =>
      new Promise<string>((settle) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/v1/chat/completions",
            ca: [b.certPem],
            checkServerIdentity: () => undefined,
            ...(who === undefined ? {} : { cert: who.certPem, key: who.privateKeyPem.reveal() }),
          },
          (res) => {
            res.resume();
            settle(`HTTP ${res.statusCode}`);
          },
        );
        req.on("error", (e) => settle(`refused: ${e.message}`));
        req.end("{}");
      });
    expect(await attempt()).toMatch(/^refused/);
    expect(await attempt(stranger)).toMatch(/^refused/);
    expect(await attempt(a)).toBe("HTTP 200");
  });

  it.each(TRANSPORTS)("A (%s) relays nothing from a B whose certificate is not the pinned one", async (t) => {
    const bPort = await startB(t === "h1" ? "h1" : "h2", stranger);
    const result = await load(await startA(t, bPort), t);
    expect(result.samples).toHaveLength(0);
    expect(result.errors).toBe(8);
  });
});
