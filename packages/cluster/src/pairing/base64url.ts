/**
 * Strict base64url (RFC 4648 §5, no padding) for the byte fields of pairing messages. Decoding
 * refuses anything but the canonical encoding of exactly the expected number of bytes, so a
 * message has one spelling and a flipped character can never decode to the same bytes.
 * Must not know: which field it decodes.
 */

const BASE64URL = /^[A-Za-z0-9_-]*$/;

export function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/** The bytes, or `undefined` when `text` is not the canonical base64url of `byteCount` bytes. */
export function fromBase64url(text: string, byteCount: number): Uint8Array | undefined {
  if (text.length !== Math.ceil((byteCount * 4) / 3) || !BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64url");
  if (bytes.length !== byteCount || bytes.toString("base64url") !== text) return undefined;
  return new Uint8Array(bytes);
}
