/**
 * The initiator's side of PIN pairing (the node running `pair join ADDRESS --pin PIN`), as a
 * literal state machine: `start()` → `pair.hello`; `receive(pair.share, peerFingerprint)` →
 * `pair.confirm`; `finish(pair.confirmed)` → the responder to pin. The first refusal ends the
 * session for good.
 *
 * With `pair.share` the caller supplies `peerFingerprint`: the fingerprint it computed itself from
 * the certificate PEM that came with the share (never the fingerprint the message claims). The
 * responder's claimed fingerprint must equal it, and it is the one bound into the key exchange and
 * returned for pinning; the caller stores exactly that certificate.
 * Must not know: sockets, TLS, storage, the wall clock.
 */

import { err, ok, type Result } from "@pair/provision";
import {
  sampleScalar,
  scalarMult,
  scalarMultVfy,
  takeRandomBytes,
  type RandomBytes,
} from "./cpace-ristretto255.js";
import { pairingError, type PairingError } from "./pairing-errors.js";
import {
  checkOwnIdentity,
  checkPeerFingerprint,
  type PairingIdentity,
  type PairedPeer,
} from "./pairing-identity.js";
import { confirmationTags, pairingGenerator, tagsEqual, type PairingInputs } from "./pairing-keys.js";
import {
  confirmMessage,
  helloMessage,
  NONCE_BYTES,
  readConfirmed,
  readShare,
  type PairConfirm,
  type PairHello,
} from "./pairing-messages.js";
import { parsePin } from "./pin-issuer.js";
import { failed, peerMismatch } from "./session-checks.js";

export interface InitiatorOptions {
  /** This node. */
  readonly self: PairingIdentity;
  /** The PIN as the user typed it. */
  readonly pin: string;
  readonly randomBytes: RandomBytes;
}

export type InitiatorPhase = "ready" | "awaiting_share" | "awaiting_confirmation" | "paired" | "failed";

export const INITIATOR_TRANSITIONS: Readonly<Record<InitiatorPhase, readonly InitiatorPhase[]>> = {
  ready: ["awaiting_share", "failed"],
  awaiting_share: ["awaiting_confirmation", "failed"],
  awaiting_confirmation: ["paired", "failed"],
  paired: [],
  failed: [],
};

/** A new initiator session, or `invalid_pin` when the PIN typed is not 6 digits. */
export function createInitiatorPairing(options: InitiatorOptions): Result<InitiatorPairing, PairingError> {
  const pin = parsePin(options.pin);
  return pin.ok ? ok(new InitiatorPairing(options, pin.value)) : pin;
}

export class InitiatorPairing {
  readonly #self: PairingIdentity;
  readonly #randomBytes: RandomBytes;
  #pin: string;
  #phase: InitiatorPhase = "ready";
  #nonce: Uint8Array | undefined;
  #responder: PairingIdentity | undefined;
  #expectedResponderTag: Uint8Array | undefined;

  /** Prefer `createInitiatorPairing`, which refuses a malformed PIN as a result. */
  constructor(options: InitiatorOptions, pin: string) {
    this.#self = checkOwnIdentity(options.self);
    this.#randomBytes = options.randomBytes;
    this.#pin = pin;
  }

  get phase(): InitiatorPhase {
    return this.#phase;
  }

  /** `pair.hello`: this node's identity and its half of the session id. Call once. */
  start(): PairHello {
    if (this.#phase !== "ready") throw new Error(`InitiatorPairing.start() called in phase ${this.#phase}`);
    this.#nonce = takeRandomBytes(this.#randomBytes, NONCE_BYTES);
    this.#moveTo("awaiting_share");
    return helloMessage(this.#nonce, this.#self);
  }

  /**
   * Reads `pair.share` (or `pair.refused`) and answers with `pair.confirm`. `peerFingerprint`: SHA-256
   * of the certificate that came with the message, computed by the caller; `undefined` when none
   * came (a refusal carries none, and a share without one fails).
   */
  receive(message: unknown, peerFingerprint: string | undefined): Result<PairConfirm, PairingError> {
    if (this.#phase !== "awaiting_share" || this.#nonce === undefined) return this.#outOfOrder("receive");
    const observed = peerFingerprint === undefined ? undefined : checkPeerFingerprint(peerFingerprint);
    const share = readShare(message);
    if (!share.ok) return this.#fail(share.error);
    const responder = share.value.node;
    const mismatch = peerMismatch(this.#self, responder, observed, "responder");
    if (mismatch !== undefined) return this.#fail(mismatch);

    const inputs: PairingInputs = {
      pin: this.#pin,
      initiator: this.#self,
      responder,
      initiatorNonce: this.#nonce,
      responderNonce: share.value.nonce,
    };
    const scalar = sampleScalar(this.#randomBytes);
    const ownShare = scalarMult(scalar, pairingGenerator(inputs));
    const k = scalarMultVfy(scalar, share.value.share);
    if (k === undefined) return this.#fail(failed("the responder's share is not a valid group element"));
    const tags = confirmationTags(inputs, k, share.value.share, ownShare);
    k.fill(0);
    this.#pin = "";
    this.#responder = responder;
    this.#expectedResponderTag = tags.responder;
    this.#moveTo("awaiting_confirmation");
    return ok(confirmMessage(ownShare, tags.initiator));
  }

  /** Reads `pair.confirmed` (or `pair.refused`); on a valid tag, the responder to pin. */
  finish(message: unknown): Result<PairedPeer, PairingError> {
    const expected = this.#expectedResponderTag;
    const responder = this.#responder;
    if (this.#phase !== "awaiting_confirmation" || expected === undefined || responder === undefined) {
      return this.#outOfOrder("finish");
    }
    const confirmed = readConfirmed(message);
    if (!confirmed.ok) return this.#fail(confirmed.error);
    if (!tagsEqual(confirmed.value.mac, expected)) {
      return this.#fail(failed("the responder's key confirmation does not match"));
    }
    expected.fill(0);
    this.#expectedResponderTag = undefined;
    this.#moveTo("paired");
    return ok(responder);
  }

  #outOfOrder(step: string): { readonly ok: false; readonly error: PairingError } {
    return this.#fail(pairingError("pairing_failed", `pairing step ${step} called in phase ${this.#phase}`));
  }

  #fail(error: PairingError): { readonly ok: false; readonly error: PairingError } {
    this.#pin = "";
    this.#expectedResponderTag?.fill(0);
    this.#expectedResponderTag = undefined;
    if (this.#phase !== "failed" && this.#phase !== "paired") this.#moveTo("failed");
    return err(error);
  }

  #moveTo(next: InitiatorPhase): void {
    if (!INITIATOR_TRANSITIONS[this.#phase].includes(next)) {
      throw new Error(`InitiatorPairing: illegal move ${this.#phase} -> ${next}`);
    }
    this.#phase = next;
  }
}
