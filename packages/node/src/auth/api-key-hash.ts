/**
 * How a key's secret is kept and checked: HMAC-SHA-256 keyed by the node's pepper (32 random bytes
 * in `<data_dir>/api-keys.pepper`), over the key's id, its own 16-byte salt and the secret. Checking
 * always computes one HMAC and makes one constant-time comparison of two 32-byte digests, whether
 * the id is known, unknown or revoked.
 * Why not scrypt: the secret is 256 random bits, so a slow hash buys no resistance to guessing (there
 * is nothing to guess), while scrypt's default cost (~35 ms and 16 MiB per check, measured) would be
 * paid on every request and by every forged key an attacker sends. See docs/client-port.md.
 * Must not know: files, HTTP, where the pepper comes from.
 */

import { createHmac, timingSafeEqual } from "node:crypto";

export const API_KEY_HASH_ALGORITHM = "hmac-sha256";
export const API_KEY_PEPPER_BYTES = 32;
export const API_KEY_SALT_BYTES = 16;
export const API_KEY_HASH_BYTES = 32;

const DOMAIN = "PAIR API key v1";

/** Compares two equal-length buffers without an early exit; injectable so tests can watch it. */
export type ConstantTimeEqual = (a: Uint8Array, b: Uint8Array) => boolean;

export function hashApiKeySecret(pepper: Uint8Array, salt: Uint8Array, id: string, secret: string): Buffer {
  const idBytes = Buffer.from(id, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(idBytes.length);
  return createHmac("sha256", pepper)
    .update(DOMAIN)
    .update(length)
    .update(idBytes)
    .update(salt)
    .update(secret, "utf8")
    .digest();
}

/** One HMAC, one constant-time comparison. `want` must be API_KEY_HASH_BYTES long. */
export function secretMatches(
  pepper: Uint8Array,
  salt: Uint8Array,
  id: string,
  secret: string,
  want: Uint8Array,
  equal: ConstantTimeEqual = timingSafeEqual,
): boolean {
  const got = hashApiKeySecret(pepper, salt, id, secret);
  return want.length === got.length && equal(got, want);
}
