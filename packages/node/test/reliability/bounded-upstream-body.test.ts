// A non-streamed reply or error body larger than node.max_upstream_body_mb (default 32 MiB) is cut:
// the node stops reading at the cap (the upstream's connection is destroyed), answers 502
// upstream_error naming the cap and its key, and its memory stays bounded. A real `pair serve`
// child, its RSS read from outside (/proc/PID/status VmRSS) while an upstream on loopback offers a
// 400 MB reply made lazily (never held in memory). Before the cap, one such reply took a node from
// 0.5 GB to 1.8 GB.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rssMib, ServeChild } from "../support/serve-child.js";

const MODEL = "qwen:0.5b";
const REPLY_BYTES = 400 * 1024 * 1024;
const CAP_MIB = 32;
/** Over the cap, what the node may grow by: undici's and the socket's buffers, the heap's slack. */
const MARGIN_MIB = 64;

let engine: EngineEmulator;
let upstream: Server;
let node: ServeChild;
let dir: string;
/** Bytes the upstream managed to send of its last huge reply. */
let sent = 0;
/** What the next inference request gets: a 200 reply or a 500 error body, each REPLY_BYTES long. */
let status = 200;

/** Writes REPLY_BYTES of JSON-ish text in 64 KiB pieces as the socket drains; stops when it closes. */
function huge(res: ServerResponse): void {
  sent = 0;
  const piece = Buffer.alloc(64 * 1024, "a");
  res.writeHead(status, { "content-type": "application/json", "content-length": String(REPLY_BYTES) });
  res.write('{"error":"');
  sent = 10;
  const more = () => {
    while (sent < REPLY_BYTES && !res.destroyed) {
      const n = Math.min(piece.length, REPLY_BYTES - sent);
      sent += n;
      if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) return void res.once("drain", more);
    }
    if (!res.destroyed) res.end();
  };
  more();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-bounded-"));
  engine = await startEngineEmulator({ api: "ollama", name: "big", models: [{ name: MODEL, maxTokens: 4 }] });
  // Probes (GET) go to the emulator; inference gets the huge reply.
  upstream = createServer((req, res) => {
    if (req.method === "POST") {
      req.resume();
      req.on("end", () => huge(res));
      return;
    }
    void request(`${engine.url}${req.url ?? "/"}`).then(
      async (up) => {
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "") });
        res.end(Buffer.from(await up.body.arrayBuffer()));
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const port = (upstream.address() as { port: number }).port;
  node = await ServeChild.create({ name: "bounded", dir, engineUrl: `http://127.0.0.1:${port}` });
  await node.start();
}, 60_000);

afterAll(async () => {
  await node?.kill();
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(path: string): Promise<{ status: number; text: string; growthMib: number }> {
  const pid = node.process!.pid!;
  const baseline = rssMib(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMib(pid))), 20);
  try {
    const res = await request(`${node.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, stream: false, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await res.body.text();
    peak = Math.max(peak, rssMib(pid));
    return { status: res.statusCode, text, growthMib: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

describe("a 400 MB reply from an upstream", () => {
  for (const [what, code] of [
    ["reply", 200],
    ["error body", 500],
  ] as const)
    for (const path of ["/api/chat", "/v1/chat/completions"])
      it(
        `(${what}) on ${path}: 502 upstream_error naming the cap; the node stops reading and stays under the cap plus ${MARGIN_MIB} MiB`,
        { timeout: 60_000 },
        async () => {
          status = code;
          const answer = await ask(path);
          console.log(
            `${what} on ${path}: RSS grew ${answer.growthMib.toFixed(1)} MiB; the upstream sent ${(sent / 1024 / 1024).toFixed(1)} MiB`,
          );
          expect(answer.status).toBe(502);
          expect(answer.text).toContain("upstream_error");
          expect(answer.text).toContain(`${CAP_MIB} MiB`);
          expect(answer.text).toContain("node.max_upstream_body_mb");
          expect(answer.growthMib).toBeLessThan(CAP_MIB + MARGIN_MIB);
          // The read stopped at the cap: the rest was never sent (socket buffers aside).
          expect(sent).toBeLessThan(REPLY_BYTES / 4);
          // The node still serves.
          const health = await fetch(`${node.url}/`);
          expect(health.status).toBe(200);
        },
      );
});
