// The comparison benchmark's pieces that can be checked without running it: the load generator's
// reads and events (an event's blank line split across two reads counts once), TTFB before the first
// chunk, the median of figures, nginx's generated config, and the issue-13 targets' verdicts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { evaluateCompare, type Cell } from "./compare-report.js";
import { runLoad } from "./load-generator.js";
import { loadFigures, medianFigures, type LoadFigures } from "./measure.js";
import { nginxConfig } from "./nginx.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe("load generator", () => {
  it("counts SSE events across reads and times the headers before the first chunk", async () => {
    // Three events and [DONE], written in 4 pieces with a blank line split between two of them.
    const pieces = ['data: {"a":1}\n\ndata: {"a":2}\n', '\ndata: {"a":3}\n\n', "data: [DONE]\n", "\n"];
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      let i = 0;
      const next = () => {
        if (i === pieces.length) return void res.end();
        res.write(pieces[i++]);
        setTimeout(next, 15);
      };
      setTimeout(next, 20);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const result = await runLoad({
      target: { label: "direct", host: "127.0.0.1", port, chatPath: "/", warmPath: "/" },
      body: "{}",
      concurrency: 1,
      requestsPerWorker: 1,
      rampRequestsPerWorker: 0,
      staggerMs: 0,
      requestTimeoutMs: 5_000,
    });
    expect(result.errors).toBe(0);
    const s = result.samples[0]!;
    expect(s.events).toBe(4);
    expect(s.reads).toBe(4);
    expect(s.ttfbMs).toBeLessThan(s.firstChunkMs - 10);
    const f = loadFigures(result);
    expect(f).toMatchObject({ streams: 1, readsPerRequest: 4, eventsPerRequest: 4 });
  });
});

const fig = (over: Partial<LoadFigures>): LoadFigures => ({
  streams: 10,
  errors: 0,
  ttfb: { p50: 1, p90: 1, p99: 1 },
  firstChunk: { p50: 1, p90: 2, p99: 3 },
  total: { p50: 320, p90: 321, p99: 322 },
  rps: 100,
  chunksPerS: 6_500,
  readsPerRequest: 65,
  eventsPerRequest: 67,
  ...over,
});

describe("figures and targets", () => {
  it("takes each figure's median across rounds and sums streams", () => {
    const m = medianFigures([fig({ rps: 90 }), fig({ rps: 100 }), fig({ rps: 300, errors: 1 })]);
    expect(m.rps).toBe(100);
    expect(m.streams).toBe(30);
    expect(m.errors).toBe(1);
  });

  it("passes the local route within the targets and misses it outside them", () => {
    const cells = (local: Partial<LoadFigures>, rss: number): Cell[] => [
      { target: "direct", delayMs: 5, concurrency: 64, figures: fig({}), rssBytes: 0 },
      { target: "local", delayMs: 5, concurrency: 64, figures: fig(local), rssBytes: 0 },
      { target: "direct", delayMs: 0, concurrency: 64, figures: fig({ rps: 1000 }), rssBytes: 0 },
      { target: "local", delayMs: 0, concurrency: 64, figures: fig({ rps: local.rps ?? 900 }), rssBytes: 0 },
      { target: "local", delayMs: 5, concurrency: 256, figures: fig({}), rssBytes: rss },
    ];
    const good = evaluateCompare(
      cells({ firstChunk: { p50: 1.5, p90: 3, p99: 8 }, total: { p50: 322, p90: 0, p99: 0 } }, 100 * 2 ** 20),
    );
    expect(good.every((c) => c.met)).toBe(true);
    const bad = evaluateCompare(
      cells({ firstChunk: { p50: 3, p90: 3, p99: 20 }, readsPerRequest: 30, rps: 700 }, 200 * 2 ** 20),
    );
    expect(bad.filter((c) => !c.met).map((c) => c.name)).toEqual([
      "local, 5 ms, 64 streams: added first chunk p50",
      "local, 5 ms, 64 streams: added first chunk p99",
      "local, 0 ms, 64 streams: requests/s vs direct",
      "local, 5 ms, 64 streams: reads per request (no coalescing: as many as direct)",
      "local node RSS at 256 streams",
    ]);
  });
});

describe("nginx config", () => {
  it("proxies each prefix unbuffered over keep-alive, on loopback only", () => {
    const conf = nginxConfig("/tmp/x", 8080, { d5: "http://127.0.0.1:4000", d0: "http://127.0.0.1:4001" });
    expect(conf).toContain("listen 127.0.0.1:8080;");
    expect(conf).toContain("upstream u_d5 { server 127.0.0.1:4000; keepalive 256; }");
    expect(conf).toContain("location /d0/ {");
    expect(conf.match(/proxy_buffering off;/g)).toHaveLength(2);
    expect(conf).toContain("master_process off;");
  });
});
