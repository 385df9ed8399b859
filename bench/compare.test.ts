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

  it("judges each PAIR route by its ratio to the bare relays doing the same hops", () => {
    const cell = (
      target: Cell["target"],
      delayMs: number,
      c: number,
      over: Partial<LoadFigures>,
      rss = 0,
    ): Cell => ({
      target,
      delayMs,
      concurrency: c,
      figures: fig(over),
      rssBytes: rss,
    });
    const chunk = (p50: number, p99: number) => ({ firstChunk: { p50, p90: p50, p99 } });
    const cells = (peer: Partial<LoadFigures>, localRss: number): Cell[] => [
      cell("direct", 5, 64, chunk(1, 5)),
      cell("bare-peer", 5, 64, chunk(3, 15)),
      cell("peer", 5, 64, peer),
      cell("direct", 0, 256, { ...chunk(1, 5), rps: 1000 }),
      cell("bare", 0, 256, { ...chunk(1.05, 4), rps: 900 }, 100 * 2 ** 20),
      cell("local", 0, 256, { ...chunk(1.1, 5.1), rps: 860 }, localRss),
    ];
    // Peer: added 2.4 / 14 ms against the baseline's 2 / 10 (1.2×, 1.4×). Local: the baseline's added
    // 0.05 / −1 ms count as the 0.1 ms floor, so PAIR's 0.1 / 0.1 ms are 1×.
    const good = evaluateCompare(cells({ ...chunk(3.4, 19), rps: 100 }, 125 * 2 ** 20));
    expect(good.map((c) => [c.name, c.measured, c.met])).toEqual([
      ["local, 0 ms, 256 streams: × minimal Node proxy", "1.00× / 1.00×, 0.96×", true],
      ["peer, 5 ms, 64 streams: × two bare relays (mTLS, HTTP/2)", "1.20× / 1.40×, 1.00×", true],
      ["local node RSS at 256 streams × the minimal Node proxy's", "125 / 100 MB = 1.25×", true],
    ]);
    const bad = evaluateCompare(cells({ ...chunk(3.5, 21), rps: 94 }, 126 * 2 ** 20));
    expect(bad.filter((c) => !c.met).map((c) => c.measured)).toEqual([
      "1.25× / 1.60×, 0.94× (missed: p50, p99, req/s)",
      "126 / 100 MB = 1.26×",
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
