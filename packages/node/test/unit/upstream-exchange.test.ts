// An attempt's exchange with its upstream (UpstreamExchange), against a real HTTP server through a
// real undici Client: the reply's head, first bytes and the rest in order; backpressure from the
// client pauses the upstream (its server's writes block) and resumes it on drain; bytes nobody takes
// yet are bounded; a reply that breaks between first() and pump() is reported by pump(); an abort
// before the head, close() on an unread reply and a client gone mid-stream each end the request.
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamExchange } from "../../src/server/upstream-exchange.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface World {
  client: Client;
  server: Server;
  /** Stands in for the node's reply to its own client: only its `drain` and `close` are used. */
  clientRes: ServerResponse & EventEmitter;
  abort: EventEmitter & { aborted: boolean; reason: unknown };
}

const worlds: World[] = [];

afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.client.destroy();
    w.server.closeAllConnections();
    await new Promise((r) => w.server.close(r));
  }
});

async function world(handler: Handler): Promise<World> {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const w: World = {
    client: new Client(`http://127.0.0.1:${port}`),
    server,
    clientRes: new EventEmitter() as ServerResponse & EventEmitter,
    abort: Object.assign(new EventEmitter(), { aborted: false, reason: undefined }),
  };
  worlds.push(w);
  return w;
}

function abortWith(w: World, reason: Error): void {
  w.abort.aborted = true;
  w.abort.reason = reason;
  w.abort.emit("abort");
}

function exchangeOf(w: World): {
  exchange: UpstreamExchange;
  head: ReturnType<UpstreamExchange["start"]>;
} {
  const exchange = new UpstreamExchange(w.clientRes, w.abort);
  const head = exchange.start(w.client, { path: "/", method: "POST", body: "{}", bodyTimeout: 0 });
  return { exchange, head };
}

/** Writes `total` bytes in `size` chunks as fast as the socket takes them; reports when it blocks. */
function firehose(total: number, size: number, seen: { written: number; blocked: number }): Handler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/octet-stream", "x-up": "1" });
    const chunk = Buffer.alloc(size, 97);
    const write = () => {
      while (seen.written < total) {
        seen.written += size;
        if (!res.write(chunk)) {
          seen.blocked += 1;
          res.once("drain", write);
          return;
        }
      }
      res.end();
    };
    write();
  };
}

/** An exchange with a firehose upstream, its head and first bytes read: what the backpressure tests share. */
async function firehoseExchange(total: number, size: number) {
  const seen = { written: 0, blocked: 0 };
  const w = await world(firehose(total, size, seen));
  const { exchange, head } = exchangeOf(w);
  await head;
  const firstBytes = (await exchange.first())!.length;
  return { w, seen, exchange, firstBytes };
}

