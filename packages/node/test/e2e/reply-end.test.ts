// The end of a streamed reply leaves with its last chunk: the node writes the stream's tail and the
// chunked terminator in the tick of the engine's last chunk, while the socket is still corked, so the
// client's socket gets them in one write (one syscall per reply fewer than a terminator written on its
// own). Every earlier chunk still leaves in a write of its own (no coalescing). Observed on the node's
// side of the client's connection: every write the node's sockets make is recorded.
import { Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";

const TERMINATOR = "0\r\n\r\n";

interface Recorded {
  readonly localPort: number | undefined;
  readonly text: string;
}

/** Records what every socket writes (one entry per `_write` / `_writev`) until restored. */
function recordWrites(): { writes: Recorded[]; restore(): void } {
  const proto = Socket.prototype as unknown as {
    _write: (this: Socket, chunk: unknown, encoding: BufferEncoding, cb: (e?: Error | null) => void) => void;
    _writev: (
      this: Socket,
      chunks: { chunk: unknown; encoding: BufferEncoding }[],
      cb: (e?: Error | null) => void,
    ) => void;
  };
  const write = proto._write;
  const writev = proto._writev;
  const writes: Recorded[] = [];
  const text = (chunk: unknown, encoding: BufferEncoding) =>
    typeof chunk === "string"
      ? Buffer.from(chunk, encoding).toString("latin1")
      : Buffer.from(chunk as Uint8Array).toString("latin1");
  proto._write = function (this: Socket, chunk, encoding, cb) {
    writes.push({ localPort: this.localPort, text: text(chunk, encoding) });
    write.call(this, chunk, encoding, cb);
  };
  proto._writev = function (this: Socket, chunks, cb) {
    writes.push({ localPort: this.localPort, text: chunks.map((c) => text(c.chunk, c.encoding)).join("") });
    writev.call(this, chunks, cb);
  };
  return {
    writes,
    restore: () => {
      proto._write = write;
      proto._writev = writev;
    },
  };
}

describe("a streamed reply's end", () => {
  let cluster: Cluster;
  let recording: ReturnType<typeof recordWrites> | undefined;

  beforeAll(async () => {
    // 100 ms between tokens: on a loaded CI machine (load 11 on 2 cores) 15 ms let the node's event loop
    // fall behind and read two tokens at once, which it rightly relays as one write.
    cluster = await startCluster([{ name: "engine", api: "openai", models: ["paced"], tokenDelayMs: 100 }]);
    for (let i = 0; i < 50 && !cluster.node.inventory.models().has("paced"); i++) {
      await cluster.node.inventory.probeOnce();
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  afterEach(() => recording?.restore());
  afterAll(async () => cluster.close());

  it("leaves in the same write as the last chunk, and every earlier chunk in a write of its own", async () => {
    const port = Number(new URL(cluster.node.url).port);
    recording = recordWrites();
    const res = await fetch(`${cluster.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "paced", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    recording.restore();
    expect(body).toContain("data: [DONE]");

    const fromNode = recording.writes.filter((w) => w.localPort === port).map((w) => w.text);
    const withTerminator = fromNode.filter((t) => t.endsWith(TERMINATOR));
    expect(withTerminator).toHaveLength(1);
    // Not on its own: with the last events ([DONE] among them).
    expect(withTerminator[0]).toContain("data: [DONE]");
    expect(withTerminator[0]!.length).toBeGreaterThan(TERMINATOR.length);
    // The engine's 8 tokens came 100 ms apart: each left in a write of its own.
    const withContent = fromNode.filter((t) => t.includes('"content"'));
    expect(withContent.length).toBeGreaterThanOrEqual(8);
  });
});
