/**
 * The node's side of the cluster, wired: its identity (made at first start), the pinned peers
 * (peers.json), the PIN it shows, and the cluster port — strict mTLS for peers, plain HTTP for the
 * pairing handshake only. Pinning and revoking re-sync the peer server at once, so a node just
 * paired is accepted on its very next mTLS request and a node unpaired loses its open connections.
 * Discovery (@pair/cluster: mDNS and static peers), when asked for, starts once the port listens
 * and stops first, so its mDNS goodbye goes out while the node still answers.
 * Must not know: the client API, the CLI, the config file (it is given what it needs).
 */

import { randomBytes as nodeRandomBytes } from "node:crypto";
import { err, ok, type Result } from "@pair/provision";
import {
  createPeerServer,
  loadOrCreateIdentity,
  openPinnedPeers,
  startClusterPort,
  type ClusterPort,
  type ClusterPortLimits,
  type NodeIdentity,
  type PeerServerCore,
  type PeerServerLimits,
  type PinnedPeer,
  type PinnedPeers,
  PinIssuer,
  pinAnnouncement,
  type PinAnnouncement,
  type PinIssuerOptions,
  type PinStatus,
  type RandomBytes,
  startDiscovery,
  type ClusterDiscoveryOptions,
  type DiscoveredNode,
  type Discovery,
  type DiscoveryEvent,
  type Runtime,
} from "@pair/cluster";
import { formatHostPort, type HostPort } from "../config/index.js";
import { createPairingServer, type PairingServer, type PairingServerLimits } from "./pairing-server.js";
import { joinByPin, type JoinError } from "./pairing-join.js";
import { peerRoutes, type LocalInventory, type PeerRoutesOptions } from "./peer-routes.js";

/** A pinned peer as the admin API shows it: never a key, not even the certificate. */
export interface PeerJson {
  readonly node_id: string;
  readonly name: string;
  readonly fingerprint: string;
  readonly paired_at: string;
  readonly revoked_at?: string;
  /** Where its cluster port is reached (recorded at pairing, moved by discovery). */
  readonly address?: string;
}

export interface ClusterNodeOptions {
  readonly name: string;
  readonly dataDir: string;
  /** `cluster_listen` (port 0: any free port). */
  readonly listen: HostPort;
  /**
   * Wall time for the certificate, `paired_at`, PINs and `generated_at` (the node passes its real
   * clock: a person and a peer check these in real seconds); timers for pairing connections and discovery.
   */
  readonly runtime: Runtime;
  readonly randomBytes?: RandomBytes;
  readonly log?: (line: string) => void;
  /** PIN lifetime, attempts and hold time (defaults: 2 min, 3, 30 s). */
  readonly pins?: Omit<PinIssuerOptions, "randomBytes">;
  readonly joinTimeoutMs?: number;
  /** This node's own inventory, served to peers on `GET /pair/v1/peer/inventory`. */
  readonly inventory?: () => LocalInventory;
  /** Forwarded client requests and peers' notices (peer-routes.ts); absent: 404. */
  readonly route?: PeerRoutesOptions["route"];
  readonly changed?: PeerRoutesOptions["changed"];
  /** A peer was pinned, revoked or moved (ask the peers now rather than at the next round). */
  readonly onPeersChanged?: () => void;
  /** Find peers by mDNS and at static addresses; absent: neither. */
  readonly discovery?: ClusterDiscoveryOptions;
  readonly limits?: {
    readonly port?: Partial<ClusterPortLimits>;
    readonly peer?: Partial<PeerServerLimits>;
    readonly pairing?: Partial<PairingServerLimits>;
  };
}

export type UnpairResult =
  | { readonly ok: true; readonly peer: PeerJson; readonly alreadyRevoked: boolean }
  | { readonly ok: false; readonly code: "unknown_peer"; readonly message: string };

