/**
 * Who takes part in a pairing: a node's id, its display name and the SHA-256 fingerprint of its
 * certificate. Here are the shapes the protocol accepts for each and the canonical fingerprint
 * spelling (64 lowercase hex digits) that is bound into the key exchange and returned for pinning.
 * Must not know: how ids are derived or certificates made (peers/), sockets, storage.
 */

/** A node as the pairing protocol names it. `fingerprint` is canonical (see `canonicalFingerprint`). */
export interface PairingIdentity {
  readonly nodeId: string;
  readonly name: string;
  readonly fingerprint: string;
}

/** What a successful pairing hands to the caller to pin: the other node. */
export type PairedPeer = PairingIdentity;

export const MAX_NODE_ID_CHARS = 128;
export const MAX_NODE_NAME_CHARS = 63;
export const FINGERPRINT_BYTES = 32;

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const CANONICAL_FINGERPRINT = /^[0-9a-f]{64}$/;
const LOOSE_FINGERPRINT = /^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){31})$/;

export function isNodeId(value: string): boolean {
  return value.length <= MAX_NODE_ID_CHARS && NODE_ID.test(value);
}

export function isNodeName(value: string): boolean {
  return value.length <= MAX_NODE_NAME_CHARS && NODE_NAME.test(value);
}

/** True for the one spelling messages carry: 64 lowercase hex digits. */
export function isCanonicalFingerprint(value: string): boolean {
  return CANONICAL_FINGERPRINT.test(value);
}

/**
 * The canonical spelling of a SHA-256 fingerprint given as 64 hex digits in either case or as
 * colon-separated pairs (Node's `X509Certificate.fingerprint256`); `undefined` for anything else.
 * Use it on local inputs (this node's identity, the fingerprint the caller computed from the peer's
 * certificate), never to loosen what a message may contain.
 */
export function canonicalFingerprint(value: string): string | undefined {
  return LOOSE_FINGERPRINT.test(value) ? value.replaceAll(":", "").toLowerCase() : undefined;
}

export function fingerprintBytes(canonical: string): Uint8Array {
  return new Uint8Array(Buffer.from(canonical, "hex"));
}

/** This node's identity made canonical, or a thrown `RangeError`: a malformed own identity is a bug. */
export function checkOwnIdentity(identity: PairingIdentity): PairingIdentity {
  const fingerprint = canonicalFingerprint(identity.fingerprint);
  if (!isNodeId(identity.nodeId)) throw new RangeError(`not a valid node id: ${identity.nodeId}`);
  if (!isNodeName(identity.name)) throw new RangeError(`not a valid node name: ${identity.name}`);
  if (fingerprint === undefined) {
    throw new RangeError(`not a SHA-256 certificate fingerprint: ${identity.fingerprint}`);
  }
  return { nodeId: identity.nodeId, name: identity.name, fingerprint };
}

/** The caller-computed peer fingerprint made canonical, or a thrown `RangeError` (a caller bug). */
export function checkPeerFingerprint(fingerprint: string): string {
  const canonical = canonicalFingerprint(fingerprint);
  if (canonical === undefined) {
    throw new RangeError(`peerFingerprint is not a SHA-256 certificate fingerprint: ${fingerprint}`);
  }
  return canonical;
}
