/**
 * One PAIR node, assembled: engines inventory, scheduler, workload history, metrics, API keys and
 * the client port. `startNode` listens and probes; `close` stops accepting, lets streams in flight
 * finish within a bound, then ends what is left. A `listen` beyond loopback needs an active API key.
 * The rented nodes are built in rented-wiring.ts; this file starts, routes through and closes them.
 * Must not know: command-line parsing, where the config came from.
 */

import { randomBytes } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { ApiKeyVerifier, authenticateClient, SOCKET_LOOPBACK_POLICY } from "./auth/index.js";
import type { AuthenticatedPeer } from "./cluster/index.js";
import {
  PeerLinks,
  clusterDiscovery,
  PeerMembership,
  startClusterNode,
  type ClusterDiscoveryOptions,
  type ClusterNode,
  type ClusterNodeOptions,
  type LocalInventory,
  type PeerChange,
} from "./cluster-node/index.js";
import { formatHostPort, type PairConfig } from "./config/index.js";
import { frontDoorPolicy } from "./http/front-door-policy.js";
import { behindFrontDoor, frontDoor } from "./http/front-door.js";
import { EngineInventory } from "./engines/engine-inventory.js";
import { CodedError } from "./errors/coded-error.js";
import { WorkloadHistory } from "./history/workload-history.js";
import { startIdleCollector } from "./memory/index.js";
import { registerClusterMetrics } from "./observability/cluster-metrics.js";
import { Metrics } from "./observability/metrics.js";
import { registerProcessMetrics } from "./observability/process-metrics.js";
import { OsCredentialStore, SecretRedactor } from "./credentials/index.js";
import {
  createOutboundAgent,
  observedState,
  RentedStateHistory,
  type CredentialReader,
  type JobNodes,
  type ManagedEndpoints,
  type RunpodPodNodes,
} from "./rented/index.js";
import type { NodeOptions } from "./node-options.js";
import { wireRentedNodes } from "./rented-wiring.js";
import { Scheduler } from "./scheduler/scheduler.js";
import { ensureAdminToken } from "./auth/admin-token.js";
import { ensurePrivateDataDir } from "./files/data-dir.js";
import { ModelAliases } from "./server/model-aliases.js";
import { mergedNodes } from "./server/admin-routes.js";
import { clientHandler, peerRouteHandler, type ClientApiDeps } from "./server/client-api.js";
import { workloadJson } from "./history/workload-history.js";
import { DEFAULT_UI_DIR, LiveEvents, sessionCookieName, SYSTEM_INTERVALS, UiSessions } from "./ui/index.js";

export const PAIR_VERSION = "0.1.0";

export type { NodeOptions } from "./node-options.js";

/** Default longest time a client may take to send a request's headers. */
export const CLIENT_HEADERS_TIMEOUT_MS = 30_000;

/** Default most connections open at once on the client port (Node's is unlimited). */
export const CLIENT_MAX_CONNECTIONS = 1_024;

/** Longest the start waits for the managed rented nodes' first pass before it serves anyway. */
export const MANAGED_FIRST_PASS_WAIT_MS = 5_000;

/** Resolves when `work` settles or after `ms`, whichever comes first (`onLate` then); never rejects. */
async function waitAtMost(work: Promise<unknown>, ms: number, onLate: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
    timer.unref();
  });
  const first = await Promise.race([work.then(() => "done" as const), late]);
  clearTimeout(timer);
  if (first === "late") onLate();
}

export interface RunningNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly inventory: EngineInventory;
  readonly history: WorkloadHistory;
  /** Identity, pinned peers, pairing and the cluster port (`cluster.port`). */
  readonly cluster: ClusterNode;
  /** The paired peers' state and inventories, kept fresh. */
  readonly membership: PeerMembership;
  /** Dashboard sign-in codes and sessions (in memory; `pair ui` asks for a code over the admin API). */
  readonly uiSessions: UiSessions;
  /** Managed Hugging Face endpoints (adoption, wake, idle and budget pauses, pause on exit). */
  readonly managed: ManagedEndpoints;
  /** Managed Runpod pods (made on demand; idle, budget and exit terminations). */
  readonly runpod: RunpodPodNodes;
  /** Managed Hugging Face Jobs (run on demand for a batch window; window, idle, budget and exit cancels). */
  readonly jobs: JobNodes;
  /** Stop accepting, wait up to `graceMs` for requests in flight, then end the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Stable codes of a refused start. Scripts and tests match on these; add freely, never rename. */
