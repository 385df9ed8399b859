/**
 * The CPace cipher suite CPACE-RISTR255-SHA512 (draft-irtf-cfrg-cpace-21, §7 and §8.3): the
 * generator derived from PRS, CI and sid, scalar sampling, `scalar_mult`, `scalar_mult_vfy`,
 * `transcript_ir` and the intermediate session key ISK. The test suite pins these to the draft's
 * ristretto255 vectors (Appendix B.3).
 * Must not know: PINs, node identities, messages, JSON, time. It takes bytes and a random source.
 */

import { ristretto255, ristretto255_hasher } from "@noble/curves/ed25519.js";
import { bytesToNumberLE } from "@noble/curves/utils.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes, lvCat, prependLen, utf8 } from "./length-value.js";

/** A source of uniformly random bytes (`node:crypto.randomBytes` in the daemon, seeded in tests). */
export type RandomBytes = (byteCount: number) => Uint8Array;

/** A ristretto255 group element in noble's internal representation. */
export type GroupElement = InstanceType<typeof ristretto255.Point>;

/** `G.DSI` for ristretto255. */
export const CPACE_DSI = utf8("CPaceRistretto255");
const CPACE_DSI_ISK = utf8("CPaceRistretto255_ISK");
/** SHA-512's input block size (`H.s_in_bytes`). */
const SHA512_BLOCK_BYTES = 128;
/** Size of an encoded group element (`G.field_size_bytes`). */
export const ELEMENT_BYTES = 32;
/** `G.group_size_bits`: sampled scalars keep only this many low bits. */
const GROUP_SIZE_BITS = 252;
/** Length of the ISK (SHA-512 output). */
export const ISK_BYTES = 64;

/** `generator_string(G.DSI, PRS, CI, sid, H.s_in_bytes)`: DSI and PRS fill the first hash block. */
export function generatorString(prs: Uint8Array, ci: Uint8Array, sid: Uint8Array): Uint8Array {
  const zeroPadBytes = Math.max(
    0,
    SHA512_BLOCK_BYTES - 1 - prependLen(prs).length - prependLen(CPACE_DSI).length,
  );
  return lvCat(CPACE_DSI, prs, new Uint8Array(zeroPadBytes), ci, sid);
}

/** `G.calculate_generator`: SHA-512 of the generator string, then RFC 9496 element derivation. */
export function calculateGenerator(prs: Uint8Array, ci: Uint8Array, sid: Uint8Array): GroupElement {
  return elementDerivation(sha512(generatorString(prs, ci, sid)));
}

/** RFC 9496 §4.3.4 element derivation (64 uniform bytes → one element), as noble exposes it. */
function elementDerivation(uniformBytes: Uint8Array): GroupElement {
  if (ristretto255_hasher.deriveToCurve === undefined) {
    throw new Error("@noble/curves lacks ristretto255 element derivation");
  }
  return ristretto255_hasher.deriveToCurve(uniformBytes);
}

/**
 * `G.sample_scalar()` as the draft recommends: 32 random bytes, the bits above 252 cleared, read
 * little-endian. The result is below the group order; zero (probability 2^-252) can only mean a
 * broken random source, so that throws rather than producing a degenerate share.
 */
export function sampleScalar(randomBytes: RandomBytes): bigint {
  const bytes = takeRandomBytes(randomBytes, ELEMENT_BYTES);
  bytes[ELEMENT_BYTES - 1] = (bytes[ELEMENT_BYTES - 1] ?? 0) & ((1 << (GROUP_SIZE_BITS % 8)) - 1);
  const scalar = bytesToNumberLE(bytes);
  bytes.fill(0);
  if (scalar === 0n) throw new Error("the random source returned an all-zero scalar");
  return scalar;
}

/** `G.scalar_mult(y, g)`: the public share `encode(y * g)`. */
export function scalarMult(scalar: bigint, generator: GroupElement): Uint8Array {
  return generator.multiply(scalar).toBytes();
}

/**
 * `G.scalar_mult_vfy(y, X)`: `encode(y * decode(X))`, or `undefined` where the draft returns the
 * neutral element `G.I` (X does not decode, or the result is the identity). Callers MUST abort
 * on `undefined`.
 */
export function scalarMultVfy(scalar: bigint, encoded: Uint8Array): Uint8Array | undefined {
  if (encoded.length !== ELEMENT_BYTES) return undefined;
  let point: GroupElement;
  try {
    point = ristretto255.Point.fromBytes(encoded);
  } catch {
    return undefined;
  }
  const shared = point.multiply(scalar);
  return shared.is0() ? undefined : shared.toBytes();
}

/** `transcript_ir(Ya, ADa, Yb, ADb)`: the initiator-responder transcript (A's share sent first). */
export function transcriptIr(ya: Uint8Array, ada: Uint8Array, yb: Uint8Array, adb: Uint8Array): Uint8Array {
  return concatBytes(lvCat(ya, ada), lvCat(yb, adb));
}

/** `ISK = H.hash(lv_cat(G.DSI || "_ISK", sid, K) || transcript)`. */
export function intermediateSessionKey(sid: Uint8Array, k: Uint8Array, transcript: Uint8Array): Uint8Array {
  return sha512(concatBytes(lvCat(CPACE_DSI_ISK, sid, k), transcript));
}

/** Exactly `byteCount` bytes from the random source, copied so the caller may wipe them. */
export function takeRandomBytes(randomBytes: RandomBytes, byteCount: number): Uint8Array {
  const bytes = randomBytes(byteCount);
  if (!(bytes instanceof Uint8Array) || bytes.length !== byteCount) {
    throw new Error(`the random source must return exactly ${byteCount} bytes`);
  }
  return Uint8Array.from(bytes);
}
