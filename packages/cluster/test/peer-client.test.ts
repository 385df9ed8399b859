import { X509Certificate } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { PeerCertificate } from "node:tls";
import { Agent, request } from "undici";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodeIdentity } from "../src/peers/identity.js";
import { createPeerAgent, pinnedServerIdentity } from "../src/peers/peer-client.js";
import { fingerprintOfPem, makeCa, makeIdentity, makeLeaf, TempDirs } from "./cluster-fixtures.js";

const idDirs = new TempDirs();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => void (await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))));

/** b: this node; a: the pinned peer; d: another PAIR node, not the pin. */
let a: NodeIdentity;
let b: NodeIdentity;
let d: NodeIdentity;
beforeAll(async () => {
  [a, b, d] = await Promise.all([
    makeIdentity(idDirs, "peer-a"),
    makeIdentity(idDirs, "self-b"),
    makeIdentity(idDirs, "impostor-d"),
  ]);
  return () => idDirs.removeAll();
});

/** A plain HTTPS server (no client certificate needed) counting the requests it answers. */
async function httpsServer(cert: string, key: string): Promise<{ port: number; served: () => number }> {
  let served = 0;
  const server: Server = createServer({ cert, key }, (_req, res) => {
    served += 1;
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { port: (server.address() as AddressInfo).port, served: () => served };
}

function agent(made: Agent): Agent {
  cleanups.push(() => made.destroy());
  return made;
}

const pinOfA = () => ({ node_id: a.nodeId, cert_pem: a.certPem, fingerprint: a.fingerprint });

describe("createPeerAgent", () => {
  it("talks to the pinned peer", async () => {
    const { port, served } = await httpsServer(a.certPem, a.privateKeyPem.reveal());
    const response = await request(`https://127.0.0.1:${port}/`, {
      dispatcher: agent(createPeerAgent({ identity: b, peer: pinOfA() })),
    });
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe("ok");
    expect(served()).toBe(1);
  });

  it("refuses another node's certificate at the pinned peer's address", async () => {
    const { port, served } = await httpsServer(d.certPem, d.privateKeyPem.reveal());
    const pinned = agent(createPeerAgent({ identity: b, peer: pinOfA() }));
    await expect(request(`https://127.0.0.1:${port}/`, { dispatcher: pinned })).rejects.toThrow();
    expect(served()).toBe(0);
  });

  it("refuses a certificate valid for the host name that chains to the pin but is not the pin", async () => {
    // A pin that is a CA (the store never pins one) and a leaf it signed for localhost/127.0.0.1.
    const ca = await makeCa("would-be-ca");
    const leaf = await makeLeaf(ca, "localhost");
    const { port, served } = await httpsServer(leaf.certPem, leaf.keyPem);
    // The certificate is otherwise fine: a client trusting that CA with the usual host name check accepts it.
    const ordinary = agent(new Agent({ connect: { ca: [ca.certPem] } }));
    expect((await request(`https://localhost:${port}/`, { dispatcher: ordinary })).statusCode).toBe(200);
    const pinned = agent(
      createPeerAgent({
        identity: b,
        peer: { node_id: "ca", cert_pem: ca.certPem, fingerprint: fingerprintOfPem(ca.certPem) },
      }),
    );
    await expect(request(`https://localhost:${port}/`, { dispatcher: pinned })).rejects.toMatchObject({
      code: "ERR_PAIR_PEER_NOT_PINNED",
    });
    expect(served()).toBe(1);
  });

  it("will not trust a revoked peer or a record whose certificate is not its pin", () => {
    const cases = [
      { ...pinOfA(), revoked_at: "2026-01-15T12:00:00.000Z" },
      { ...pinOfA(), fingerprint: d.fingerprint },
      { ...pinOfA(), cert_pem: a.certPem + d.certPem },
    ];
    for (const peer of cases)
      expect(() => createPeerAgent({ identity: b, peer })).toThrow(
        expect.objectContaining({ code: "peer_not_trusted" }),
      );
  });

  it("checks its limits", () => {
    expect(() => createPeerAgent({ identity: b, peer: pinOfA(), limits: { connectTimeoutMs: -1 } })).toThrow(
      expect.objectContaining({ code: "invalid_limit" }),
    );
  });
});

describe("pinnedServerIdentity", () => {
  const certOf = (pem: string) => ({ raw: new X509Certificate(pem).raw }) as PeerCertificate;

  it("accepts exactly the pinned certificate, whatever the host name", () => {
    const check = pinnedServerIdentity(a.fingerprint);
    expect(check("anything.example", certOf(a.certPem))).toBeUndefined();
    expect(check("127.0.0.1", certOf(d.certPem))).toBeInstanceOf(Error);
    expect(check("127.0.0.1", {} as PeerCertificate)).toBeInstanceOf(Error);
  });
});
