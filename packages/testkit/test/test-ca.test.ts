import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import { createTestCa } from "../src/test-ca.js";

async function serve(leaf: { certPem: string; keyPem: string }) {
  const server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_req, res) => res.end("ok"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

describe("createTestCa", () => {
  it("issues a leaf that a client trusting the CA accepts, and one not trusting it refuses", async () => {
    const ca = await createTestCa();
    const { server, port } = await serve(await ca.issue());
    try {
      const trusting = new Agent({ connect: { ca: ca.certPem } });
      const ok = await request(`https://127.0.0.1:${port}/`, { dispatcher: trusting });
      expect(ok.statusCode).toBe(200);
      expect(await ok.body.text()).toBe("ok");
      await trusting.close();

      const other = await createTestCa("another CA");
      const distrusting = new Agent({ connect: { ca: other.certPem } });
      await expect(request(`https://127.0.0.1:${port}/`, { dispatcher: distrusting })).rejects.toThrow();
      await distrusting.close();
    } finally {
      server.close();
    }
  });

  it("binds the leaf to its names: a name not on it fails verification", async () => {
    const ca = await createTestCa();
    const { server, port } = await serve(await ca.issue({ dns: ["emulator.test"], ips: [] }));
    try {
      const agent = new Agent({ connect: { ca: ca.certPem } });
      await expect(request(`https://127.0.0.1:${port}/`, { dispatcher: agent })).rejects.toThrow(
        /altnames|IP: 127\.0\.0\.1/,
      );
      const named = new Agent({ connect: { ca: ca.certPem, servername: "emulator.test" } });
      const ok = await request(`https://127.0.0.1:${port}/`, { dispatcher: named });
      expect(ok.statusCode).toBe(200);
      await ok.body.dump();
      await agent.close();
      await named.close();
    } finally {
      server.close();
    }
  });
});
