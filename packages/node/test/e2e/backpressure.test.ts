// Backpressure through the node: an engine that streams as fast as its socket takes is held back by
// a client that stops reading (the node never buffers the stream whole), the client still gets every
// byte in order once it reads again, and a client that goes away ends the engine's reply.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { startNode, type RunningNode } from "../../src/node.js";

const MODEL = "firehose";
/** One SSE event of 16 KiB: `data: ` + JSON of a chunk whose content is `x`s. */
const EVENT = Buffer.from(
  `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "x".repeat(16_300) } }] })}\n\n`,
);
/** An engine that could send this much if nobody held it back (1 GiB). */
const ENGINE_WOULD_SEND = 1 << 30;

interface Firehose {
  /** Bytes the engine's replies have written so far (only when the socket took them). */
  written: number;
  /** Replies that ended because the other side went away. */
  closedEarly: number;
}

function startFirehose(state: Firehose): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: MODEL, object: "model" }] }));
      return;
    }
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    let sent = 0;
    let ended = false;
    res.on("close", () => {
      if (!ended) state.closedEarly += 1;
    });
    const pump = () => {
      while (sent < ENGINE_WOULD_SEND && !res.destroyed) {
        sent += EVENT.length;
        state.written += EVENT.length;
        if (!res.write(EVENT)) return void res.once("drain", pump);
      }
      if (!res.destroyed) {
        ended = true;
        res.end("data: [DONE]\n\n");
      }
    };
    pump();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("backpressure through the node", () => {
  const state: Firehose = { written: 0, closedEarly: 0 };
  let engine: Server;
  let node: RunningNode;
  let dataDir: string;

  beforeAll(async () => {
    engine = await startFirehose(state);
    dataDir = mkdtempSync(join(tmpdir(), "pair-backpressure-"));
    const yaml = [
      "node:",
      "  name: node-a",
      `  data_dir: ${dataDir}`,
      "  listen: 127.0.0.1:11434",
      "  cluster_listen: 127.0.0.1:14323",
      "  discovery: { mdns: false }",
      "engines:",
      "  - name: firehose",
      "    api: openai",
      `    base_url: http://127.0.0.1:${(engine.address() as AddressInfo).port}/v1`,
      "    max_concurrent: 4",
      "    probe_interval_s: 0.2",
    ].join("\n");
    const config = parseConfig(yaml, "test.yaml", { homeDir: dataDir, hostName: "test" });
    node = await startNode({ config, overrides: { port: 0, clusterPort: 0 } });
    for (let i = 0; i < 50 && !node.inventory.models().has(MODEL); i++) {
      await node.inventory.probeOnce();
      await sleep(20);
    }
    expect(node.inventory.models().has(MODEL)).toBe(true);
  });

  afterAll(async () => {
    await node.close(1_000);
    await new Promise<void>((resolve) => engine.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("holds the engine back while the client does not read, then relays every byte in order", async () => {
    const url = new URL(node.url);
    const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "go" }], stream: true });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: "/v1/chat/completions",
          method: "POST",
          headers: { "content-type": "application/json" },
        },
        resolve,
      );
      req.on("error", reject);
      req.end(body);
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    // Socket buffers on three hops fill, then everything stops: far below what the engine would send.
    let before = -1;
    for (let i = 0; i < 40 && before !== state.written; i++) {
      before = state.written;
      await sleep(50);
    }
    expect(state.written).toBe(before);
    expect(state.written).toBeLessThan(64 << 20);

    // Read 4 MiB more than was written when paused: the engine is let go on, and the bytes come in order.
    const target = before + (4 << 20);
    let received = 0;
    let carry = "";
    let events = 0;
    await new Promise<void>((resolve, reject) => {
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        const text = carry + chunk.toString("latin1");
        const parts = text.split("\n\n");
        carry = parts.pop() ?? "";
        for (const part of parts) {
          if (part !== EVENT.toString("latin1", 0, EVENT.length - 2)) reject(new Error("event out of shape"));
          events += 1;
        }
        if (received >= target) resolve();
      });
      res.on("error", reject);
      res.resume();
    });
    expect(events).toBeGreaterThan(before / EVENT.length);
    expect(state.written).toBeGreaterThan(before);

    // The client goes away: the engine's reply is ended early, the workload is cancelled.
    res.destroy();
    for (let i = 0; i < 100 && state.closedEarly === 0; i++) await sleep(20);
    expect(state.closedEarly).toBe(1);
    let status: string | undefined;
    for (let i = 0; i < 100 && status !== "cancelled"; i++) {
      status = node.history.history({ limit: 1 })[0]?.status;
      if (status !== "cancelled") await sleep(20);
    }
    expect(status).toBe("cancelled");
  });
});
