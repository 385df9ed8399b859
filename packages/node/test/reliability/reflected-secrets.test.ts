// A rented upstream that repeats the request's Authorization header back (a debugging proxy, a
// misconfigured gateway) must not hand the sponsor's token to anyone: seen from a client of a peer,
// on /v1/chat/completions and /api/chat, in a 4xx and a 5xx error body, in a 200 body's error field
// and in a streamed error item split across chunks, the token appears nowhere — raw, as `Bearer …`,
// base64, or inside the base64 of `user:token` — nor in either node's log, data dir (history) or
// `pair nodes --json`. And a rented node's probe error, which names its address, reaches the peer
// only as a code and a fixed text.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/cli-harness.js";
import { admin, joinWith, showPin, startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";
import { sponsorAsTestNode, startSponsor, type Sponsor } from "../rented/rented-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";

const TOKEN = fakeHfToken();
const MODEL = "llama-70b";
const FORMS = {
  raw: TOKEN,
  bearer: `Bearer ${TOKEN}`,
  base64: Buffer.from(TOKEN).toString("base64").replace(/=+$/, ""),
  basic: Buffer.from(`sponsor:${TOKEN}`).toString("base64").replace(/=+$/, ""),
};
const MODES = ["400", "500", "200-error", "stream-error"] as const;
type Mode = (typeof MODES)[number];

const defer = cleanupAfterEach();
const keyring = keyringCa();

/** An HTTPS OpenAI-compatible upstream whose answers repeat the Authorization it was sent. */
async function reflecting(): Promise<{ server: Server; baseUrl: string; port: number; mode: { now: Mode } }> {
  const leaf = await keyring.ca.issue();
  const mode: { now: Mode } = { now: "400" };
  const server = createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
    const auth = req.headers.authorization ?? "";
    const token = auth.replace(/^Bearer /, "");
    const echo = `you sent ${auth} (base64 ${Buffer.from(token).toString("base64")}, basic ${Buffer.from(`sponsor:${token}`).toString("base64")})`;
    if (req.method === "GET") {
      if (auth !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ object: "list", data: [{ id: MODEL, object: "model" }] }));
    }
    req.resume();
    req.on("end", () => {
      switch (mode.now) {
        case "400":
          res.writeHead(400, { "content-type": "application/json" });
          return void res.end(JSON.stringify({ error: { message: echo, type: "invalid_request_error" } }));
        case "500":
          res.writeHead(500, { "content-type": "text/plain" });
          return void res.end(`gateway failed: ${echo}`);
        case "200-error":
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end(JSON.stringify({ error: echo }));
        case "stream-error": {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const item = `data: ${JSON.stringify({ error: { message: echo } })}\n\n`;
          // The token split across two writes (two chunks): the scrub must see it whole.
          const cut = item.indexOf(TOKEN) + 7;
          res.write(item.slice(0, cut));
          setTimeout(() => res.end(`${item.slice(cut)}data: [DONE]\n\n`), 30);
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  defer(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { server, baseUrl: `https://127.0.0.1:${port}/v1`, port, mode };
}

async function world(): Promise<{
  sponsor: Sponsor;
  peer: TestNode;
  upstream: Awaited<ReturnType<typeof reflecting>>;
}> {
  const upstream = await reflecting();
  const sponsor = await startSponsor({
    token: TOKEN,
    baseUrl: upstream.baseUrl,
    caPem: keyring.ca.certPem,
    share: true,
  });
  defer(() => sponsor.close());
  const peer = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
  defer(() => peer.close());
  const shower = sponsorAsTestNode(sponsor);
  expect((await joinWith(peer, shower, await showPin(shower))).status).toBe(200);
  await until(async () => {
    const rows = (await admin(peer, "/pair/v1/models")).json as { model: string }[];
    return rows.some((r) => r.model === MODEL);
  }, 10_000);
  return { sponsor, peer, upstream };
}

function ask(n: TestNode, path: string, stream: boolean): Promise<Response> {
  return fetch(`${n.node.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, stream, messages: [{ role: "user", content: "hi" }] }),
  });
}

function expectNoSecret(text: string, where: string): void {
  for (const [form, value] of Object.entries(FORMS)) expect(text, `${form} in ${where}`).not.toContain(value);
}

/** Every file under `dir`, as text (SQLite files and their WAL included). */
function filesText(dir: string): string {
  return readdirSync(dir)
    .map((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesText(path) : readFileSync(path, "latin1");
    })
    .join("\n");
}

describe("a rented upstream that reflects the sponsor's token", () => {
  it(
    "never shows it to a peer's client, nor in logs, history or pair nodes",
    { timeout: 60_000 },
    async () => {
      const { sponsor, peer, upstream } = await world();
      let scrubbed = 0;
      for (const mode of MODES)
        for (const path of ["/v1/chat/completions", "/api/chat"]) {
          upstream.mode.now = mode;
          const res = await ask(peer, path, mode === "stream-error");
          const text = await res.text();
          expectNoSecret(text, `${mode} on ${path} (HTTP ${res.status})`);
          if (text.includes("[redacted]")) scrubbed++;
          // The sponsor's own client sees no token either.
          expectNoSecret(
            await (await ask(sponsorAsTestNode(sponsor), path, mode === "stream-error")).text(),
            `${mode} on the sponsor`,
          );
        }
      // The upstream did reflect it, and the scrub replaced it (else this test proves nothing).
      expect(scrubbed).toBeGreaterThanOrEqual(4);
      expectNoSecret(sponsor.log.join("\n"), "the sponsor's log");
      expectNoSecret(peer.log.join("\n"), "the peer's log");
      sponsor.node.history.flush();
      peer.node.history.flush();
      expectNoSecret(filesText(sponsor.dataDir), "the sponsor's data dir");
      expectNoSecret(filesText(peer.dataDir), "the peer's data dir");
      const nodes = await runCli(["nodes", "--json", "--config", peer.configFile]);
      expect(nodes.code).toBe(0);
      expectNoSecret(nodes.stdout, "pair nodes --json on the peer");
    },
  );

  it(
    "tells a peer a probe error only as its code and fixed text, never the endpoint's address",
    { timeout: 60_000 },
    async () => {
      const { sponsor, peer, upstream } = await world();
      upstream.server.closeAllConnections();
      await new Promise((r) => upstream.server.close(r));
      const address = `127.0.0.1:${upstream.port}`;
      // The sponsor keeps the detail (its own view: the refused connection and its address)...
      await until(async () => {
        const rows = (await admin(sponsorAsTestNode(sponsor), "/pair/v1/rented")).json as Record<
          string,
          unknown
        >[];
        return rows.find((r) => r["name"] === "gpu-rent")?.["state"] === "unreachable";
      }, 10_000);
      const own = (
        (await admin(sponsorAsTestNode(sponsor), "/pair/v1/rented")).json as Record<string, unknown>[]
      )[0];
      expect(String(own?.["last_error"])).toMatch(/ECONNREFUSED/);
      // ...the peer sees the code and its fixed text.
      await until(async () => {
        const rows = (await admin(peer, "/pair/v1/nodes")).json as Record<string, unknown>[];
        return rows.find((r) => r["name"] === "gpu-rent")?.["state"] === "unreachable";
      }, 10_000);
      const nodes = await runCli(["nodes", "--json", "--config", peer.configFile]);
      const row = (JSON.parse(nodes.stdout) as Record<string, unknown>[]).find(
        (r) => r["name"] === "gpu-rent",
      );
      expect(row?.["reason"]).toBe("unreachable: its sponsor cannot reach it");
      expect(nodes.stdout).not.toContain(address);
      expect(nodes.stdout).not.toMatch(/ECONNREFUSED|https:/);
      // A request from the peer is refused with the same text, no address.
      const res = await ask(peer, "/v1/chat/completions", false);
      const text = await res.text();
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(text).not.toContain(address);
      expect(text).not.toMatch(/ECONNREFUSED/);
    },
  );
});
