// A client's credentials stay at the node: its `Authorization`, `x-api-key` and cookies, and the
// node's admin token, never reach the engine. A recording proxy sits between the node and the engine
// emulator and keeps every header the engine would have seen.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { startNode, type RunningNode } from "../../src/node.js";

const MODEL = "qwen:0.5b";
let engine: EngineEmulator;
let recorder: Server;
let node: RunningNode;
let dataDir: string;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  engine = await startEngineEmulator({ api: "ollama", name: "rec", models: [{ name: MODEL, maxTokens: 4 }] });
  recorder = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void request(`${engine.url}${req.url ?? "/"}`, {
        method: (req.method ?? "GET") as "GET",
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        body: chunks.length > 0 ? Buffer.concat(chunks) : null,
      }).then(
        async (up) => {
          res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "") });
          for await (const c of up.body) res.write(c);
          res.end();
        },
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((r) => recorder.listen(0, "127.0.0.1", r));
  const port = (recorder.address() as { port: number }).port;
  dataDir = mkdtempSync(join(tmpdir(), "pair-secrets-"));
  const yaml = [
    "node:",
    "  name: node-a",
    `  data_dir: ${dataDir}`,
    "  discovery: { mdns: false }",
    "engines:",
    "  - name: rec",
    "    api: ollama",
    `    base_url: http://127.0.0.1:${port}`,
    "    probe_interval_s: 0.2",
  ].join("\n");
  const config = parseConfig(yaml, "test.yaml", { homeDir: dataDir, hostName: "test" });
  node = await startNode({ config, overrides: { port: 0, clusterPort: 0 } });
});

afterAll(async () => {
  await node?.close(500);
  await new Promise((r) => recorder?.close(r));
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("client credentials are never forwarded", () => {
  it("Authorization, x-api-key, cookies and the admin token never reach the engine, on every dialect route", async () => {
    const secret = randomBytes(16).toString("hex");
    const routes: [string, Record<string, unknown>][] = [
      ["/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }] }],
      ["/v1/chat/completions", { model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] }],
      ["/api/chat", { model: MODEL, stream: false, messages: [{ role: "user", content: "hi" }] }],
      ["/api/generate", { model: MODEL, prompt: "hi" }],
      ["/v1/embeddings", { model: MODEL, input: "hi" }],
    ];
    for (const [path, body] of routes) {
      for (const authorization of [`Bearer ${secret}`, `Bearer ${node.adminToken}`]) {
        const res = await request(`${node.url}${path}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization,
            "x-api-key": secret,
            cookie: `pair_session=${secret}`,
            "proxy-authorization": `Basic ${secret}`,
          },
          body: JSON.stringify(body),
        });
        await res.body.dump();
        expect(res.statusCode, path).toBe(200);
      }
    }
    const inference = seen.filter((s) => !/^\/api\/(tags|version|ps)/.test(s.path));
    expect(inference.length).toBeGreaterThanOrEqual(routes.length * 2);
    for (const s of seen) {
      const text = JSON.stringify(s.headers);
      expect(s.headers.authorization, s.path).toBeUndefined();
      expect(s.headers.cookie, s.path).toBeUndefined();
      expect(text, s.path).not.toContain(secret);
      expect(text, s.path).not.toContain(node.adminToken);
    }
  });
});
