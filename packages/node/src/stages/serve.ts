/**
 * The serve stage, built last: the client API, the admin API and the dashboard on the client port,
 * the peer routes on the cluster port (server/client-api.ts, over everything the stages before it
 * made), the dashboard's live events, the metrics of the whole process and its rented nodes and
 * peers, and the timers of a node in service. Once built the node is ready: both ports route, and
 * peers hear at once that it is (back) up and what it serves. Its quiesce is the first step of a stop.
 * Must not know: how any upstream is reached or started.
 */

import { realClock } from "@pair/cluster";
import { authenticateClient } from "../auth/index.js";
import { formatHostPort } from "../config/index.js";
import { workloadJson } from "../history/workload-history.js";
import { startIdleCollector } from "../memory/index.js";
import type { NodeOptions } from "./node-options.js";
import { registerClusterMetrics } from "../observability/cluster-metrics.js";
import { registerProcessMetrics } from "../observability/process-metrics.js";
import { mergedNodes } from "../server/admin-routes.js";
import { BatchRental, BatchRunner, BatchStore, DEFAULT_BATCH_LINES } from "../batch/index.js";
import { recordBatchEvent, rentalHooks, withoutRetired } from "./batch-rental-wiring.js";
import { inProcessLines } from "../server/batch-lines.js";
import { clientHandler, peerRouteHandler, type ClientApiDeps } from "../server/client-api.js";
import { ModelAliases } from "../server/model-aliases.js";
import { DEFAULT_UI_DIR, LiveEvents, sessionCookieName } from "../ui/index.js";
import type { ClusterStage } from "./cluster.js";
import { PAIR_VERSION, type Core } from "./core.js";
import type { LocalStage } from "./local.js";
import type { SponsorStage } from "./sponsor.js";
import type { Stage } from "./stage.js";

export interface Built {
  readonly core: Core;
  readonly cluster: ClusterStage;
  readonly local: LocalStage;
  readonly sponsor: SponsorStage;
}

export function serveStage(options: NodeOptions, built: Built): Stage {
  const { core, cluster, sponsor } = built;
  const { config, log } = core;
  // Registered here, after the local gauges, so /metrics lists them in the order it always has.
  const stopProcessMetrics = registerProcessMetrics(core.metrics, PAIR_VERSION);
  registerClusterMetrics(core.metrics, {
    rented: () => sponsor.rented.list(),
    peers: () => cluster.membership.members(),
  });
  // The events read the routes' deps, made just below from the events themselves.
  const late: { deps?: ClientApiDeps } = {};
  const events = liveEvents(built, () => late.deps!);
  const batchStore = new BatchStore(core.dataDir);
  // A node its batch stopped for good leaves client routing and batch lines alike.
  const base = withoutRetired(clientDeps(options, built, events), () => batchStore.rentals.retiredNodes());
  const batches = batchWork(options, built, base, batchStore);
  const deps: ClientApiDeps = (late.deps = { ...base, batches: batches.deps });
  core.serve(clientHandler(deps));
  cluster.answerRoutes(peerRouteHandler(deps));
  // Peers learn at once that this node is (back) up and what it serves; then on every change.
  cluster.announcements.open();
  cluster.announce("changed");
  const inService = serviceTimers(options, built, events);
  batches.start();
  log(`node ${config.node.name} listening on ${core.url}`);
  if (core.beyondLoopback)
    log(
      `callers from other machines need an API key (${core.apiKeys.activeIds().length} active; ` +
        "`pair apikey list`); callers on this machine do not",
    );
  return {
    name: "serve",
    quiesce: async () => {
      await batches.stop();
      cluster.announcements.close();
      inService.cancel();
      stopProcessMetrics();
      events.close();
    },
    release: () => batches.close(),
  };
}

/** The dashboard's live events: nodes, running work and rented nodes, looked at on each check. */
function liveEvents(built: Built, deps: () => ClientApiDeps): LiveEvents {
  const { core, local, sponsor } = built;
  return new LiveEvents({
    sources: {
      nodes: () => mergedNodes(deps()),
      // Running work, and the last one to finish: a request shorter than a look still shows up.
      jobs: () => ({
        running: local.history.running().map(workloadJson),
        // From memory: reading the newest row would flush the history and wait for its writer.
        finished: local.history.lastFinishedId(),
      }),
      rented: () => sponsor.rented.list(),
    },
    // These move on every look without anything new to show.
    ignoredKeys: ["last_seen", "first_byte_ms", "elapsed_s"],
    timers: core.runtime.timers,
  });
}

/** The timers of a node in service: the live check (rented nodes, dashboard events) and the idle collector. */
function serviceTimers(options: NodeOptions, built: Built, events: LiveEvents): { cancel(): void } {
  const { core, sponsor } = built;
  const { timers } = core.runtime;
  const liveCheck = timers.every(() => {
    sponsor.observe();
    events.check();
  }, options.overrides?.liveCheckMs ?? 500);
  const idleCollector =
    options.tuning?.idleCollect === false
      ? undefined
      : startIdleCollector({
          timers,
          clock: core.runtime.clock,
          ...(options.tuning?.idleCollect === undefined ? {} : { policy: options.tuning?.idleCollect }),
        });
  return {
    cancel: () => {
      liveCheck.cancel();
      idleCollector?.cancel();
    },
  };
}

