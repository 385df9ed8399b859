/**
 * Test helpers for the pairing core: a seeded random source, node identities, and a driver that
 * runs the four-message exchange between an initiator and a responder through a relay the test
 * controls (a man-in-the-middle, a tamperer, or an honest wire). Messages cross as JSON text.
 * Must not know: the protocol's internals; it uses only the public pairing API.
 */

import { createHash } from "node:crypto";
import {
  createInitiatorPairing,
  pairingError,
  parsePairingJson,
  PinIssuer,
  refusalMessage,
  ResponderPairing,
  type PairingError,
  type PairingIdentity,
  type PairedPeer,
  type RandomBytes,
} from "../../src/pairing/index.js";

/** A deterministic byte stream: SHA-256(seed || counter), concatenated. */
export function seededRandom(seed: string): RandomBytes {
  let counter = 0;
  let pool = Buffer.alloc(0);
  return (byteCount) => {
    while (pool.length < byteCount) {
      const block = createHash("sha256").update(`${seed}/${counter++}`).digest();
      pool = Buffer.concat([pool, block]);
    }
    const out = new Uint8Array(pool.subarray(0, byteCount));
    pool = pool.subarray(byteCount);
    return out;
  };
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function identity(name: string): PairingIdentity {
  return {
    nodeId: `node-${sha256Hex(`id:${name}`).slice(0, 16)}`,
    name,
    fingerprint: sha256Hex(`cert:${name}`),
  };
}

export const LAPTOP = identity("laptop");
export const DESKTOP_3090 = identity("pc-3090");
export const MALLORY = identity("mallory");

export type Outcome =
  { readonly ok: true; readonly peer: PairedPeer } | { readonly ok: false; readonly error: PairingError };

export interface PairingRun {
  readonly initiator: Outcome;
  readonly responder: Outcome;
  /** The JSON text of every message that crossed the wire, in order. */
  readonly wire: readonly string[];
}

/** Rewrites message `index` (0: hello, 1: share, 2: confirm, 3: confirmed) on its way. */
export type Relay = (index: number, message: Record<string, unknown>) => Record<string, unknown>;

export interface RunOptions {
  readonly issuer: PinIssuer;
  readonly pin: string;
  readonly initiator?: PairingIdentity;
  readonly responder?: PairingIdentity;
  /** The fingerprint of the certificate that reached the initiator with the share (default: the responder's). */
  readonly initiatorSeesFingerprint?: string;
  /** The fingerprint of the certificate that reached the responder with the hello (default: the initiator's). */
  readonly responderSeesFingerprint?: string;
  readonly relay?: Relay;
  readonly nowMs?: number;
  /** Time of `finish` on the responder, when it differs from `nowMs`. */
  readonly finishAtMs?: number;
  readonly seed?: string;
}

/** Runs one pairing to its end on both sides. */
export function runPairing(options: RunOptions): PairingRun {
  const initiatorId = options.initiator ?? LAPTOP;
  const responderId = options.responder ?? DESKTOP_3090;
  const nowMs = options.nowMs ?? 1_000;
  const finishAtMs = options.finishAtMs ?? nowMs;
  const seed = options.seed ?? "run";
  const wire: string[] = [];
  const cross = (index: number, message: object): unknown => {
    const relayed = options.relay
      ? options.relay(index, JSON.parse(JSON.stringify(message)) as never)
      : message;
    const text = JSON.stringify(relayed);
    wire.push(text);
    const parsed = parsePairingJson(text);
    if (!parsed.ok) throw new Error("relay produced unparsable JSON");
    return parsed.value;
  };

  const created = createInitiatorPairing({
    self: initiatorId,
    pin: options.pin,
    randomBytes: seededRandom(`${seed}/initiator`),
  });
  if (!created.ok) throw new Error(`initiator refused its PIN: ${created.error.code}`);
  const initiator = created.value;
  const responder = new ResponderPairing({
    self: responderId,
    issuer: options.issuer,
    peerFingerprint: options.responderSeesFingerprint ?? initiatorId.fingerprint,
    randomBytes: seededRandom(`${seed}/responder`),
  });

  const share = responder.receive(cross(0, initiator.start()), nowMs);
  if (!share.ok) {
    const told = initiator.receive(refusalMessage(share.error), responderId.fingerprint);
    if (told.ok) throw new Error("the initiator accepted a refusal");
    return { initiator: told, responder: share, wire };
  }
  const confirm = initiator.receive(
    cross(1, share.value),
    options.initiatorSeesFingerprint ?? responderId.fingerprint,
  );
  if (!confirm.ok) {
    responder.abort(nowMs);
    const gone = pairingError("pairing_failed", "the initiator gave up before confirming");
    return { initiator: confirm, responder: { ok: false, error: gone }, wire };
  }
  const confirmed = responder.finish(cross(2, confirm.value), finishAtMs);
  if (!confirmed.ok) {
    const told = initiator.finish(refusalMessage(confirmed.error));
    return { initiator: outcome(told), responder: confirmed, wire };
  }
  const done = initiator.finish(cross(3, confirmed.value.reply));
  return { initiator: outcome(done), responder: { ok: true, peer: confirmed.value.peer }, wire };
}

function outcome(result: { ok: true; value: PairedPeer } | { ok: false; error: PairingError }): Outcome {
  return result.ok ? { ok: true, peer: result.value } : { ok: false, error: result.error };
}

/** A PIN issuer with a seeded source and a PIN shown at `nowMs`. */
export function issuerWithPin(seed = "issuer", nowMs = 0): { issuer: PinIssuer; pin: string } {
  const issuer = new PinIssuer({ randomBytes: seededRandom(seed) });
  return { issuer, pin: issuer.issue(nowMs).pin };
}

/** A different valid 6-digit PIN. */
export function otherPin(pin: string): string {
  return String((Number(pin) + 1) % 1_000_000).padStart(6, "0");
}
