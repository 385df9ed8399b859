/**
 * The responder's side of PIN pairing (the node showing the PIN), as a literal state machine:
 * `receive(pair.hello)` → `pair.share`; `finish(pair.confirm)` → `pair.confirmed` and the
 * initiator to pin. It claims the PIN from the `PinIssuer` before computing anything from it, and
 * settles the claim: paired on a valid key confirmation, failed on anything else after the share
 * went out (a wrong tag, a bad message, `abort`). Each refusal can be sent to the initiator as
 * `refusalMessage(error)`.
 *
 * The caller supplies `peerFingerprint`: the fingerprint it computed itself from the certificate PEM
 * that came with the initiator's `pair.hello` (never the fingerprint the message claims). The
 * initiator's claimed fingerprint must equal it, and both are bound into the key exchange.
 * Must not know: sockets, TLS, storage, the wall clock (time is `nowMs`).
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
  confirmedMessage,
  NONCE_BYTES,
  readConfirm,
  readHello,
  shareMessage,
  type PairConfirmed,
  type PairShare,
} from "./pairing-messages.js";
import type { PinClaim, PinIssuer } from "./pin-issuer.js";
import { failed, peerMismatch } from "./session-checks.js";

export interface ResponderOptions {
  /** This node. */
  readonly self: PairingIdentity;
  /** The PIN this node shows; shared by every responder session. */
  readonly issuer: PinIssuer;
  /** SHA-256 fingerprint the caller computed from the certificate that came with `pair.hello`. */
  readonly peerFingerprint: string;
  readonly randomBytes: RandomBytes;
}

export interface ResponderSuccess {
  /** Send this to the initiator: its key confirmation. */
  readonly reply: PairConfirmed;
  /** The initiator, to pin. */
  readonly peer: PairedPeer;
}

export type ResponderPhase = "awaiting_hello" | "awaiting_confirm" | "paired" | "failed";

export const RESPONDER_TRANSITIONS: Readonly<Record<ResponderPhase, readonly ResponderPhase[]>> = {
  awaiting_hello: ["awaiting_confirm", "failed"],
  awaiting_confirm: ["paired", "failed"],
  paired: [],
  failed: [],
};

interface Exchange {
  readonly claim: PinClaim;
  readonly inputs: PairingInputs;
  readonly ownShare: Uint8Array;
  scalar: bigint;
}

type Failure = { readonly ok: false; readonly error: PairingError };

export class ResponderPairing {
  readonly #self: PairingIdentity;
  readonly #issuer: PinIssuer;
  readonly #peerFingerprint: string;
  readonly #randomBytes: RandomBytes;
  #phase: ResponderPhase = "awaiting_hello";
  #exchange: Exchange | undefined;

  constructor(options: ResponderOptions) {
    this.#self = checkOwnIdentity(options.self);
    this.#issuer = options.issuer;
    this.#peerFingerprint = checkPeerFingerprint(options.peerFingerprint);
    this.#randomBytes = options.randomBytes;
  }

  get phase(): ResponderPhase {
    return this.#phase;
  }

  /** Reads `pair.hello`, claims the PIN and answers with `pair.share`. */
  receive(message: unknown, nowMs: number): Result<PairShare, PairingError> {
    if (this.#phase !== "awaiting_hello") return this.#outOfOrder("receive", nowMs);
    const hello = readHello(message);
    if (!hello.ok) return this.#fail(hello.error, nowMs);
    const initiator = hello.value.node;
    const mismatch = peerMismatch(this.#self, initiator, this.#peerFingerprint, "initiator");
    if (mismatch !== undefined) return this.#fail(mismatch, nowMs);
    const claim = this.#issuer.claim(nowMs);
    if (!claim.ok) return this.#fail(claim.error, nowMs);

    const responderNonce = takeRandomBytes(this.#randomBytes, NONCE_BYTES);
    const inputs: PairingInputs = {
      pin: claim.value.pin,
      initiator,
      responder: this.#self,
      initiatorNonce: hello.value.nonce,
      responderNonce,
    };
    const scalar = sampleScalar(this.#randomBytes);
    const ownShare = scalarMult(scalar, pairingGenerator(inputs));
    this.#exchange = { claim: claim.value, inputs, ownShare, scalar };
    this.#moveTo("awaiting_confirm");
    return ok(shareMessage(responderNonce, this.#self, ownShare));
  }

  /** Reads `pair.confirm`; on a valid key confirmation, consumes the PIN and returns the peer. */
  finish(message: unknown, nowMs: number): Result<ResponderSuccess, PairingError> {
    const exchange = this.#exchange;
    if (this.#phase !== "awaiting_confirm" || exchange === undefined)
      return this.#outOfOrder("finish", nowMs);
    const confirm = readConfirm(message);
    if (!confirm.ok) return this.#fail(confirm.error, nowMs);
    const k = scalarMultVfy(exchange.scalar, confirm.value.share);
    if (k === undefined)
      return this.#fail(failed("the initiator's share is not a valid group element"), nowMs);
    const tags = confirmationTags(exchange.inputs, k, exchange.ownShare, confirm.value.share);
    k.fill(0);
    if (!tagsEqual(confirm.value.mac, tags.initiator)) {
      tags.responder.fill(0);
      return this.#fail(failed("the initiator's key confirmation does not match"), nowMs);
    }
    const settled = this.#issuer.settle(exchange.claim, "paired", nowMs);
    if (!settled.ok) {
      tags.responder.fill(0);
      this.#exchange = undefined;
      return this.#fail(settled.error, nowMs);
    }
    exchange.scalar = 0n;
    this.#exchange = undefined;
    this.#moveTo("paired");
    return ok({ reply: confirmedMessage(tags.responder), peer: exchange.inputs.initiator });
  }

  /** The initiator went away (or the transport gave up): a held PIN claim counts as a failure. */
  abort(nowMs: number): void {
    if (this.#phase === "awaiting_hello" || this.#phase === "awaiting_confirm") {
      this.#fail(pairingError("pairing_failed", "pairing aborted"), nowMs);
    }
  }

  #outOfOrder(step: string, nowMs: number): Failure {
    return this.#fail(
      pairingError("pairing_failed", `pairing step ${step} called in phase ${this.#phase}`),
      nowMs,
    );
  }

  /**
   * Ends the session. A PIN claim still held is settled as failed (one attempt spent); when the
   * issuer then reports the PIN expired or burnt, that is the more useful answer.
   */
  #fail(error: PairingError, nowMs: number): Failure {
    const exchange = this.#exchange;
    this.#exchange = undefined;
    let reported = error;
    if (exchange !== undefined) {
      exchange.scalar = 0n;
      const settled = this.#issuer.settle(exchange.claim, "failed", nowMs);
      if (!settled.ok && settled.error.code === "pin_expired") reported = settled.error;
    }
    if (this.#phase !== "failed" && this.#phase !== "paired") this.#moveTo("failed");
    return err(reported);
  }

  #moveTo(next: ResponderPhase): void {
    if (!RESPONDER_TRANSITIONS[this.#phase].includes(next)) {
      throw new Error(`ResponderPairing: illegal move ${this.#phase} -> ${next}`);
    }
    this.#phase = next;
  }
}
