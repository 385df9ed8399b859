/**
 * The five pairing messages on the wire: small JSON objects with a protocol `version`, a `type`,
 * and bytes as canonical base64url. Reading is strict: a different version is
 * `unsupported_version`; a missing, extra or ill-formed field is `malformed_message`; nothing
 * here throws on what a peer sent.
 *
 *   pair.hello      initiator → responder   nonce, node
 *   pair.share      responder → initiator   nonce, node, share
 *   pair.confirm    initiator → responder   share, mac
 *   pair.confirmed  responder → initiator   mac
 *   pair.refused    responder → initiator   code (instead of pair.share or pair.confirmed)
 *
 * Must not know: the key exchange, PINs, sockets.
 */

import { err, ok, type Result } from "@pair/provision";
import { fromBase64url, toBase64url } from "./base64url.js";
import { ELEMENT_BYTES } from "./cpace-ristretto255.js";
import {
  isRemoteErrorCode,
  PAIRING_ERROR_MEANINGS,
  pairingError,
  type PairingError,
  type RemoteErrorCode,
} from "./pairing-errors.js";
import { isCanonicalFingerprint, isNodeId, isNodeName, type PairingIdentity } from "./pairing-identity.js";

export const PAIRING_PROTOCOL_VERSION = 1;
/** Each side's contribution to the session id. */
export const NONCE_BYTES = 16;
/** HMAC-SHA-512 tag length. */
export const MAC_BYTES = 64;
/** Longest pairing message text accepted by `parsePairingJson` (the largest is about 400). */
export const MAX_MESSAGE_CHARS = 4096;

export interface WireNode {
  readonly id: string;
  readonly name: string;
  readonly fingerprint: string;
}

interface Envelope<Type extends string> {
  readonly version: typeof PAIRING_PROTOCOL_VERSION;
  readonly type: Type;
}

export interface PairHello extends Envelope<"pair.hello"> {
  readonly nonce: string;
  readonly node: WireNode;
}

export interface PairShare extends Envelope<"pair.share"> {
  readonly nonce: string;
  readonly node: WireNode;
  readonly share: string;
}

export interface PairConfirm extends Envelope<"pair.confirm"> {
  readonly share: string;
  readonly mac: string;
}

export interface PairConfirmed extends Envelope<"pair.confirmed"> {
  readonly mac: string;
}

export interface PairRefused extends Envelope<"pair.refused"> {
  readonly code: RemoteErrorCode;
}

export type PairingMessage = PairHello | PairShare | PairConfirm | PairConfirmed | PairRefused;
export type PairingMessageType = PairingMessage["type"];

export interface DecodedHello {
  readonly nonce: Uint8Array;
  readonly node: PairingIdentity;
}
export interface DecodedShare extends DecodedHello {
  readonly share: Uint8Array;
}
export interface DecodedConfirm {
  readonly share: Uint8Array;
  readonly mac: Uint8Array;
}
export interface DecodedConfirmed {
  readonly mac: Uint8Array;
}

const FIELDS: Readonly<Record<PairingMessageType, readonly string[]>> = {
  "pair.hello": ["version", "type", "nonce", "node"],
  "pair.share": ["version", "type", "nonce", "node", "share"],
  "pair.confirm": ["version", "type", "share", "mac"],
  "pair.confirmed": ["version", "type", "mac"],
  "pair.refused": ["version", "type", "code"],
};
const NODE_FIELDS = ["id", "name", "fingerprint"];

// ---- building -------------------------------------------------------------------------------

function wireNode(node: PairingIdentity): WireNode {
  return { id: node.nodeId, name: node.name, fingerprint: node.fingerprint };
}

export function helloMessage(nonce: Uint8Array, node: PairingIdentity): PairHello {
  return { version: 1, type: "pair.hello", nonce: toBase64url(nonce), node: wireNode(node) };
}

export function shareMessage(nonce: Uint8Array, node: PairingIdentity, share: Uint8Array): PairShare {
  return {
    version: 1,
    type: "pair.share",
    nonce: toBase64url(nonce),
    node: wireNode(node),
    share: toBase64url(share),
  };
}

export function confirmMessage(share: Uint8Array, mac: Uint8Array): PairConfirm {
  return { version: 1, type: "pair.confirm", share: toBase64url(share), mac: toBase64url(mac) };
}

export function confirmedMessage(mac: Uint8Array): PairConfirmed {
  return { version: 1, type: "pair.confirmed", mac: toBase64url(mac) };
}

/** The message a responder sends instead of its next step when it refuses (`invalid_pin` never). */
export function refusalMessage(error: PairingError): PairRefused {
  return {
    version: 1,
    type: "pair.refused",
    code: error.code === "invalid_pin" ? "pairing_failed" : error.code,
  };
}

/** `JSON.parse` for a pairing message's text, bounded and without throwing. */
export function parsePairingJson(text: string): Result<unknown, PairingError> {
  if (text.length > MAX_MESSAGE_CHARS) {
    return err(malformed(`message longer than ${MAX_MESSAGE_CHARS} characters`));
  }
  try {
    return ok(JSON.parse(text) as unknown);
  } catch {
    return err(malformed("message is not JSON"));
  }
}