export const LISTEN_ERROR_CODES = ["port_in_use", "listen_failed", "auth_required"] as const;

export class ListenError extends CodedError<(typeof LISTEN_ERROR_CODES)[number]> {
  override readonly name = "ListenError";
  constructor(code: (typeof LISTEN_ERROR_CODES)[number], message: string, options?: { cause?: unknown }) {
    // A port taken or an address refused stays so until someone frees or changes it.
    super(code, message, { cause: options?.cause, retryable: false });
  }
}

export async function startNode(options: NodeOptions): Promise<RunningNode> {
  const { config } = options;
  // Every secret the node reads or sends is known here, and scrubbed from what leaves the process.
  const redactor = new SecretRedactor();
  const rawLog = options.log;
  const log = rawLog === undefined ? () => undefined : (line: string) => rawLog(redactor.redact(line));
  const dataDir = config.node.dataDir;
  const loopback = options.loopback ?? SOCKET_LOOPBACK_POLICY;
  ensurePrivateDataDir(dataDir);
  // Reads <data_dir>/api-keys.json (throws ApiKeyError if it is unreadable or others may write it).
  const apiKeys = new ApiKeyVerifier({
    dataDir,
    onError: (error) => log(`API keys: ${error.message} — no API key is accepted until this is fixed`),
  });
  const beyondLoopback = !loopback.isLoopbackHost(config.node.listen.host);
  if (beyondLoopback && apiKeys.activeIds().length === 0)
    throw new ListenError(
      "auth_required",
      `node.listen ${config.node.listen.host}: auth_required: this address is beyond loopback, so callers ` +
        `from other machines must send an API key, and ${dataDir} holds no active one: create one with ` +
        "`pair apikey create ID` (with the same --config), or listen on 127.0.0.1",
    );
  if (config.node.apiKeys.length > 0)
    log(
      "node.api_keys in the config is not used: API keys live hashed in the data dir " +
        "(`pair apikey create ID`, `pair apikey list`)",
    );
  const adminToken = ensureAdminToken(dataDir);
  redactor.add(adminToken);
  const uiSessions = new UiSessions({ nowMs: () => Date.now(), randomBytes: (n) => randomBytes(n) });
  const sockets = new Set<Socket>();
  // Bind first: a second node on the same port fails here, before it touches the data dir's history.
  let handler: RequestListener = (_req, res) => {
    res.writeHead(503, { "retry-after": "1", "content-type": "text/plain" });
    res.end("PAIR is starting\n");
  };
  const headersTimeoutMs = options.headersTimeoutMs ?? CLIENT_HEADERS_TIMEOUT_MS;
  const door = frontDoorPolicy({
    node: config.node,
    listenIsLoopback: !beyondLoopback,
    hostName: options.hostName ?? hostname(),
    env: options.env ?? process.env,
    log,
  });
  let countRefusal: (code: string) => void = () => undefined;
  const server: Server = createServer(
    // How often Node looks for connections over the headers bound (its default, 30 s, doubled it).
    { connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs) },
    behindFrontDoor(
      frontDoor(door),
      (address) => loopback.isLoopbackPeer(address),
      (req, res) => handler(req, res),
      (code) => countRefusal(code),
    ),
  );
  const aliases = new ModelAliases(config.modelAliases);
  const clientDeps = (): ClientApiDeps => ({
    nodeName: config.node.name,
    aliases,
    inventory,
    scheduler,
    dispatcher,
    nowMs: () => Date.now(),
    monoMs: () => performance.now(),
    history,
    metrics,
    adminToken,
    maxBodyBytes: options.maxBodyBytes ?? 16 * 1024 * 1024,
    ...(options.bodyIdleTimeoutMs === undefined ? {} : { bodyIdleTimeoutMs: options.bodyIdleTimeoutMs }),
    version: PAIR_VERSION,
    cluster,
    membership,
    peers: links,
    rented: {
      dispatcher: outbound,
      serving: (model, caller) => rented.serving(model, caller),
      link: (name) => rented.link(name),
      markDown: (name, why) => rented.markDown(name, why),
      credentialRejected: (name, status) => rented.credentialRejected(name, status),
      costMicroUsd: (name, model, use) => rented.costMicroUsd(name, model, use),
    },
    rentedNodes: rented,
    redactor,
    maxUpstreamBodyBytes: options.maxUpstreamBodyBytes ?? config.node.maxUpstreamBodyBytes,
    rentedCreator: creator,
    rentedStateHistory: stateHistory,
    events,
    onPeerVisibleChange: () => {
      local.notify?.("changed");
      observeRented();
    },
    authenticate: (req) =>
      authenticateClient(apiKeys, loopback, {
        remoteAddress: req.socket.remoteAddress,
        authorization: req.headers.authorization,
      }),
    ui: {
      nodeName: config.node.name,
      sessions: uiSessions,
      cookieName: sessionCookieName(cluster.identity.nodeId),
      uiDir: options.uiDir ?? DEFAULT_UI_DIR,
      nowMs: () => Date.now(),
    },
    statusExtras: () => ({
      listen: `${config.node.listen.host}:${(server.address() as AddressInfo).port}`,
      data_dir: dataDir,
      node_id: cluster.identity.nodeId,
      cluster_listen: formatHostPort({ host: cluster.host, port: cluster.port }),
      peers: cluster.pairedPeers(),
      ...options.statusExtras,
    }),
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = 0; // streams may last long; the scheduler and first-byte timeouts bound the rest
  // A flood of idle connections stops at this many; Node closes the next ones on arrival.
  server.maxConnections = options.maxConnections ?? CLIENT_MAX_CONNECTIONS;
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
  // The peer routes read the engines, scheduler and client API made below (never before they exist):
  // until then a peer sees an empty inventory and its forwarded requests get 503.
  const local: {
    inventory?: () => LocalInventory;
    route?: ReturnType<typeof peerRouteHandler>;
    changed?: (peer: AuthenticatedPeer, change: PeerChange) => void;
    notify?: ((change: PeerChange) => void) | undefined;
    membership?: PeerMembership;
  } = {};
  const discovery = clusterDiscovery(
    { mdns: config.node.discovery.mdns, peers: config.node.peers },
    options.discovery,
    () => void local.membership?.refresh(),
  );
  const cluster = await startCluster(
    config,
    options.clusterPortOverride,
    log,
    {
      inventory: () =>
        local.inventory === undefined ? { models: [], in_flight: 0, capacity: 0 } : local.inventory(),
      route: (req, res, peer, route) => {
        if (local.route !== undefined) return local.route(req, res, peer, route);
        req.resume();
        res.writeHead(503, { "retry-after": "1", "content-type": "text/plain" });
        res.end("PAIR is starting\n");
      },
      changed: (peer, change) => local.changed?.(peer, change),
      // A node just paired (either side) is asked for its inventory at once.
      onPeersChanged: () => void local.membership?.refresh(),
    },
    discovery,
  ).catch((error: unknown) => {
    server.close();
    throw error;
  });
  const dispatcher =
    options.dispatcher ??
    new Agent({ keepAliveTimeout: 10_000, connections: 256, connect: { timeout: 5_000 } });
  const metrics = new Metrics();
  countRefusal = (code) =>
    metrics.inc("pair_front_door_refusals_total", "Requests refused by Host or Origin before any route.", {
      code,
    });
  const history = new WorkloadHistory({
    path: join(dataDir, "history.db"),
    maxRows: config.node.history.maxRows,
    maxDays: config.node.history.maxAgeMs / 86_400_000,
    nowMs: () => Date.now(),
    ...(options.historyOnThread === undefined ? {} : { writeOnThread: options.historyOnThread }),
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
      local.notify?.("changed");
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
  const outbound = createOutboundAgent({ extraCaFile: config.tls.extraCaFile });
  const credentials = registeringReader(options.credentials ?? new OsCredentialStore(), redactor);
  const { ledger, managed, runpod, jobs, rented, creator } = wireRentedNodes({
    config,
    nodeId: cluster.identity.nodeId,
    credentials,
    outbound,
    scheduler,
    log,
    redact: (text) => redactor.redact(text),
    managed: options.managed,
    runpodProxyUrl: options.runpodProxyUrl,
    rentedProbeIntervalMs: options.rentedProbeIntervalMs,
    onCreatorChange: () => local.notify?.("changed"),
  });
  local.inventory = () => ({ ...localInventory(inventory, scheduler), rented: rented.peerViews() });
  const membership = new PeerMembership({
    identity: cluster.identity,
    peers: cluster.peers,
    log,
    ...options.membership,
  });
  const links = new PeerLinks({
    identity: cluster.identity,
    peers: cluster.peers,
    membership,
    log,
    ...(options.peerFirstByteTimeoutMs === undefined
      ? {}
      : { firstByteTimeoutMs: options.peerFirstByteTimeoutMs }),
  });
  local.changed = (peer, change) => {
    if (change === "leaving") membership.markDown(peer.nodeId, "it said it is shutting down");
    else void membership.poke(peer.nodeId);
  };
  local.membership = membership;
  metrics.gauge("pair_queue_depth", "Requests waiting for a slot.", {}, () => scheduler.queued());
  metrics.gauge("pair_workloads_running", "Workloads in flight.", {}, () => history.running().length);
  const stopProcessMetrics = registerProcessMetrics(metrics, PAIR_VERSION);
  registerClusterMetrics(metrics, { rented: () => rented.list(), peers: () => membership.members() });

  // The managed nodes' first pass asks their providers (list, price, stops due: an orphan's cancel, a
  // window's end). A provider call that hangs must not keep the node from serving: wait for it at
  // most MANAGED_FIRST_PASS_WAIT_MS; the pass goes on in the background (its stops are in SQLite first).
  const firstPassWaitMs = options.managedFirstPassWaitMs ?? MANAGED_FIRST_PASS_WAIT_MS;
  const managedStarts = Promise.all([
    managed.start().catch((cause: unknown) => log(`managed rented nodes: ${String(cause)}`)),
    runpod.start().catch((cause: unknown) => log(`Runpod rented nodes: ${String(cause)}`)),
    jobs.start().catch((cause: unknown) => log(`Hugging Face Jobs rented nodes: ${String(cause)}`)),
  ]);
  await Promise.all([
    inventory.start(),
    rented.start(),
    waitAtMost(managedStarts, firstPassWaitMs, () =>
      log(
        `managed rented nodes: their first pass still waits for a provider after ` +
          `${firstPassWaitMs / 1000} s; serving meanwhile (it goes on in the background)`,
      ),
    ),
  ]);
  // Routing learns at once which managed pods exist (their state needs no probe).
  await rented.probe();
  // In the background: a peer that does not answer must not hold up the start.
  void membership.start();
  const stateHistory = new RentedStateHistory({ dataDir, log });
  const observeRented = () => {
    try {
      stateHistory.observe(rented.list().map(observedState), Date.now());
    } catch (cause) {
      log(`rented nodes' state history: ${String(cause)}`);
    }
  };
  observeRented();
  const intervals = options.intervals ?? SYSTEM_INTERVALS;
  const events = new LiveEvents({
    sources: {
      nodes: () => mergedNodes(deps),
      // Running work, and the last one to finish: a request shorter than a look still shows up.
      jobs: () => ({
        running: history.running().map(workloadJson),
        // From memory: reading the newest row would flush the history and wait for its writer.
        finished: history.lastFinishedId(),
      }),
      rented: () => rented.list(),
    },
    // These move on every look without anything new to show.
    ignoredKeys: ["last_seen", "first_byte_ms", "elapsed_s"],
    intervals,
  });
  const deps = clientDeps();
  handler = clientHandler(deps);
  local.route = peerRouteHandler(deps);
  // Peers learn at once that this node is (back) up and what it serves; then on every change.
  local.notify = (change) => void links.notify(change);
  local.notify("changed");
  const liveCheck = intervals.every(() => {
    observeRented();
    events.check();
  }, options.liveCheckMs ?? 500);
  const idleCollector =
    options.idleCollect === false
      ? undefined
      : startIdleCollector({
          intervals,
          nowMs: () => performance.now(),
          ...(options.idleCollect === undefined ? {} : { policy: options.idleCollect }),
        });
  const address = () => server.address() as AddressInfo;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${address().port}`;
  log(`node ${config.node.name} listening on ${url}`);
  if (beyondLoopback)
    log(
      `callers from other machines need an API key (${apiKeys.activeIds().length} active; ` +
        "`pair apikey list`); callers on this machine do not",
    );

  let closing: Promise<void> | undefined;
  return {
    name: config.node.name,
    url,
    port: address().port,
    dataDir,
    adminToken,
    inventory,
    history,
    cluster,
    membership,
    uiSessions,
    managed,
    runpod,
    jobs,
    close: (graceMs = 10_000) =>
      (closing ??= (async () => {
        local.notify = undefined;
        liveCheck.cancel();
        idleCollector?.cancel();
        stopProcessMetrics();
        events.close();
        inventory.stop();
        rented.stop();
        creator.close();
        // Peers stop sending work here now, not at their next poll.
        await links.notify("leaving");
        await membership.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const deadline = Date.now() + graceMs;
        while (history.running().length > 0 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 25));
        for (const s of sockets) s.destroy();
        // Pause every managed endpoint (bounded by exit_timeout_s); the unconfirmed stay open in SQLite.
        // Terminate every Runpod pod (bounded by exit_timeout_s); the unconfirmed stay open likewise.
        // Cancel every Hugging Face Job (bounded by exit_timeout_s); the unconfirmed stay open likewise.
        await Promise.all([managed.close(), runpod.close(), jobs.close()]);
        ledger.close();
        await closed;
        await links.close();
        await cluster.close();
        history.close();
        if (options.dispatcher === undefined) await dispatcher.close();
        await outbound.close();
      })()),
  };
}

/** The cluster side (cluster-node/) on `cluster_listen`, its listen errors told as ListenError. */
async function startCluster(
  config: PairConfig,
  portOverride: number | undefined,
  log: (line: string) => void,
  peerApi: Pick<ClusterNodeOptions, "inventory" | "route" | "changed" | "onPeersChanged">,
  discovery: ClusterDiscoveryOptions | undefined,
): Promise<ClusterNode> {
  const { host } = config.node.clusterListen;
  const port = portOverride ?? config.node.clusterListen.port;
  const shown = `node.cluster_listen ${formatHostPort({ host, port })}`;
  try {
    return await startClusterNode({
      name: config.node.name,
      dataDir: config.node.dataDir,
      listen: { host, port },
      log,
      ...peerApi,
      ...(discovery === undefined ? {} : { discovery }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new ListenError(
        "port_in_use",
        `${shown} is already in use — is another PAIR node running on this machine? Stop it, or set ` +
          "node.cluster_listen to a free port",
      );
    if (code === "EADDRNOTAVAIL" || code === "EACCES")
      throw new ListenError("listen_failed", `cannot listen on ${shown}: ${(error as Error).message}`);
    throw error;
  }
}

/** Reads credentials through `inner`, telling the redactor each value read. */
function registeringReader(inner: CredentialReader, redactor: SecretRedactor): CredentialReader {
  return {
    get: async (ref) => {
      const secret = await inner.get(ref);
      if (secret !== undefined) redactor.add(secret.reveal());
      return secret;
    },
  };
}

/** This node's own inventory for its peers: local engines only, never a peer's models. */
function localInventory(inventory: EngineInventory, scheduler: Scheduler): LocalInventory {
  const healthy = inventory.engines.filter((e) => e.healthy);
  return {
    models: [...inventory.models()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([model, engines]) => ({ model, engines: engines.length })),
    in_flight: inventory.engines.reduce((sum, e) => sum + scheduler.inFlight(e.spec.name), 0),
    capacity: healthy.reduce((sum, e) => sum + e.spec.maxConcurrent, 0),
  };
}