export interface ClusterNode {
  readonly identity: NodeIdentity;
  readonly host: string;
  readonly port: number;
  /** The trust store; pin and revoke through it and the peer server follows. */
  readonly peers: PinnedPeers;
  /** Show a new PIN (replacing any other). The caller prints it; never log it. */
  issuePin(): PinAnnouncement;
  /** Whether a PIN is shown, and how many wrong attempts it has left (never the PIN). */
  pinStatus(): PinStatus;
  /** Pair with the node whose `cluster_listen` is `address`, using the PIN it shows. */
  join(address: HostPort, pin: string): Promise<Result<PeerJson, JoinError>>;
  /** The peers trusted now. */
  pairedPeers(): PeerJson[];
  /** Stop trusting a node, named by its node id or (when unique) its name. */
  unpair(node: string): UnpairResult;
  /** Nodes seen by discovery that are not paired (empty when discovery is off). */
  discovered(): DiscoveredNode[];
  /** Discovery, when it runs. */
  readonly discovery: Discovery | undefined;
  close(): Promise<void>;
}

export function peerJson(peer: PinnedPeer): PeerJson {
  const base = {
    node_id: peer.node_id,
    name: peer.name,
    fingerprint: peer.fingerprint,
    paired_at: peer.paired_at,
    ...(peer.address === undefined ? {} : { address: peer.address }),
  };
  return peer.revoked_at === undefined ? base : { ...base, revoked_at: peer.revoked_at };
}

const defaultRandomBytes: RandomBytes = (count) => new Uint8Array(nodeRandomBytes(count));

/** Load or create the identity, open peers.json and listen on the cluster port. */
export async function startClusterNode(options: ClusterNodeOptions): Promise<ClusterNode> {
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const log = options.log ?? (() => undefined);
  const { identity, peers, peerServer } = await openTrust(options, log);
  const issuer = new PinIssuer({ randomBytes, ...options.pins });
  const pairing = pairingServer(options, { identity, peers, issuer, randomBytes, log });
  let port: ClusterPort;
  try {
    port = await startClusterPort({
      host: options.listen.host,
      port: options.listen.port,
      tls: (socket) => peerServer.accept(socket),
      plain: (socket) => pairing.accept(socket),
      ...(options.limits?.port === undefined ? {} : { limits: options.limits.port }),
    });
  } catch (error) {
    await peerServer.close();
    pairing.close();
    throw error;
  }
  log(
    `cluster port ${formatHostPort({ host: port.host, port: port.port })}: node id ${identity.nodeId}, ` +
      `${peers.active().length} paired peer(s)`,
  );
  const discovery = startNodeDiscovery(options, { identity, peers, port: port.port, log });
  const wallMs = (): number => options.runtime.clock.now().wallMs;
  let closing: Promise<void> | undefined;
  return {
    identity,
    host: port.host,
    port: port.port,
    peers,
    issuePin: () => pinAnnouncement(issuer.issue(wallMs())),
    pinStatus: () => issuer.status(wallMs()),
    async join(address, pin) {
      const joined = await joinByPin({
        identity,
        address,
        pin,
        randomBytes,
        pinPeer: (request) => peers.pin(request),
        clusterPort: port.port,
        ...(options.joinTimeoutMs === undefined ? {} : { timeoutMs: options.joinTimeoutMs }),
      });
      if (!joined.ok) return joined;
      log(`joined ${joined.value.name} (${joined.value.node_id}) at ${formatHostPort(address)}`);
      return ok(peerJson(joined.value));
    },
    pairedPeers: () => peers.active().map(peerJson),
    discovered: () => discovery?.discovered() ?? [],
    discovery,
    unpair: (node) => unpairFrom(peers, node),
    close: () =>
      (closing ??= (async () => {
        await discovery?.stop();
        pairing.close();
        await port.close();
        await peerServer.close();
      })()),
  };
}

/**
 * The identity, the pinned peers and the peer server that trusts them: a pin or a revoke re-syncs
 * the server at once (the store is opened before the server it tells, hence the late binding).
 */
