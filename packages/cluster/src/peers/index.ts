/**
 * The cluster's trust layer: the node's identity (key pair, self-signed certificate, node id), the
 * pinned peers (peers.json), the mTLS peer server, the cluster port in front of it (TLS to the peer
 * server, anything else to a plain handler) and the pinned peer client. The public face of this
 * folder; pairing, discovery, inventory and forwarding build on it.
 * Must not know: the config file, routes, the scheduler.
 */

export { CLUSTER_ERROR_CODES, checkLimit, ClusterError, type ClusterErrorCode } from "./cluster-error.js";
export {
  CERT_BACKDATE_MS,
  CERT_VALIDITY_MS,
  IDENTITY_CERT_FILE,
  IDENTITY_KEY_FILE,
  loadOrCreateIdentity,
  type IdentityOptions,
  type NodeIdentity,
} from "./identity.js";
export {
  NODE_ID_LENGTH_CHARS,
  fingerprintOfDer,
  nodeIdOfPublicKey,
  readNodeCertificate,
  type NodeCertificate,
  type NodeCertificateResult,
} from "./node-certificate.js";
export {
  MAX_PINNED_PEERS,
  MAX_REVOKED_PEERS_KEPT,
  PEERS_FILE,
  isPeerAddress,
  isPeerName,
  openPinnedPeers,
  type PinnedPeers,
  type PeersChange,
  type PinRequest,
  type PinResult,
  type PinnedPeer,
  type PinnedPeerView,
  type PinnedPeersOptions,
  type RelocateResult,
  type RevokeResult,
} from "./pinned-peers.js";
export {
  DEFAULT_PEER_SERVER_LIMITS,
  PEER_SERVER_CHANNEL,
  createPeerServer,
  startPeerServer,
  type AuthenticatedPeer,
  type PeerHandler,
  type PeerServer,
  type PeerServerCore,
  type PeerServerCoreOptions,
  type PeerServerEvent,
  type PeerServerLimits,
  type PeerServerOptions,
} from "./peer-server.js";
export {
  CLUSTER_PORT_CHANNEL,
  DEFAULT_CLUSTER_PORT_LIMITS,
  TLS_HANDSHAKE_RECORD,
  startClusterPort,
  type ClusterPort,
  type ClusterPortEvent,
  type ClusterPortLimits,
  type ClusterPortOptions,
  type SocketConsumer,
} from "./cluster-port.js";
export {
  DEFAULT_PEER_AGENT_LIMITS,
  createPeerAgent,
  peerSecureContext,
  pinnedServerIdentity,
  type PeerAgentLimits,
  type PeerAgentOptions,
} from "./peer-client.js";
export { PeerH2Dispatcher, type PeerH2Options } from "./peer-h2.js";
export { PEER_CHANGED_PATH, PEER_HELLO_PATH, PEER_INVENTORY_PATH, PEER_ROUTE_PREFIX } from "./peer-paths.js";
export { Redacted } from "./redacted.js";
export { formatHostPort, parseHostPort, type HostPort, type HostPortResult } from "./host-port.js";
