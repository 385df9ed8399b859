/**
 * A throwaway certificate authority for tests: emulators of services PAIR cannot reach (Hugging
 * Face, Runpod, HTTPS engines) serve real TLS with a leaf it issues, and clients trust the CA the way
 * a user would trust one through `tls.extra_ca_file`. Nothing here turns verification off.
 * Must not know: which emulator uses it, PAIR's own node identities (self-signed and pinned instead).
 */

import "reflect-metadata"; // first: @peculiar/x509 2.x needs the Reflect polyfill when it is imported
import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface TlsLeaf {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface TestCa {
  /** The CA certificate: what a client must trust. */
  readonly certPem: string;
  /**
   * A server leaf for these names (DNS names and IP addresses), signed by the CA, valid from a day ago
   * for `validDays` (default 30). Defaults to `localhost` + `127.0.0.1` + `::1`.
   */
  issue(options?: { readonly dns?: readonly string[]; readonly ips?: readonly string[] }): Promise<TlsLeaf>;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40; // positive, 16 bytes long
  return serial.toString("hex");
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key)).toString("base64");
  return `-----BEGIN PRIVATE KEY-----\n${(der.match(/.{1,64}/g) ?? []).join("\n")}\n-----END PRIVATE KEY-----\n`;
}

/** Create a CA (ECDSA P-256) named `name`, valid from a day ago for a year. */
export async function createTestCa(name = "PAIR test CA"): Promise<TestCa> {
  const { subtle } = webcrypto;
  const caKeys = await subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const notBefore = new Date(Date.now() - DAY_MS);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [name] }],
    keys: caKeys,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 366 * DAY_MS),
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  return {
    certPem: caCert.toString("pem") + "\n",
    async issue(options = {}) {
      const dns = options.dns ?? ["localhost"];
      const ips = options.ips ?? ["127.0.0.1", "::1"];
      const keys = await subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: serialNumber(),
        subject: [{ CN: [dns[0] ?? ips[0] ?? "leaf"] }],
        issuer: caCert.subject,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        notBefore,
        notAfter: new Date(notBefore.getTime() + 31 * DAY_MS),
        signingAlgorithm: SIGNING,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension([
            ...dns.map((value) => ({ type: "dns" as const, value })),
            ...ips.map((value) => ({ type: "ip" as const, value })),
          ]),
          await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
        ],
      });
      return { certPem: leaf.toString("pem") + "\n", keyPem: await privateKeyPem(keys.privateKey) };
    },
  };
}
