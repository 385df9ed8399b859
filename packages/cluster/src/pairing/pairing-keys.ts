/**
 * How PAIR instantiates CPace for pairing: the channel identifier CI that binds both nodes' ids,
 * names and certificate fingerprints with their roles; the session id from both nonces; the
 * associated data; and the key-confirmation tags derived from the ISK, one label per direction.
 * Must not know: PIN issuing and attempts, JSON, sockets, time.
 */

import { timingSafeEqual } from "node:crypto";
import { hmac } from "@noble/hashes/hmac.js";
import { sha512 } from "@noble/hashes/sha2.js";
import {
  calculateGenerator,
  intermediateSessionKey,
  transcriptIr,
  type GroupElement,
} from "./cpace-ristretto255.js";
import { concatBytes, lvCat, utf8 } from "./length-value.js";
import { fingerprintBytes, type PairingIdentity } from "./pairing-identity.js";

/** Names protocol, version and cipher suite inside CI, so a different version cannot agree on keys. */
export const PAIRING_PROTOCOL_LABEL = "PAIR pairing v1 CPACE-RISTR255-SHA512";
/** ADa: the responder sends the first CPace share (in `pair.share`), so it is CPace's party A. */
export const RESPONDER_AD = utf8("PAIR responder share");
/** ADb: the initiator's share follows in `pair.confirm`. */
export const INITIATOR_AD = utf8("PAIR initiator share");
const MAC_KEY_LABEL = utf8("CPaceMac");
const INITIATOR_TAG_LABEL = utf8("PAIR key confirmation: initiator to responder");
const RESPONDER_TAG_LABEL = utf8("PAIR key confirmation: responder to initiator");

/** Everything both sides must agree on before either computes the generator. */
export interface PairingInputs {
  readonly pin: string;
  readonly initiator: PairingIdentity;
  readonly responder: PairingIdentity;
  readonly initiatorNonce: Uint8Array;
  readonly responderNonce: Uint8Array;
}

export interface ConfirmationTags {
  /** Sent by the initiator in `pair.confirm`, checked by the responder. */
  readonly initiator: Uint8Array;
  /** Sent by the responder in `pair.confirmed`, checked by the initiator. */
  readonly responder: Uint8Array;
}

/**
 * CI = lv_cat(label, "initiator", id, name, fingerprint, "responder", id, name, fingerprint).
 * Each side builds it from its own identity and the peer identity it was shown; a man-in-the-middle
 * who changes any of them (a certificate of its own, above all) makes the two CIs, hence the two
 * generators and keys, differ.
 */
export function channelIdentifier(initiator: PairingIdentity, responder: PairingIdentity): Uint8Array {
  return lvCat(
    utf8(PAIRING_PROTOCOL_LABEL),
    utf8("initiator"),
    utf8(initiator.nodeId),
    utf8(initiator.name),
    fingerprintBytes(initiator.fingerprint),
    utf8("responder"),
    utf8(responder.nodeId),
    utf8(responder.name),
    fingerprintBytes(responder.fingerprint),
  );
}

/** sid = initiator nonce || responder nonce (draft §10.9: random bytes from both parties). */
export function sessionId(inputs: PairingInputs): Uint8Array {
  return concatBytes(inputs.initiatorNonce, inputs.responderNonce);
}

/** The secret CPace generator for this PIN, CI and sid. Never leaves the process. */
export function pairingGenerator(inputs: PairingInputs): GroupElement {
  return calculateGenerator(
    utf8(inputs.pin),
    channelIdentifier(inputs.initiator, inputs.responder),
    sessionId(inputs),
  );
}

/**
 * ISK from the shared point K and the transcript, then mac_key = SHA-512("CPaceMac" || sid || ISK)
 * (draft §10.4) and one HMAC-SHA-512 tag per direction over lv_cat(label, CI, sid, transcript).
 * The ISK and mac_key are wiped before returning; only the tags leave.
 */
export function confirmationTags(
  inputs: PairingInputs,
  k: Uint8Array,
  responderShare: Uint8Array,
  initiatorShare: Uint8Array,
): ConfirmationTags {
  const ci = channelIdentifier(inputs.initiator, inputs.responder);
  const sid = sessionId(inputs);
  const transcript = transcriptIr(responderShare, RESPONDER_AD, initiatorShare, INITIATOR_AD);
  const isk = intermediateSessionKey(sid, k, transcript);
  const macKey = sha512(concatBytes(MAC_KEY_LABEL, sid, isk));
  const tags = {
    initiator: hmac(sha512, macKey, lvCat(INITIATOR_TAG_LABEL, ci, sid, transcript)),
    responder: hmac(sha512, macKey, lvCat(RESPONDER_TAG_LABEL, ci, sid, transcript)),
  };
  isk.fill(0);
  macKey.fill(0);
  return tags;
}

/** Constant-time comparison of two tags (lengths are public). */
export function tagsEqual(received: Uint8Array, expected: Uint8Array): boolean {
  return received.length === expected.length && timingSafeEqual(received, expected);
}
