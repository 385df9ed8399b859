/**
 * The node's identity: an ECDSA P-256 key pair and a self-signed certificate, made at first start in
 * the data dir (`identity.key`, PKCS#8 PEM, 0600, created exclusively; `identity.crt`) and loaded on
 * every later start. The node id and the pin (fingerprint) are derived from them (node-certificate.ts).
 *
 * Certificate: subject CN = the node id, SAN = DNS:<node id>, no localhost or IP names (peers pin the
 * certificate and ignore host names), basicConstraints CA:false (critical), keyUsage
 * digitalSignature (critical), extendedKeyUsage serverAuth + clientAuth, valid from one day before
 * creation (clock skew between machines) for 20 years. The node's *name* is not in the certificate:
 * names change in the config while the certificate is for good, and a peer server's TLS
 * CertificateRequest lists the subjects of every pinned certificate to anyone who connects.
 *
 * Must not know: peers, sockets, the config file.
 */

import "reflect-metadata"; // first: @peculiar/x509 2.x needs the Reflect polyfill when it is imported
import * as x509 from "@peculiar/x509";
import type { Clock } from "@pair/provision";
import { createPrivateKey, createPublicKey, randomBytes, webcrypto } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ClusterError } from "./cluster-error.js";
import { isP256, nodeIdOfSpki, readNodeCertificate } from "./node-certificate.js";
import { Redacted } from "./redacted.js";

export const IDENTITY_KEY_FILE = "identity.key";
export const IDENTITY_CERT_FILE = "identity.crt";
const MS_PER_DAY = 86_400_000;
/** How long a node certificate is valid: 20 years of 365.25 days. */
export const CERT_VALIDITY_MS = 7_305 * MS_PER_DAY;
/** How far before its creation a certificate is valid, so a peer whose clock is behind accepts it. */
export const CERT_BACKDATE_MS = MS_PER_DAY;

export interface NodeIdentity {
  /** Stable: derived from the public key (node-certificate.ts). */
  readonly nodeId: string;
  /** The node's name as configured now (not part of the certificate). */
  readonly name: string;
  readonly certPem: string;
  /** SHA-256 of the certificate's DER, lowercase hex: what peers pin. */
  readonly fingerprint: string;
  /** PKCS#8 PEM. Only TLS contexts read it. */
  readonly privateKeyPem: Redacted<string>;
}

export interface IdentityOptions {
  /** The node's configured name. */
  readonly name: string;
  /** The certificate's validity starts from its wall time. */
  readonly clock: Clock;
}

/** Load the identity from `dataDir`, creating it (and the dir, 0700) at first start. */
export async function loadOrCreateIdentity(dataDir: string, options: IdentityOptions): Promise<NodeIdentity> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const keyPath = join(dataDir, IDENTITY_KEY_FILE);
  const certPath = join(dataDir, IDENTITY_CERT_FILE);
  const hasKey = exists(keyPath);
  const hasCert = exists(certPath);
  if (!hasKey && !hasCert) await createIdentity(keyPath, certPath, options.clock.now().wallMs);
  else if (!hasKey || !hasCert) {
    const [present, missing] = hasKey ? [keyPath, certPath] : [certPath, keyPath];
    throw new ClusterError(
      "identity_incomplete",
      `${missing} is missing but ${present} exists; restore ${missing} from a backup, or remove ${present} ` +
        "to create a new identity (every peer must then pair again)",
      missing,
    );
  }
  return loadIdentity(keyPath, certPath, options.name);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw cause;
  }
}

function loadIdentity(keyPath: string, certPath: string, name: string): NodeIdentity {
  const keyStat = statSync(keyPath);
  if (!keyStat.isFile())
    throw new ClusterError("identity_invalid", `${keyPath} is not a regular file`, keyPath);
  // Windows has no POSIX modes; there the data dir's ACL is what protects the key.
  const loose = keyStat.mode & 0o077;
  if (process.platform !== "win32" && loose !== 0)
    throw new ClusterError(
      "identity_key_exposed",
      `${keyPath} is accessible to group or others (mode ${(keyStat.mode & 0o777).toString(8).padStart(4, "0")}); ` +
        `the node refuses to use an exposed key: run \`chmod 600 ${keyPath}\` if nobody else could have read it, ` +
        "otherwise remove identity.key and identity.crt to create a new identity (every peer must then pair again)",
      keyPath,
    );
  const keyPem = readFileSync(keyPath, "utf8");
  let privateKey;
  try {
    privateKey = createPrivateKey({ key: keyPem, format: "pem" });
  } catch (cause) {
    throw new ClusterError("identity_invalid", `${keyPath} is not a PEM private key`, keyPath, { cause });
  }
  if (!isP256(privateKey))
    throw new ClusterError("identity_invalid", `${keyPath} is not an ECDSA P-256 key`, keyPath);
  const read = readNodeCertificate(readFileSync(certPath, "utf8"));
  if (!read.ok)
    throw new ClusterError(
      "identity_invalid",
      `${certPath} is not a node certificate: ${read.reason}`,
      certPath,
    );
  const keySpki = createPublicKey(privateKey).export({ type: "spki", format: "der" });
  const certSpki = read.certificate.publicKey.export({ type: "spki", format: "der" });
  if (!keySpki.equals(certSpki))
    throw new ClusterError(
      "identity_mismatch",
      `${certPath} does not belong to ${keyPath} (different public keys); restore the matching pair from a backup`,
      certPath,
    );
  return {
    nodeId: read.certificate.nodeId,
    name,
    certPem: read.certificate.pem,
    fingerprint: read.certificate.fingerprint,
    privateKeyPem: new Redacted(keyPem, "private key"),
  };
}

async function createIdentity(keyPath: string, certPath: string, nowMs: number): Promise<void> {
  const { subtle } = webcrypto;
  const keys = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const nodeId = nodeIdOfSpki(new Uint8Array(await subtle.exportKey("spki", keys.publicKey)));
  const notBeforeMs = nowMs - CERT_BACKDATE_MS;
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40; // positive, 16 bytes long
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString("hex"),
    name: [{ CN: [nodeId] }],
    keys,
    notBefore: new Date(notBeforeMs),
    notAfter: new Date(notBeforeMs + CERT_VALIDITY_MS),
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: nodeId }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${(pkcs8.match(/.{1,64}/g) ?? []).join("\n")}\n-----END PRIVATE KEY-----\n`;
  // The key first, exclusively: a concurrent first start fails here instead of mixing two identities.
  try {
    writeNewFile(keyPath, keyPem, 0o600);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== "EEXIST") throw cause;
    throw new ClusterError(
      "identity_incomplete",
      `${keyPath} appeared while this node was creating its identity (is another node starting on this data dir?)`,
      keyPath,
      { cause },
    );
  }
  writeNewFile(certPath, cert.toString("pem") + "\n", 0o644);
}

/** Create `path` (failing if it exists) with `mode`, write `text`, and flush it to disk. */
function writeNewFile(path: string, text: string, mode: number): void {
  const fd = openSync(path, "wx", mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
