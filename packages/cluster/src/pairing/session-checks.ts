/**
 * Checks both pairing state machines make on the identity the other side claims, before anything
 * derived from the PIN is computed: the claimed certificate fingerprint must be the one the caller
 * computed from the certificate that came with the message, and a node cannot pair with itself (a
 * reflected message).
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
  peerFingerprint: string | undefined,
  role: "initiator" | "responder",
): PairingError | undefined {
  if (peerFingerprint === undefined) return failed(`the ${role} sent no certificate`);
  if (peer.fingerprint !== peerFingerprint) {
    return failed(`the ${role} claims a certificate other than the one it sent`);
  }
  if (peer.fingerprint === self.fingerprint || peer.nodeId === self.nodeId) {
    return failed(`the ${role} claims this node's own identity`);
  }
  return undefined;
}
