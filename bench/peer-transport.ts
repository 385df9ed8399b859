/**
 * Issue 13, measurement only: HTTP/1.1 against HTTP/2 for the peer link. A client streams chat
 * completions through "A" (a bare relay, peer-transport-relay-child.ts) to "B" (a TLS 1.3 server
 * with mutual authentication, peer-transport-server-child.ts, streaming SSE chunks at a fixed pace),
 * with A reaching B three ways: undici's HTTP/1.1 Agent (as PAIR does today), undici's Client with
 * HTTP/2, and one node:http2 session. Per round, each transport in rotated order, each with fresh A
 * and B processes and a warm-up round of streams; the report gives per transport the median across
 * rounds of the client's first-chunk and total times, streams/s, A's and B's CPU per stream, event-loop
 * use and RSS peak, the client's reads per request, and each transport's CPU as a ratio of HTTP/1.1's
 * in the same round (median of the ratios).
 *
 *   npx tsx bench/peer-transport.ts [--rounds N] [--quick] [--streams 64] [--seconds 8] [--write]
 *                                   [--max-seconds 600]
 *
 * A and B present PAIR node identities (self-signed, serverAuth + clientAuth, made in a temp dir that
 * is removed at the end) and pin each other, as paired nodes do: the test CA's leaves are for servers
 * only, and B would refuse one as a client certificate. Loopback only. Markdown to stdout, progress to
 * stderr; `--write` also puts the block between the peer-transport markers in bench/results.md.
 * Must not know: PAIR's request path (A and B are bare stand-ins for the two nodes' peer hop).
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadOrCreateIdentity, SYSTEM_CLOCK, type NodeIdentity } from "@pair/cluster";
import { guardChildren } from "./bench-setup.js";
import { forkChild, type BenchChild, type ResourceSample } from "./child-protocol.js";
import { runLoad, type LoadResult, type Target } from "./load-generator.js";
import { cpuMs } from "./load-metrics.js";
import { machineInfo, loadAverage1m } from "./machine-info.js";
import { chatBody, loadFigures, warnErrors } from "./measure.js";
import {
  PEER_HTTP_VERSION_HEADER,
  expectedHttpVersion,
  parsePeerTransportArgs,
  renderPeerTransportReport,
  splicePeerTransportReport,
  transportOrder,
  type PeerTransportOptions,
  type PeerTransportRound,
  type ProcessUse,
  type Transport,
  type TransportRun,
} from "./peer-transport-report.js";
import type { PeerRelayChildArg, PeerRelayChildReady } from "./peer-transport-relay-child.js";
import type { PeerServerChildArg, PeerServerChildReady } from "./peer-transport-server-child.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DOC = resolve(ROOT, "bench", "results.md");
const CHUNKS = 64;
const CHUNK_DELAY_MS = 5;
/** One stream's length: the workers' first streams are spread over it. */
const STREAM_MS = CHUNKS * CHUNK_DELAY_MS;
const REQUEST_TIMEOUT_MS = 30_000;
const BODY = chatBody("bench", CHUNKS);
/** load-generator.ts throws once more than this many streams of one load have failed. */
const LOAD_GIVES_UP_AFTER_ERRORS = 100;

const log = (line: string): void => console.error(line);

interface Identities {
  readonly a: NodeIdentity;
  readonly b: NodeIdentity;
}

const use = (sample: ResourceSample): ProcessUse => ({
  cpuMs: cpuMs(sample),
  eventLoopUtilization: sample.eventLoopUtilization,
  rssPeakBytes: sample.rssPeakBytes,
});

/** A load the load generator gave up on (more than 100 failed streams): no figures, only the failure. */
function abandonedRun(transport: Transport, why: string, a: ProcessUse, b: ProcessUse): TransportRun {
  const none = { p50: NaN, p90: NaN, p99: NaN };
  return {
    transport,
    streams: 0,
    errors: LOAD_GIVES_UP_AFTER_ERRORS + 1,
    firstError: why,
    abandoned: true,
    carried: 0,
    firstChunk: none,
    totalP50: NaN,
    streamsPerS: NaN,
    readsPerRequest: NaN,
    a,
    b,
  };
}