describe("UpstreamExchange", () => {
  it("gives the head, the first bytes, then every other byte in order, and 'ended'", async () => {
    const w = await world((_req, res) => {
      res.writeHead(201, { "x-up": "yes" });
      let i = 0;
      const tick = setInterval(() => {
        if (i === 5) {
          clearInterval(tick);
          res.end();
          return;
        }
        res.write(`token-${i++};`);
      }, 5);
    });
    const { exchange, head } = exchangeOf(w);
    const h = await head;
    expect(h.statusCode).toBe(201);
    expect(h.headers["x-up"]).toBe("yes");
    const first = await exchange.first();
    const rest: string[] = [];
    expect(await exchange.pump((c) => void rest.push(c.toString()))).toBe("ended");
    expect(first!.toString() + rest.join("")).toBe("token-0;token-1;token-2;token-3;token-4;");
    exchange.close();
  });

  it("calls onEnd in the tick of the last chunk, before pump() settles; and once, for a body already ended", async () => {
    const w = await world((_req, res) => {
      res.writeHead(200);
      res.write("a;");
      setTimeout(() => res.end("last;"), 20);
    });
    const { exchange, head } = exchangeOf(w);
    await head;
    await exchange.first();
    const events: string[] = [];
    let lastChunkTick = -1;
    let tick = 0;
    const ticking = setInterval(() => tick++, 0);
    const pumped = exchange.pump(
      (c) => {
        events.push(`chunk ${c.toString()}`);
        lastChunkTick = tick;
      },
      () => {
        events.push("end");
        // Same tick as the last chunk: nothing else ran in between.
        expect(tick).toBe(lastChunkTick);
      },
    );
    void pumped.then(() => events.push("settled"));
    expect(await pumped).toBe("ended");
    clearInterval(ticking);
    await Promise.resolve();
    expect(events).toEqual(["chunk last;", "end", "settled"]);
    exchange.close();

    // A body that ended before pump(): onEnd runs from pump() itself, once.
    const w2 = await world((_req, res) => res.end("whole"));
    const second = exchangeOf(w2);
    await second.head;
    expect((await second.exchange.first())!.toString()).toBe("whole");
    await sleep(20);
    let ends = 0;
    expect(
      await second.exchange.pump(
        () => undefined,
        () => ends++,
      ),
    ).toBe("ended");
    expect(ends).toBe(1);
    second.exchange.close();
  });

  it("does not call onEnd when the reply breaks or the client goes away, and rejects pump() if onEnd throws", async () => {
    const w = await world((req, res) => {
      res.writeHead(200);
      res.write("a;");
      setTimeout(() => req.socket.destroy(), 20);
    });
    const { exchange, head } = exchangeOf(w);
    await head;
    await exchange.first();
    let ends = 0;
    await expect(
      exchange.pump(
        () => undefined,
        () => ends++,
      ),
    ).rejects.toThrow();
    expect(ends).toBe(0);
    exchange.close();

    const w2 = await world((_req, res) => {
      res.writeHead(200);
      res.write("a;");
      setTimeout(() => res.end("b;"), 20);
    });
    const second = exchangeOf(w2);
    await second.head;
    await second.exchange.first();
    const failing = second.exchange.pump(
      () => undefined,
      () => {
        throw new Error("the client's socket refused the end");
      },
    );
    await expect(failing).rejects.toThrow("the client's socket refused the end");
    second.exchange.close();
  });

  it("pauses the upstream while the client drains, and resumes on drain", async () => {
    const total = 32 * 1024 * 1024;
    const { w, seen, exchange, firstBytes } = await firehoseExchange(total, 64 * 1024);
    let received = firstBytes;
    let accept = false;
    const done = exchange.pump((c) => {
      received += c.length;
      return accept;
    });
    await sleep(300);
    // The sink said "full" at once: the upstream's server is blocked, far from its 32 MiB.
    expect(seen.blocked).toBeGreaterThan(0);
    expect(received).toBeLessThan(1024 * 1024);
    expect(seen.written).toBeLessThan(total / 2);
    const stalledAt = received;
    await sleep(100);
    expect(received).toBe(stalledAt);
    accept = true;
    w.clientRes.emit("drain");
    expect(await done).toBe("ended");
    expect(received).toBe(total);
    exchange.close();
  });

  it("keeps at most a bounded amount of bytes nobody takes yet (between first() and pump())", async () => {
    const total = 16 * 1024 * 1024;
    const { seen, exchange, firstBytes } = await firehoseExchange(total, 16 * 1024);
    let received = firstBytes;
    await sleep(300);
    // Not read for 300 ms: the exchange paused its upstream rather than buffer 16 MiB.
    expect(seen.blocked).toBeGreaterThan(0);
    expect(seen.written).toBeLessThan(total / 2);
    expect(await exchange.pump((c) => void (received += c.length))).toBe("ended");
    expect(received).toBe(total);
  });

  it("reports a reply that broke between first() and pump() from pump()", async () => {
    const w = await world((_req, res) => {
      res.writeHead(200);
      res.write("partial");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { exchange, head } = exchangeOf(w);
    await head;
    expect((await exchange.first())!.toString()).toBe("partial");
    await sleep(100);
    await expect(exchange.pump(() => true)).rejects.toThrow();
    exchange.close();
  });

  it("an abort before the head rejects start() with the reason and ends the request upstream", async () => {
    let upstreamClosed: Promise<unknown> | undefined;
    const w = await world((req) => {
      upstreamClosed = once(req.socket, "close");
    });
    const { exchange, head } = exchangeOf(w);
    await sleep(50);
    abortWith(w, new Error("no first byte in time"));
    await expect(head).rejects.toThrow("no first byte in time");
    await upstreamClosed;
    exchange.close();
  });

  it("an abort that came before start() rejects start() at once", async () => {
    const w = await world(() => undefined);
    abortWith(w, new Error("client went away"));
    await expect(exchangeOf(w).head).rejects.toThrow("client went away");
  });

  it("close() on a reply not read to its end aborts it upstream", async () => {
    let upstreamClosed: Promise<unknown> | undefined;
    const w = await world((_req, res) => {
      upstreamClosed = once(res, "close");
      res.writeHead(200);
      res.write("first");
    });
    const { exchange, head } = exchangeOf(w);
    await head;
    await exchange.first();
    exchange.close();
    await upstreamClosed;
    await expect(exchange.pump(() => true)).rejects.toThrow("the attempt ended before its reply");
  });

  it("collect() returns a whole reply (an error body)", async () => {
    const w = await world((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.write('{"error":');
      setTimeout(() => res.end('"boom"}'), 10);
    });
    const { exchange, head } = exchangeOf(w);
    expect((await head).statusCode).toBe(500);
    expect((await exchange.collect()).toString()).toBe('{"error":"boom"}');
    exchange.close();
  });

  it("'closed' when the client goes away mid-stream", async () => {
    const w = await world((_req, res) => {
      res.writeHead(200);
      const tick = setInterval(() => res.write("x"), 5);
      res.on("close", () => clearInterval(tick));
    });
    const { exchange, head } = exchangeOf(w);
    await head;
    await exchange.first();
    const done = exchange.pump(() => true);
    await sleep(30);
    w.clientRes.emit("close");
    expect(await done).toBe("closed");
    exchange.close();
  });
});
