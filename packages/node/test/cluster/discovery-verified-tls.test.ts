// "Outbound TLS always verifies certificates": no product source turns verification off, and
// discovery learns who is at a static address without ever completing a TLS handshake with a
// certificate it does not already pin — an unknown port gets its name listed, nothing more.
import { SYSTEM_CLOCK } from "@pair/cluster";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { connect, createServer as createTlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateIdentity, pinnedServerIdentity, startClusterPort } from "@pair/cluster";
import { startDiscoveryNode, until, type DiscoveryNode } from "./discovery-harness.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Lines that turn certificate verification off (or could): anything but `rejectUnauthorized: true`. */
function unverifiedTls(text: string): string[] {
  return text
    .split("\n")
    .filter(
      (line) =>
        (/rejectUnauthorized/.test(line) && !/rejectUnauthorized\s*:\s*true\b/.test(line)) ||
        /NODE_TLS_REJECT_UNAUTHORIZED/.test(line) ||
        /checkServerIdentity\s*:\s*\(\s*\)\s*=>/.test(line),
    );
}

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

describe("no unverified TLS", () => {
  it("no source under packages/*/src turns certificate verification off", () => {
    // The check itself can fail:
    expect(unverifiedTls("  rejectUnauthorized: false,\n ok")).toHaveLength(1);
    expect(unverifiedTls("connect({ rejectUnauthorized:false })")).toHaveLength(1);
    expect(unverifiedTls("process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'")).toHaveLength(1);
    expect(unverifiedTls("checkServerIdentity: () => undefined")).toHaveLength(1);
    expect(unverifiedTls("rejectUnauthorized: true,")).toEqual([]);

    const packages = join(REPO, "packages");
    const files = readdirSync(packages).flatMap((pkg) => {
      try {
        return sources(join(packages, pkg, "src"));
      } catch {
        return [];
      }
    });
    expect(files.some((f) => f.endsWith(join("discovery", "static-probe.ts")))).toBe(true);
    const found = files.flatMap((file) =>
      unverifiedTls(readFileSync(file, "utf8")).map((line) => `${relative(REPO, file)}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });

  it("a static port with an unknown certificate claiming a paired node's name: no handshake completes, listed by name, node_id null", async () => {
    // A cluster port as a stranger would run one: TLS with its own certificate, and the plain-HTTP
    // 404 naming itself "node-b" (the name of a node a is paired with).
    const dir = mkdtempSync(join(tmpdir(), "pair-stranger-"));
    cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const stranger = await loadOrCreateIdentity(dir, { name: "stranger", clock: SYSTEM_CLOCK });
    let tlsConnections = 0;
    let handshakes = 0;
    const tls = createTlsServer(
      { key: stranger.privateKeyPem.reveal(), cert: stranger.certPem, minVersion: "TLSv1.3" },
      (socket) => {
        handshakes += 1;
        socket.destroy();
      },
    );
    tls.on("tlsClientError", () => undefined);
    const http = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ node: "node-b" }));
    });
    const port = await startClusterPort({
      host: "127.0.0.1",
      port: 0,
      tls: (socket) => {
        tlsConnections += 1;
        tls.emit("connection", socket);
      },
      plain: (socket) => {
        http.emit("connection", socket);
        process.nextTick(() => socket.resume());
      },
    });
    cleanups.push(() => port.close());
    const strangerAddress = `127.0.0.1:${port.port}`;

    const b = await node("node-b", {});
    const a = await node("node-a", { peers: [strangerAddress] });
    const pin = ((await admin(b, "/pair/v1/pin", {})).json as { pin: string }).pin;
    expect((await admin(a, "/pair/v1/join", { address: b.clusterAddress, pin })).status).toBe(200);

    // a tries b's pin there (the name matches), and the handshake fails at a's end.
    await until(() => tlsConnections >= 1);
    await until(() => a.node.cluster.discovered().length > 0);
    expect(a.node.cluster.discovered()).toEqual([
      {
        node_id: null,
        name: "node-b",
        address: strangerAddress,
        seen_via: ["static"],
        last_seen: expect.any(String) as unknown,
      },
    ]);
    expect(handshakes).toBe(0);
    const bId = b.node.cluster.identity.nodeId;
    expect(a.node.cluster.peers.active().find((p) => p.node_id === bId)?.address).toBe(b.clusterAddress);
    expect(a.events.some((e) => e.type === "PeerMoved")).toBe(false);

    // The counter does count a handshake that completes: one that pins the stranger's certificate.
    await new Promise<void>((resolve, reject) => {
      const socket = connect({
        host: "127.0.0.1",
        port: port.port,
        ca: [stranger.certPem],
        checkServerIdentity: pinnedServerIdentity(stranger.fingerprint),
        minVersion: "TLSv1.3",
      });
      socket.once("secureConnect", () => resolve(void socket.end()));
      socket.once("error", reject);
    });
    await until(() => handshakes === 1, 1_000);
  });
});
