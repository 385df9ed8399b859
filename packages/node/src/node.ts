/**
 * One PAIR node, assembled: engines inventory, scheduler, workload history, metrics and the client
 * port. `startNode` listens and probes; `close` stops accepting, lets streams in flight finish
 * within a bound, then ends what is left.
 * Must not know: command-line parsing, where the config came from.
 */

import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { Agent, type Dispatcher } from "undici";
import { isLoopbackHost, type PairConfig } from "./config/index.js";
import { EngineInventory } from "./engines/engine-inventory.js";
import { WorkloadHistory } from "./history/workload-history.js";
import { Metrics } from "./observability/metrics.js";
import { Scheduler } from "./scheduler/scheduler.js";
import { ensureAdminToken } from "./server/admin-token.js";
import { clientHandler } from "./server/client-api.js";

export const PAIR_VERSION = "0.1.0";

export interface NodeOptions {
  readonly config: PairConfig;
  /** Listen on this port instead of the configured one (0: any free port). */
  readonly portOverride?: number;
  readonly dispatcher?: Dispatcher;
  readonly log?: (line: string) => void;
  /** Largest request body accepted. */
  readonly maxBodyBytes?: number;
  /** Requests waiting for a slot, and how long each may wait. */
  readonly maxQueued?: number;
  readonly maxQueueWaitMs?: number;
  /** Extra fields for the status route (the config file path, …). */
  readonly statusExtras?: Record<string, unknown>;
}

export interface RunningNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly inventory: EngineInventory;
  readonly history: WorkloadHistory;
  /** Stop accepting, wait up to `graceMs` for requests in flight, then end the rest. */
  close(graceMs?: number): Promise<void>;
}

export class ListenError extends Error {
  override readonly name = "ListenError";
  constructor(
    readonly code: "port_in_use" | "listen_failed" | "auth_required",
    message: string,
  ) {
    super(message);
  }
}

export async function startNode(options: NodeOptions): Promise<RunningNode> {
  const { config } = options;
  // Listening beyond loopback requires authentication; API keys are not implemented yet, so refuse.
  if (!isLoopbackHost(config.node.listen.host))
    throw new ListenError(
      "auth_required",
      `node.listen ${config.node.listen.host}: listening beyond loopback needs API keys, which this version of PAIR ` +
        "does not check yet; listen on 127.0.0.1 (the default) and reach other machines through paired nodes",
    );
  const log = options.log ?? (() => undefined);
  const dataDir = config.node.dataDir;
  const adminToken = ensureAdminToken(dataDir);
  const sockets = new Set<Socket>();
  // Bind first: a second node on the same port fails here, before it touches the data dir's history.
  let handler: RequestListener = (_req, res) => {
    res.writeHead(503, { "retry-after": "1", "content-type": "text/plain" });
    res.end("PAIR is starting\n");
  };
  const server: Server = createServer((req, res) => handler(req, res));
  const client = () =>
    clientHandler({
      nodeName: config.node.name,
      inventory,
      scheduler,
      dispatcher,
      nowMs: () => Date.now(),
      monoMs: () => performance.now(),
      history,
      metrics,
      adminToken,
      maxBodyBytes: options.maxBodyBytes ?? 16 * 1024 * 1024,
      version: PAIR_VERSION,
      statusExtras: () => ({
        listen: `${config.node.listen.host}:${(server.address() as AddressInfo).port}`,
        data_dir: dataDir,
        ...options.statusExtras,
      }),
    });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 30_000;
  server.requestTimeout = 0; // streams may last long; the scheduler and first-byte timeouts bound the rest
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const host = config.node.listen.host;
  const port = options.portOverride ?? config.node.listen.port;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      reject(
        e.code === "EADDRINUSE"
          ? new ListenError(
              "port_in_use",
              `${host}:${port} is already in use — most often by Ollama itself. Move Ollama to another port ` +
                `(OLLAMA_HOST=127.0.0.1:11435 ollama serve) and PAIR adopts it there, or set node.listen.`,
            )
          : new ListenError("listen_failed", `cannot listen on ${host}:${port}: ${e.message}`),
      );
    });
    server.listen(port, host, () => resolve());
  });
  const dispatcher =
    options.dispatcher ??
    new Agent({ keepAliveTimeout: 10_000, connections: 256, connect: { timeout: 5_000 } });
  const metrics = new Metrics();
  const history = new WorkloadHistory({
    path: join(dataDir, "history.db"),
    maxRows: config.node.history.maxRows,
    maxDays: config.node.history.maxAgeMs / 86_400_000,
    nowMs: () => Date.now(),
  });
  const inventory = new EngineInventory({
    engines: config.engines,
    dispatcher,
    nowMs: () => Date.now(),
    onChange: (engines) => {
      for (const e of engines)
        log(
          `engine ${e.spec.name}: ${e.healthy ? `up, ${e.models.length} model(s)` : `down (${e.lastError ?? "?"})`}`,
        );
    },
  });
  const scheduler = new Scheduler({
    maxQueued: options.maxQueued ?? 256,
    maxQueueWaitMs: options.maxQueueWaitMs ?? 30_000,
    nowMs: () => performance.now(),
    setTimer: (fn, ms) => {
      const t = setTimeout(fn, ms);
      return { cancel: () => clearTimeout(t) };
    },
  });
  for (const e of config.engines) {
    metrics.gauge("pair_engine_in_flight", "Requests in flight per engine.", { engine: e.name }, () =>
      scheduler.inFlight(e.name),
    );
    metrics.gauge("pair_engine_up", "1 when the engine answered its last probe.", { engine: e.name }, () =>
      inventory.engines.find((s) => s.spec.name === e.name)?.healthy === true ? 1 : 0,
    );
  }
  metrics.gauge("pair_queue_depth", "Requests waiting for a slot.", {}, () => scheduler.queued());
  metrics.gauge("pair_workloads_running", "Workloads in flight.", {}, () => history.running().length);

  await inventory.start();
  handler = client();
  const address = () => server.address() as AddressInfo;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${address().port}`;
  log(`node ${config.node.name} listening on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    name: config.node.name,
    url,
    port: address().port,
    dataDir,
    adminToken,
    inventory,
    history,
    close: (graceMs = 10_000) =>
      (closing ??= (async () => {
        inventory.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const deadline = Date.now() + graceMs;
        while (history.running().length > 0 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 25));
        for (const s of sockets) s.destroy();
        await closed;
        history.close();
        if (options.dispatcher === undefined) await dispatcher.close();
      })()),
  };
}
