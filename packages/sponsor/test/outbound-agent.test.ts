// The outbound HTTPS agent: one shared trust store (system roots plus the extra CA), certificates
// always verified — a server whose CA is not trusted is refused, one the extra CA issued is served —
// and many concurrent connections reuse the one context (each new connection used to parse ~140
// root certificates on the event loop).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCa } from "@pair/testkit";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { createOutboundAgent } from "../src/core/outbound-agent.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(key: string, cert: string): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer({ key, cert }, (_req, res) => res.end("ok"));
  server.on("secureConnection", () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => void server.closeAllConnections());
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

describe("outbound agent", () => {
  it("trusts the extra CA for every connection, many at once, and refuses a server it does not trust", async () => {
    const ca = await createTestCa();
    const leaf = await ca.issue();
    const dir = mkdtempSync(join(tmpdir(), "pair-outbound-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "ca.pem"), ca.certPem);
    const server = await serve(leaf.keyPem, leaf.certPem);

    const trusting = createOutboundAgent({ extraCaFile: join(dir, "ca.pem") });
    cleanups.push(() => trusting.close());
    const replies = await Promise.all(
      Array.from({ length: 16 }, () =>
        request(server.url, { dispatcher: trusting }).then(async (r) => [r.statusCode, await r.body.text()]),
      ),
    );
    expect(replies).toEqual(Array.from({ length: 16 }, () => [200, "ok"]));
    expect(server.connections()).toBeGreaterThan(1);

    // The system roots alone do not include the test CA: refused, whatever the server says.
    const systemOnly = createOutboundAgent({ extraCaFile: null });
    cleanups.push(() => systemOnly.close());
    await expect(request(server.url, { dispatcher: systemOnly })).rejects.toThrow(/certificate/i);
  });

  it("checks the host name against the certificate, with the extra CA trusted", async () => {
    const ca = await createTestCa();
    const leaf = await ca.issue({ dns: ["elsewhere.test"], ips: [] });
    const dir = mkdtempSync(join(tmpdir(), "pair-outbound-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "ca.pem"), ca.certPem);
    const server = await serve(leaf.keyPem, leaf.certPem);
    const agent = createOutboundAgent({ extraCaFile: join(dir, "ca.pem") });
    cleanups.push(() => agent.close());
    await expect(request(server.url, { dispatcher: agent })).rejects.toThrow(
      /altnames|does not match|hostname/i,
    );
  });
});