/** Fresh B and A for `transport`, a warm-up round, then the measured load; both children stopped. */
async function measureTransport(
  transport: Transport,
  ids: Identities,
  options: PeerTransportOptions,
  children: BenchChild[],
): Promise<TransportRun> {
  const own: BenchChild[] = [];
  try {
    const bArg: PeerServerChildArg = {
      protocol: transport === "h1" ? "h1" : "h2",
      certPem: ids.b.certPem,
      keyPem: ids.b.privateKeyPem.reveal(),
      clientCertPem: ids.a.certPem,
      chunks: CHUNKS,
      chunkDelayMs: CHUNK_DELAY_MS,
    };
    const b = await forkChild({
      name: `B (${bArg.protocol})`,
      script: resolve(HERE, "peer-transport-server-child.ts"),
      arg: bArg,
      cwd: ROOT,
    });
    children.push(b);
    own.push(b);
    const aArg: PeerRelayChildArg = {
      transport,
      certPem: ids.a.certPem,
      keyPem: ids.a.privateKeyPem.reveal(),
      serverCertPem: ids.b.certPem,
      serverFingerprint: ids.b.fingerprint,
      serverPort: (b.ready as PeerServerChildReady).port,
    };
    const a = await forkChild({
      name: `A (${transport})`,
      script: resolve(HERE, "peer-transport-relay-child.ts"),
      arg: aArg,
      cwd: ROOT,
    });
    children.push(a);
    own.push(a);
    const target: Target = {
      label: "bare",
      host: "127.0.0.1",
      port: (a.ready as PeerRelayChildReady).port,
      chatPath: "/v1/chat/completions",
      warmPath: "/health",
      // Every reply must say it crossed the link with the transport's HTTP version (no silent fallback).
      mustHaveHeader: PEER_HTTP_VERSION_HEADER,
      mustHaveHeaderValue: expectedHttpVersion(transport),
    };
    // Warm-up: every worker's stream at once, so A opens its connections (h1: one per stream) to B.
    const warm = await runLoad({
      target,
      body: BODY,
      concurrency: options.streams,
      requestsPerWorker: 1,
      rampRequestsPerWorker: 0,
      staggerMs: 0,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    warnErrors(`warm-up ${transport}`, warm);
    await Promise.all([a.sample("sample-start"), b.sample("sample-start")]);
    let result: LoadResult;
    try {
      result = await runLoad({
        target,
        body: BODY,
        concurrency: options.streams,
        durationMs: options.seconds * 1000,
        rampRequestsPerWorker: 1,
        staggerMs: STREAM_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (error) {
      // The load generator gives up after 100 failed streams: shown, never sampled.
      const why = error instanceof Error ? error.message : String(error);
      log(`  ! ${transport}: load given up: ${why}`);
      const [aSample, bSample] = await Promise.all([a.sample("sample-stop"), b.sample("sample-stop")]);
      return abandonedRun(transport, why, use(aSample), use(bSample));
    }
    const [aSample, bSample] = await Promise.all([a.sample("sample-stop"), b.sample("sample-stop")]);
    warnErrors(transport, result);
    const figures = loadFigures(result);
    const run: TransportRun = {
      transport,
      streams: figures.streams,
      errors: result.errors,
      ...(result.firstError === undefined ? {} : { firstError: result.firstError }),
      carried: result.sent,
      firstChunk: figures.firstChunk,
      totalP50: figures.total.p50,
      streamsPerS: figures.rps,
      readsPerRequest: figures.readsPerRequest,
      a: use(aSample),
      b: use(bSample),
    };
    const per = (u: ProcessUse) => (u.cpuMs / Math.max(1, run.carried)).toFixed(3);
    log(
      `  ${transport.padEnd(9)} ${run.streams} streams (${run.errors} failed), first chunk p50 ` +
        `${run.firstChunk.p50.toFixed(2)} p99 ${run.firstChunk.p99.toFixed(2)} ms; CPU ms/stream ` +
        `B ${per(run.b)} A ${per(run.a)}; reads/req ${run.readsPerRequest.toFixed(2)}`,
    );
    return run;
  } finally {
    for (const child of own.reverse()) {
      await child.stop();
      children.splice(children.indexOf(child), 1);
    }
  }
}

async function main(): Promise<void> {
  const options = parsePeerTransportArgs(process.argv.slice(2));
  const started = performance.now();
  const loadAtStart = loadAverage1m();
  // Bounded in time, and never leaves a child behind (bench-setup.ts).
  const { children, disarm } = guardChildren("peer-transport", options.maxSeconds, log);
  const dir = mkdtempSync(join(tmpdir(), "pair-peer-transport-"));
  try {
    const ids: Identities = {
      a: await loadOrCreateIdentity(join(dir, "a"), { name: "bench-a", clock: SYSTEM_CLOCK }),
      b: await loadOrCreateIdentity(join(dir, "b"), { name: "bench-b", clock: SYSTEM_CLOCK }),
    };
    const rounds: PeerTransportRound[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const order = transportOrder(r);
      log(`round ${r + 1}/${options.rounds}: ${order.join(", ")}`);
      const round: TransportRun[] = [];
      for (const transport of order) round.push(await measureTransport(transport, ids, options, children));
      rounds.push(round);
    }
    const args = process.argv.slice(2).filter((x) => x !== "--write");
    const block = renderPeerTransportReport(rounds, {
      command: ["npx tsx bench/peer-transport.ts", ...args].join(" "),
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      machine: machineInfo(),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAverage1m(),
      wallSeconds: (performance.now() - started) / 1000,
      rounds: options.rounds,
      streams: options.streams,
      seconds: options.seconds,
      chunks: CHUNKS,
      chunkDelayMs: CHUNK_DELAY_MS,
    });
    console.log(block);
    if (options.write) {
      const doc = existsSync(DOC) ? readFileSync(DOC, "utf8") : undefined;
      writeFileSync(DOC, splicePeerTransportReport(doc, block));
      log(`wrote ${DOC}`);
    }
  } finally {
    disarm();
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
