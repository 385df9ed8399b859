/**
 * Checks both pairing state machines make on the identity the other side claims, before anything
 * derived from the PIN is computed: the claimed certificate fingerprint must be the one the TLS
 * session presented, and a node cannot pair with itself (a reflected message).
 * Must not know: the key exchange, PIN issuing, sockets.
 */

import { pairingError, type PairingError } from "./pairing-errors.js";
import type { PairingIdentity } from "./pairing-identity.js";

export function failed(detail: string): PairingError {
  return pairingError("pairing_failed", `pairing failed: ${detail}`);
}

/** A `pairing_failed` error when the claimed peer cannot be this session's peer, else `undefined`. */
export function peerMismatch(
  self: PairingIdentity,
  peer: PairingIdentity,
  tlsPeerFingerprint: string,
  role: "initiator" | "responder",
): PairingError | undefined {
  if (peer.fingerprint !== tlsPeerFingerprint) {
    return failed(`the ${role} claims a certificate other than the one this TLS session presented`);
  }
  if (peer.fingerprint === self.fingerprint || peer.nodeId === self.nodeId) {
    return failed(`the ${role} claims this node's own identity`);
  }
  return undefined;
}