async function openTrust(
  options: ClusterNodeOptions,
  log: (line: string) => void,
): Promise<{ identity: NodeIdentity; peers: PinnedPeers; peerServer: PeerServerCore }> {
  const clock = options.runtime.clock;
  const identity = await loadOrCreateIdentity(options.dataDir, { name: options.name, clock });
  const wiring: { peerServer?: PeerServerCore } = {};
  const peers = openPinnedPeers(options.dataDir, {
    clock,
    onChange: (change) => {
      wiring.peerServer?.syncPins();
      log(`peer ${change.peer.name} (${change.peer.node_id}): ${change.kind}`);
      options.onPeersChanged?.();
    },
  });
  const peerServer = createPeerServer({
    identity,
    peers,
    handler: peerRoutes({
      nodeId: identity.nodeId,
      name: identity.name,
      clock,
      ...(options.inventory === undefined ? {} : { inventory: options.inventory }),
      ...(options.route === undefined ? {} : { route: options.route }),
      ...(options.changed === undefined ? {} : { changed: options.changed }),
    }),
    ...(options.limits?.peer === undefined ? {} : { limits: options.limits.peer }),
  });
  wiring.peerServer = peerServer;
  return { identity, peers, peerServer };
}

/** The plain-HTTP side of the cluster port: the PIN handshake, which pins the initiator on success. */
function pairingServer(
  options: ClusterNodeOptions,
  parts: {
    identity: NodeIdentity;
    peers: PinnedPeers;
    issuer: PinIssuer;
    randomBytes: RandomBytes;
    log: (line: string) => void;
  },
): PairingServer {
  const { identity, peers, log } = parts;
  return createPairingServer({
    self: { nodeId: identity.nodeId, name: identity.name, fingerprint: identity.fingerprint },
    certPem: identity.certPem,
    issuer: parts.issuer,
    pinPeer: (request) => peers.pin(request),
    runtime: options.runtime,
    randomBytes: parts.randomBytes,
    onEvent: (event) =>
      log(
        event.type === "PairedByPin"
          ? `paired by PIN with ${event.name} (${event.nodeId})`
          : `pairing refused: ${event.code}`,
      ),
    ...(options.limits?.pairing === undefined ? {} : { limits: options.limits.pairing }),
  });
}

/** Discovery on the bound port, when asked for; its events go to the log and to the caller. */
function startNodeDiscovery(
  options: ClusterNodeOptions,
  parts: { identity: NodeIdentity; peers: PinnedPeers; port: number; log: (line: string) => void },
): Discovery | undefined {
  const asked = options.discovery;
  if (asked === undefined) return undefined;
  return startDiscovery({
    ...asked,
    identity: parts.identity,
    port: parts.port,
    trust: parts.peers,
    clock: options.runtime.clock,
    timers: asked.timers ?? options.runtime.timers,
    onEvent: (event) => {
      const line = discoveryLogLine(event);
      if (line !== undefined) parts.log(line);
      asked.onEvent?.(event);
    },
  });
}

function unpairFrom(peers: PinnedPeers, node: string): UnpairResult {
  const found = findPeer(peers, node);
  if (!found.ok) return { ok: false, ...found.error };
  const revoked = peers.revoke(found.value.node_id);
  if (!revoked.ok) return revoked;
  return { ok: true, peer: peerJson(revoked.peer), alreadyRevoked: revoked.alreadyRevoked };
}

/** A peer by node id (revoked ones too), else by name among the trusted ones when exactly one has it. */
function findPeer(
  peers: PinnedPeers,
  node: string,
): Result<PinnedPeer, { readonly code: "unknown_peer"; readonly message: string }> {
  const byId = peers.list().find((peer) => peer.node_id === node);
  if (byId !== undefined) return ok(byId);
  const byName = peers.active().filter((peer) => peer.name === node);
  const [only] = byName;
  if (byName.length === 1 && only !== undefined) return ok(only);
  return err({
    code: "unknown_peer",
    message:
      byName.length === 0
        ? `no paired node has the name or node id "${node}" (pair peers lists them)`
        : `${byName.length} paired nodes are named "${node}": name one by its node id (pair peers lists them)`,
  });
}

/** The log line of a discovery event (none for the routine ones). */
function discoveryLogLine(event: DiscoveryEvent): string | undefined {
  switch (event.type) {
    case "PeerMoved":
      return `peer ${event.nodeId} found at ${event.to} (was ${event.from ?? "unknown"}): address updated after mTLS`;
    case "PeerAddressRejected":
      return `peer ${event.nodeId} seen at ${event.address}, not moved there: ${event.reason}`;
    case "MdnsFailed":
      return event.message;
    case "PeerAddressKept":
      return undefined;
  }
}
