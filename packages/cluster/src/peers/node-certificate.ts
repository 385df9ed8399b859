/**
 * What PAIR reads from a node certificate: its pin (SHA-256 of the DER, lowercase hex), the node id
 * (derived from the public key) and whether it is fit to be a node identity. Fit means: exactly one
 * certificate, self-signed, ECDSA P-256, not a CA (so a pinned peer can never vouch for another key).
 * The PEM kept is always re-encoded from the parsed certificate, so text around or after it (a
 * second certificate smuggled into a trust list) never reaches a TLS context.
 * Must not know: files, sockets, the trust store, how the certificate was made.
 */

import { createHash, X509Certificate, type KeyObject } from "node:crypto";

/**
 * Node id = the first 20 characters of base32 (RFC 4648 alphabet, lowercase, no padding) of
 * SHA-256(SubjectPublicKeyInfo DER): 100 bits, DNS-label safe ([a-z2-7]), no prefix. It names a
 * node; it never authenticates one (that is the full fingerprint's job).
 */
export const NODE_ID_LENGTH_CHARS = 20;

const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export interface NodeCertificate {
  /** The certificate alone, re-encoded as PEM. */
  readonly pem: string;
  readonly nodeId: string;
  /** SHA-256 of the DER, lowercase hex (64 characters). */
  readonly fingerprint: string;
  readonly publicKey: KeyObject;
}

export type NodeCertificateResult =
  | { readonly ok: true; readonly certificate: NodeCertificate }
  | { readonly ok: false; readonly reason: string };

/** Lowercase base32 (RFC 4648 alphabet) without padding. */
export function base32Lower(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** The pin of a certificate: SHA-256 of its DER, lowercase hex. */
export function fingerprintOfDer(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

/** The node id of a public key, from its SubjectPublicKeyInfo DER. */
export function nodeIdOfSpki(spkiDer: Uint8Array): string {
  const digest = createHash("sha256").update(spkiDer).digest();
  return base32Lower(digest).slice(0, NODE_ID_LENGTH_CHARS);
}

/** The node id of a public key. */
export function nodeIdOfPublicKey(publicKey: KeyObject): string {
  return nodeIdOfSpki(publicKey.export({ type: "spki", format: "der" }));
}

/** Whether a key is an ECDSA P-256 key (private or public). */
export function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";
}

/** Parse exactly one PEM certificate, without judging it. */
export function parseSinglePemCertificate(
  pem: string,
): { readonly ok: true; readonly x509: X509Certificate } | { readonly ok: false; readonly reason: string } {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length !== 1)
    return { ok: false, reason: `expected exactly one PEM certificate, found ${blocks.length}` };
  const outside = pem.replace(PEM_CERTIFICATE, "").trim();
  if (outside !== "") return { ok: false, reason: "unexpected text around the PEM certificate" };
  try {
    return { ok: true, x509: new X509Certificate(pem) };
  } catch {
    return { ok: false, reason: "the PEM certificate cannot be parsed" };
  }
}

/** Read a certificate and check it is fit to be a node identity (see the header). */
export function readNodeCertificate(pem: string): NodeCertificateResult {
  const parsed = parseSinglePemCertificate(pem);
  if (!parsed.ok) return parsed;
  const { x509 } = parsed;
  const publicKey = x509.publicKey;
  if (!isP256(publicKey)) return { ok: false, reason: "the certificate's key is not ECDSA P-256" };
  if (x509.ca)
    return { ok: false, reason: "the certificate is a CA certificate; a node certificate must not be" };
  // Not `checkIssued`: OpenSSL's issued-by check also wants keyCertSign, which a leaf must not have.
  if (x509.issuer !== x509.subject || !x509.verify(publicKey))
    return { ok: false, reason: "the certificate is not self-signed by its own key" };
  return {
    ok: true,
    certificate: {
      pem: x509.toString(),
      nodeId: nodeIdOfPublicKey(publicKey),
      fingerprint: fingerprintOfDer(x509.raw),
      publicKey,
    },
  };
}
