// The dashboard's live events over a real loopback socket: a `ready` event on connect, one `change`
// event naming the topics whose snapshot moved (volatile keys ignored), heartbeat comments on the
// injected interval, a client forgotten when it disconnects, a cap on open streams, and close.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualRuntime } from "@pair/cluster";
import { DEFAULT_HEARTBEAT_MS, LiveEvents } from "../../src/ui/index.js";
import { until } from "../support/eventually.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(events: LiveEvents): Promise<string> {
  const server = createServer((req, res) => events.serve(req, res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/pair/v1/events`;
}

/** Read the stream until `until` matches what came so far. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  seen: { text: string },
  until: RegExp,
) {
  const decoder = new TextDecoder();
  while (!until.test(seen.text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${String(until)}: ${seen.text}`);
    seen.text += decoder.decode(value, { stream: true });
  }
}

describe("LiveEvents", () => {
  it("sends ready, then a change naming the topics that moved, and heartbeats", async () => {
    const state = { nodes: [{ name: "a", state: "up", last_seen: "t0" }], jobs: [] as string[] };
    const runtime = new VirtualRuntime();
    const events = new LiveEvents({
      sources: { nodes: () => state.nodes, jobs: () => state.jobs },
      ignoredKeys: ["last_seen"],
      timers: runtime.timers,
    });
    const res = await fetch(await serve(events));
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const reader = res.body!.getReader();
    const seen = { text: "" };
    await readUntil(reader, seen, /event: ready\ndata: \{\}\n\n/);
    expect(seen.text).toMatch(/^retry: 2000\n/);
    await until(() => events.clients === 1);

    // Only a volatile key moved: nothing to tell.
    state.nodes = [{ name: "a", state: "up", last_seen: "t1" }];
    expect(events.check()).toEqual([]);
    state.nodes = [{ name: "a", state: "down", last_seen: "t2" }];
    state.jobs = ["w1"];
    expect(events.check()).toEqual(["nodes", "jobs"]);
    await readUntil(reader, seen, /event: change\ndata: \{"topics":\["nodes","jobs"\]\}\n\n/);
    expect(events.check()).toEqual([]);

    runtime.advance(DEFAULT_HEARTBEAT_MS);
    await readUntil(reader, seen, /: heartbeat\n\n/);
    await reader.cancel();
  });

  it("reads no source while no stream is open; the first stream to open takes the baseline", async () => {
    let reads = 0;
    const state = { jobs: ["w1"] };
    const events = new LiveEvents({
      sources: {
        jobs: () => {
          reads += 1;
          return state.jobs;
        },
      },
      timers: new VirtualRuntime().timers,
    });
    state.jobs = ["w2"];
    expect(events.check()).toEqual([]);
    expect(reads).toBe(0);
    const a = new AbortController();
    await fetch(await serve(events), { signal: a.signal });
    await until(() => events.clients === 1);
    expect(reads).toBe(1);
    // What changed before the stream opened is its baseline, not a change.
    expect(events.check()).toEqual([]);
    state.jobs = ["w3"];
    expect(events.check()).toEqual(["jobs"]);
    a.abort();
    await until(() => events.clients === 0);
    const before = reads;
    state.jobs = ["w4"];
    expect(events.check()).toEqual([]);
    expect(reads).toBe(before);
  });

  it("forgets a client that disconnects, and stops the heartbeat when none is left", async () => {
    const runtime = new VirtualRuntime();
    const events = new LiveEvents({ sources: {}, timers: runtime.timers });
    const url = await serve(events);
    const a = new AbortController();
    const b = new AbortController();
    await fetch(url, { signal: a.signal });
    await fetch(url, { signal: b.signal });
    await until(() => events.clients === 2);
    expect(runtime.pending).toBe(1);
    a.abort();
    await until(() => events.clients === 1);
    expect(runtime.pending).toBe(1);
    b.abort();
    await until(() => events.clients === 0);
    expect(runtime.pending).toBe(0);
  });

  it("refuses a stream beyond maxClients, and every stream after close", async () => {
    const events = new LiveEvents({ sources: {}, maxClients: 1, timers: new VirtualRuntime().timers });
    const url = await serve(events);
    const first = await fetch(url);
    expect(first.status).toBe(200);
    await until(() => events.clients === 1);
    const second = await fetch(url);
    expect(second.status).toBe(503);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/too many/);
    events.close();
    // The open stream ends.
    expect(await first.text()).toMatch(/event: ready/);
    expect(events.clients).toBe(0);
    expect((await fetch(url)).status).toBe(503);
    expect(() => new LiveEvents({ sources: {}, maxClients: 0 })).toThrow(/maxClients/);
  });
});
