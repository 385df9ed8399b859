/**
 * The sandbox's own certificate authority: `pair demo` serves its emulated Hugging Face over real
 * HTTPS with a leaf this CA issues, and the demo's sponsor trusts the CA the way a user would trust
 * one, through `tls.extra_ca_file`. Verification stays on everywhere; the CA lives only in memory and
 * in the demo's temp folder, and is gone when the demo stops.
 * (A small copy of @pair/testkit's createTestCa: the layering keeps test helpers out of the node.)
 * Must not know: which server uses the leaf, the demo's nodes.
 */

import "reflect-metadata"; // first: @peculiar/x509 2.x needs the Reflect polyfill when it is imported
import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

const DAY_MS = 24 * 60 * 60 * 1000;
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

export interface DemoCa {
  /** What the sponsor trusts (written to its `tls.extra_ca_file`). */
  readonly certPem: string;
  /** A leaf for localhost, 127.0.0.1 and ::1. */
  readonly leaf: { readonly certPem: string; readonly keyPem: string };
}

function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  return serial.toString("hex");
}

function pem(label: string, der: ArrayBuffer): string {
  const body = (
    Buffer.from(der)
      .toString("base64")
      .match(/.{1,64}/g) ?? []
  ).join("\n");
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** A CA valid for a week from a day ago, and one server leaf for loopback. */
export async function createDemoCa(): Promise<DemoCa> {
  const { subtle } = webcrypto;
  const caKeys = await subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const notBefore = new Date(Date.now() - DAY_MS);
  const notAfter = new Date(notBefore.getTime() + 8 * DAY_MS);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: ["PAIR demo sandbox CA (throwaway)"] }],
    keys: caKeys,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = await subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: ["localhost"] }],
    issuer: ca.subject,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
        { type: "ip", value: "::1" },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  return {
    certPem: `${ca.toString("pem")}\n`,
    leaf: {
      certPem: `${leaf.toString("pem")}\n`,
      keyPem: pem("PRIVATE KEY", await subtle.exportKey("pkcs8", keys.privateKey)),
    },
  };
}
