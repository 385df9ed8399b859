/**
 * The cluster, wired into a node: the cluster port (strict mTLS for peers, plain HTTP for the PIN
 * handshake only), pairing by PIN on both sides, the peer API, and the admin routes that drive
 * pairing from the client port. The public face of this folder.
 * Must not know: the scheduler, engines, the CLI.
 */

export {
  peerJson,
  startClusterNode,
  type ClusterNode,
  type ClusterNodeOptions,
  type PeerJson,
  type UnpairResult,
} from "./cluster-node.js";
export { DEFAULT_JOIN_TIMEOUT_MS, joinByPin, type JoinError, type JoinErrorCode } from "./pairing-join.js";
export {
  DEFAULT_PAIRING_SERVER_LIMITS,
  createPairingServer,
  type PairingServer,
  type PairingServerEvent,
  type PairingServerLimits,
} from "./pairing-server.js";
export { envelopeText, HANDSHAKE_PATH, MAX_ENVELOPE_BYTES, readEnvelope } from "./pairing-wire.js";
export { PEER_CHANGED_PATH, PEER_HELLO_PATH, PEER_INVENTORY_PATH, PEER_ROUTE_PREFIX } from "@pair/cluster";
export { peerRoutes, type LocalInventory, type PeerChange, type PeerInventory } from "./peer-routes.js";
export { DEFAULT_PEER_FIRST_BYTE_TIMEOUT_MS, PeerLinks, type PeerLinkTarget } from "./peer-links.js";
export {
  DEFAULT_MEMBERSHIP_OPTIONS,
  PeerMembership,
  type MemberView,
  type MembershipOptions,
} from "./peer-membership.js";
export { isPairingAdminPath, PAIRING_ADMIN_PATHS, servePairingAdmin } from "./pairing-admin-routes.js";
export {
  clusterDiscovery,
  resolveMdnsNetwork,
  type ClusterDiscoveryOptions,
  type DiscoveredNode,
  type Discovery,
  type DiscoveryEvent,
  type DiscoveryTiming,
  type MdnsNetwork,
  type NodeDiscoveryOptions,
} from "@pair/cluster";