// ---- reading --------------------------------------------------------------------------------

export function readHello(value: unknown): Result<DecodedHello, PairingError> {
  return withFields(value, "pair.hello", false, (fields) => {
    const nonce = readBytes(fields, "nonce", NONCE_BYTES);
    const node = readNode(fields["node"]);
    if (!nonce.ok) return nonce;
    if (!node.ok) return node;
    return ok({ nonce: nonce.value, node: node.value });
  });
}

/** A `pair.share`, or the responder's `pair.refused` turned into its (remote) error. */
export function readShare(value: unknown): Result<DecodedShare, PairingError> {
  return withFields(value, "pair.share", true, (fields) => {
    const nonce = readBytes(fields, "nonce", NONCE_BYTES);
    const node = readNode(fields["node"]);
    const share = readBytes(fields, "share", ELEMENT_BYTES);
    if (!nonce.ok) return nonce;
    if (!node.ok) return node;
    if (!share.ok) return share;
    return ok({ nonce: nonce.value, node: node.value, share: share.value });
  });
}

export function readConfirm(value: unknown): Result<DecodedConfirm, PairingError> {
  return withFields(value, "pair.confirm", false, (fields) => {
    const share = readBytes(fields, "share", ELEMENT_BYTES);
    const mac = readBytes(fields, "mac", MAC_BYTES);
    if (!share.ok) return share;
    if (!mac.ok) return mac;
    return ok({ share: share.value, mac: mac.value });
  });
}

/** A `pair.confirmed`, or the responder's `pair.refused` turned into its (remote) error. */
export function readConfirmed(value: unknown): Result<DecodedConfirmed, PairingError> {
  return withFields(value, "pair.confirmed", true, (fields) => {
    const mac = readBytes(fields, "mac", MAC_BYTES);
    return mac.ok ? ok({ mac: mac.value }) : mac;
  });
}

function withFields<T>(
  value: unknown,
  expected: PairingMessageType,
  refusalAllowed: boolean,
  read: (fields: Readonly<Record<string, unknown>>) => Result<T, PairingError>,
): Result<T, PairingError> {
  if (!isPlainObject(value)) return err(malformed("a pairing message is a JSON object"));
  const version = value["version"];
  if (typeof version !== "number" || !Number.isInteger(version)) {
    return err(malformed("version: an integer is required"));
  }
  if (version !== PAIRING_PROTOCOL_VERSION) {
    return err(
      pairingError(
        "unsupported_version",
        `pairing protocol version ${version} is not supported (this node speaks ${PAIRING_PROTOCOL_VERSION})`,
      ),
    );
  }
  const type = value["type"];
  if (refusalAllowed && type === "pair.refused") {
    const exact = exactFields(value, FIELDS["pair.refused"]);
    if (!exact.ok) return exact;
    const code = value["code"];
    if (!isRemoteErrorCode(code)) return err(malformed("code: not a pairing refusal code"));
    return err(pairingError(code, `the other node refused: ${PAIRING_ERROR_MEANINGS[code]}`, true));
  }
  if (type !== expected) {
    return err(malformed(`type: expected ${expected}, got ${typeof type === "string" ? type : typeof type}`));
  }
  const exact = exactFields(value, FIELDS[expected]);
  return exact.ok ? read(value) : exact;
}

function exactFields(
  value: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): Result<true, PairingError> {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) return err(malformed(`${key}: unexpected field`));
  }
  for (const key of allowed) {
    if (!Object.hasOwn(value, key)) return err(malformed(`${key}: missing`));
  }
  return ok(true);
}

function readBytes(
  fields: Readonly<Record<string, unknown>>,
  key: string,
  byteCount: number,
): Result<Uint8Array, PairingError> {
  const text = fields[key];
  const bytes = typeof text === "string" ? fromBase64url(text, byteCount) : undefined;
  return bytes === undefined ? err(malformed(`${key}: expected base64url of ${byteCount} bytes`)) : ok(bytes);
}

function readNode(value: unknown): Result<PairingIdentity, PairingError> {
  if (!isPlainObject(value)) return err(malformed("node: an object is required"));
  for (const key of Object.keys(value)) {
    if (!NODE_FIELDS.includes(key)) return err(malformed(`node.${key}: unexpected field`));
  }
  const { id, name, fingerprint } = value;
  if (typeof id !== "string" || !isNodeId(id)) return err(malformed("node.id: not a node id"));
  if (typeof name !== "string" || !isNodeName(name)) return err(malformed("node.name: not a node name"));
  if (typeof fingerprint !== "string" || !isCanonicalFingerprint(fingerprint)) {
    return err(malformed("node.fingerprint: expected 64 lowercase hex digits"));
  }
  return ok({ nodeId: id, name, fingerprint });
}

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function malformed(detail: string): PairingError {
  return pairingError("malformed_message", `malformed pairing message: ${detail}`);
}
