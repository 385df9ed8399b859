/**
 * The cluster stage: the cluster port (identity, pinned peers, pairing, the peer API; cluster-node/),
 * discovery, each paired peer's state and inventory (PeerMembership) and the links requests are
 * forwarded on (PeerLinks). The peer API must answer from the moment the port listens, but what it
 * answers with — this node's inventory and its client routes — is built by later stages, which hand
 * it over with `answerInventory` and `answerRoutes` (until then: an empty inventory, 503). Peers hear
 * of changes only between `announcements.open()` (the serve stage, ready) and its `close()`; on the
 * stop they hear "leaving" before the client port stops accepting, and the cluster port closes only
 * after the providers' resources are released (it answers until then).
 * Must not know: engines, rented nodes, routes.
 */

import type { ServerResponse, IncomingMessage } from "node:http";
import { realClock, type Runtime } from "@pair/cluster";
import {
  clusterDiscovery,
  PeerLinks,
  PeerMembership,
  startClusterNode,
  type ClusterDiscoveryOptions,
  type ClusterNode,
  type ClusterNodeOptions,
  type LocalInventory,
  type PeerChange,
} from "../cluster-node/index.js";
import { formatHostPort, type PairConfig } from "../config/index.js";
import type { NodeOptions } from "./node-options.js";
import type { Core } from "./core.js";
import { ListenError } from "./listen-error.js";
import type { Stage } from "./stage.js";

type PeerRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  peer: { readonly name: string },
  route: string,
) => void;

export interface ClusterStage extends Stage {
  readonly cluster: ClusterNode;
  readonly membership: PeerMembership;
  readonly links: PeerLinks;
  /** What peers are told this node serves (its own engines, never a peer's). */
  answerInventory(inventory: () => LocalInventory): void;
  /** How a peer's forwarded client request is served. */
  answerRoutes(route: PeerRoute): void;
  /** Tell the peers that this node's inventory changed (only while announcements are open). */
  announce(change: PeerChange): void;
  readonly announcements: { open(): void; close(): void };
  /** Membership's first round, in the background. */
  start(): Promise<void>;
}

const NOTHING_YET: LocalInventory = { models: [], in_flight: 0, capacity: 0 };

export async function startClusterStage(options: NodeOptions, core: Core): Promise<ClusterStage> {
  const { config } = options;
  const { log } = core;
  let inventory = (): LocalInventory => NOTHING_YET;
  let route: PeerRoute | undefined;
  // Made right after the port listens (it needs the identity); a notice before then has no peer to mark.
  const late: { membership?: PeerMembership } = {};
  const discovery = clusterDiscovery(
    { mdns: config.node.discovery.mdns, peers: config.node.peers },
    options.seams?.discovery,
    () => void late.membership?.refresh(),
  );
  // Real seconds for what a person or a peer checks (PINs, certificates); the node's timers.
  const runtime = { clock: realClock(core.runtime), timers: core.runtime.timers };
  const cluster = await startCluster(config, options.overrides?.clusterPort, { log, runtime }, discovery, {
    inventory: () => inventory(),
    route: (req, res, peer, path) => {
      if (route !== undefined) return route(req, res, peer, path);
      req.resume();
      res.writeHead(503, { "retry-after": "1", "content-type": "text/plain" });
      res.end("PAIR is starting\n");
    },
    changed: (peer, change) => {
      if (change === "leaving") late.membership?.markDown(peer.nodeId, "it said it is shutting down");
      else void late.membership?.poke(peer.nodeId);
    },
    // A node just paired (either side) is asked for its inventory at once.
    onPeersChanged: () => void late.membership?.refresh(),
  });
  const members = new PeerMembership({
    identity: cluster.identity,
    peers: cluster.peers,
    log,
    ...options.overrides?.membership,
  });
  late.membership = members;
  const links = new PeerLinks({
    identity: cluster.identity,
    peers: cluster.peers,
    membership: members,
    log,
    ...(options.overrides?.peerFirstByteTimeoutMs === undefined
      ? {}
      : { firstByteTimeoutMs: options.overrides?.peerFirstByteTimeoutMs }),
  });
  let announcing = false;
  // A start that failed before serving has nothing to take back from the peers.
  let announced = false;
  return {
    name: "cluster",
    cluster,
    membership: members,
    links,
    answerInventory: (next) => {
      inventory = next;
    },
    answerRoutes: (next) => {
      route = next;
    },
    announce: (change) => {
      if (announcing) void links.notify(change);
    },
    announcements: {
      open: () => {
        announcing = true;
        announced = true;
      },
      close: () => {
        announcing = false;
      },
    },
    // In the background: a peer that does not answer must not hold up the start.
    start: () => {
      void members.start();
      return Promise.resolve();
    },
    quiesce: async () => {
      announcing = false;
      // Peers stop sending work here now, not at their next poll.
      if (announced) await links.notify("leaving");
      await members.stop();
    },
    close: async () => {
      await links.close();
      await cluster.close();
    },
  };
}

/** The cluster side (cluster-node/) on `cluster_listen`, its listen errors told as ListenError. */
async function startCluster(
  config: PairConfig,
  portOverride: number | undefined,
  { log, runtime }: { log: (line: string) => void; runtime: Runtime },
  discovery: ClusterDiscoveryOptions | undefined,
  peerApi: Pick<ClusterNodeOptions, "inventory" | "route" | "changed" | "onPeersChanged">,
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
      runtime,
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
        { cause: error },
      );
    if (code === "EADDRNOTAVAIL" || code === "EACCES")
      throw new ListenError("listen_failed", `cannot listen on ${shown}: ${(error as Error).message}`, {
        cause: error,
      });
    throw error;
  }
}
