/**
 * PIN pairing between two PAIR nodes: CPace (CPACE-RISTR255-SHA512) keyed by the PIN and bound to
 * both nodes' ids, names and certificate fingerprints, with explicit key confirmation; the PIN
 * issuer; and the strict wire messages. This is the pure protocol core: the transport (plain HTTP
 * on the cluster port, each hello carrying its sender's certificate), storage of pinned
 * certificates and the CLI are wired in the daemon (node's cluster-node/).
 * Must not know: sockets, TLS, storage, the wall clock, the CLI.
 */

export type { RandomBytes } from "./cpace-ristretto255.js";
export {
  PAIRING_ERROR_CODES,
  PAIRING_ERROR_MEANINGS,
  REMOTE_ERROR_CODES,
  pairingError,
  type PairingError,
  type PairingErrorCode,
  type RemoteErrorCode,
} from "./pairing-errors.js";
export { canonicalFingerprint, type PairingIdentity, type PairedPeer } from "./pairing-identity.js";
export {
  MAX_MESSAGE_CHARS,
  PAIRING_PROTOCOL_VERSION,
  parsePairingJson,
  refusalMessage,
  type PairConfirm,
  type PairConfirmed,
  type PairHello,
  type PairingMessage,
  type PairingMessageType,
  type PairRefused,
  type PairShare,
  type WireNode,
} from "./pairing-messages.js";
export {
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_MAX_FAILED_ATTEMPTS,
  DEFAULT_PIN_LIFETIME_MS,
  PIN_DIGITS,
  PIN_TRANSITIONS,
  PinIssuer,
  parsePin,
  pinAnnouncement,
  type IssuedPin,
  type PinAnnouncement,
  type PinClaim,
  type PinIssuerOptions,
  type PinPhase,
  type PinStatus,
} from "./pin-issuer.js";
export {
  INITIATOR_TRANSITIONS,
  InitiatorPairing,
  createInitiatorPairing,
  type InitiatorOptions,
  type InitiatorPhase,
} from "./initiator-pairing.js";
export {
  RESPONDER_TRANSITIONS,
  ResponderPairing,
  type ResponderOptions,
  type ResponderPhase,
  type ResponderSuccess,
} from "./responder-pairing.js";