interface BatchWork {
  /** What the batch routes read. */
  readonly deps: NonNullable<ClientApiDeps["batches"]>;
  start(): void;
  /** Lines in flight go back to wait for the next start (never counted as done or failed). */
  stop(): Promise<void>;
  close(): void;
}

/** Batches: their lines are routed requests of this node, run in process (server/batch-lines.ts). */
function batchWork(
  options: NodeOptions,
  built: Built,
  base: ClientApiDeps,
  batchStore: BatchStore,
): BatchWork {
  const { core, local, sponsor } = built;
  const { log } = core;
  const { timers } = core.runtime;
  const lines = inProcessLines(base);
  const record = recordBatchEvent(sponsor.stateHistory);
  const linesAtOnce = options.overrides?.batchLines ?? DEFAULT_BATCH_LINES;
  const rental = new BatchRental({
    store: batchStore,
    hooks: rentalHooks({
      creator: sponsor.creator,
      rented: sponsor.rented,
      history: local.history,
      stateHistory: sponsor.stateHistory,
      routes: base,
      onChange: () => base.onPeerVisibleChange?.(),
    }),
    wallMs: core.wallMs,
    timers,
    record,
    linesAtOnce,
    log,
    onCapacityGone: (id) => runner.rerunWaiting(id),
  });
  const runner = new BatchRunner({
    store: batchStore,
    runLine: lines.runLine,
    wallMs: core.wallMs,
    timers,
    ...(options.overrides?.batchLines === undefined
      ? {}
      : { maxConcurrentLines: options.overrides?.batchLines }),
    waitsForCapacity: (id) => rental.starting(id),
    log,
    onEnded: (b, final, counts) => {
      record(b.id, final, `${counts.completed} answered, ${counts.failed} in the error file`, core.wallMs());
      // A rental stops the moment its batch ends, not at the next pass.
      void rental.pass();
    },
  });
  return {
    deps: {
      store: batchStore,
      runner,
      wallMs: core.wallMs,
      maxFileBytes: options.overrides?.batchMaxFileBytes ?? 100 * 1024 * 1024,
      ...(options.overrides?.bodyIdleTimeoutMs === undefined
        ? {}
        : { bodyIdleTimeoutMs: options.overrides?.bodyIdleTimeoutMs }),
      lifecycle: {
        record,
        events: (id) => sponsor.stateHistory.list(id),
        canRent: true,
        wake: () => void rental.pass(),
      },
    },
    start: () => {
      runner.start();
      rental.start();
    },
    stop: async () => {
      await rental.stop();
      await runner.stop();
      lines.close();
    },
    close: () => batchStore.close(),
  };
}

/** What the routes read: every stage's parts, by the names server/ knows them. */
function clientDeps(options: NodeOptions, built: Built, events: LiveEvents): ClientApiDeps {
  const { core, cluster: clusterStage, local, sponsor } = built;
  const { config } = core;
  const { cluster } = clusterStage;
  const { rented } = sponsor;
  return {
    nodeName: config.node.name,
    aliases: new ModelAliases(config.modelAliases),
    inventory: local.inventory,
    scheduler: local.scheduler,
    dispatcher: core.dispatcher,
    clock: core.runtime.clock,
    timers: core.runtime.timers,
    history: local.history,
    metrics: core.metrics,
    adminToken: core.adminToken,
    maxBodyBytes: options.overrides?.maxBodyBytes ?? 16 * 1024 * 1024,
    ...(options.overrides?.bodyIdleTimeoutMs === undefined
      ? {}
      : { bodyIdleTimeoutMs: options.overrides?.bodyIdleTimeoutMs }),
    version: PAIR_VERSION,
    cluster,
    membership: clusterStage.membership,
    peers: clusterStage.links,
    rented: {
      dispatcher: sponsor.outbound,
      serving: (model, caller) => rented.serving(model, caller),
      link: (name) => rented.link(name),
      markDown: (name, why) => rented.markDown(name, why),
      credentialRejected: (name, status) => rented.credentialRejected(name, status),
      costMicroUsd: (name, model, use) => rented.costMicroUsd(name, model, use),
    },
    rentedNodes: rented,
    redactor: core.redactor,
    maxUpstreamBodyBytes: options.overrides?.maxUpstreamBodyBytes ?? config.node.maxUpstreamBodyBytes,
    log: core.log,
    rentedCreator: sponsor.creator,
    rentedStateHistory: sponsor.stateHistory,
    rentedLedger: sponsor.ledger,
    events,
    onPeerVisibleChange: () => {
      clusterStage.announce("changed");
      sponsor.observe();
    },
    authenticate: (req) =>
      authenticateClient(core.apiKeys, core.loopback, {
        remoteAddress: req.socket.remoteAddress,
        authorization: req.headers.authorization,
      }),
    ui: {
      nodeName: config.node.name,
      sessions: core.uiSessions,
      cookieName: sessionCookieName(cluster.identity.nodeId),
      uiDir: options.seams?.uiDir ?? DEFAULT_UI_DIR,
      clock: realClock(core.runtime),
    },
    statusExtras: () => ({
      listen: `${config.node.listen.host}:${core.port}`,
      data_dir: core.dataDir,
      node_id: cluster.identity.nodeId,
      cluster_listen: formatHostPort({ host: cluster.host, port: cluster.port }),
      peers: cluster.pairedPeers(),
      ...options.seams?.statusExtras,
    }),
  };
}
