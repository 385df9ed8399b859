/**
 * Test fixtures for the cluster's trust layer: temp data dirs, node identities, certificates PAIR
 * would never make (a CA and leaves it signs, to play a peer that tries to vouch for another key),
 * and a peer server with a counting handler. All on 127.0.0.1, port 0.
 * Must not know: pairing, routes beyond the one test route.
 */

import "reflect-metadata"; // first: @peculiar/x509 2.x needs the Reflect polyfill when it is imported
import * as x509 from "@peculiar/x509";
import { webcrypto, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateIdentity, type NodeIdentity } from "../src/peers/identity.js";
import { clockAt } from "../src/runtime/index.js";
import { fingerprintOfDer } from "../src/peers/node-certificate.js";
import {
  startPeerServer,
  type AuthenticatedPeer,
  type PeerServer,
  type PeerServerLimits,
} from "../src/peers/peer-server.js";
import type { PinnedPeerView } from "../src/peers/pinned-peers.js";

export const FIXED_NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
export const nowMs = (): number => FIXED_NOW_MS;
/** A clock stopped at FIXED_NOW_MS. */
export const clock = clockAt(nowMs);

/** Temp dirs made by a test; `removeAll()` in afterEach. */
export class TempDirs {
  readonly #dirs: string[] = [];

  make(prefix = "pair-cluster-"): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.#dirs.push(dir);
    return dir;
  }

  removeAll(): void {
    for (const dir of this.#dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

export async function makeIdentity(dirs: TempDirs, name: string): Promise<NodeIdentity> {
  return loadOrCreateIdentity(join(dirs.make(), "data"), { name, clock });
}

export interface RawCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
}

/** The pin of a PEM certificate. */
export function fingerprintOfPem(pem: string): string {
  return fingerprintOfDer(new X509Certificate(pem).raw);
}

const ECDSA_SHA256 = { name: "ECDSA", hash: "SHA-256" } as const;

async function p256(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
}

async function pkcs8Pem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  return `-----BEGIN PRIVATE KEY-----\n${(der.match(/.{1,64}/g) ?? []).join("\n")}\n-----END PRIVATE KEY-----\n`;
}

const validity = () => ({
  notBefore: new Date(Date.now() - 86_400_000),
  notAfter: new Date(Date.now() + 86_400_000),
});

/** A self-signed CA certificate (PAIR refuses to pin these). */
export async function makeCa(cn: string): Promise<RawCertificate> {
  const keys = await p256();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: [{ CN: [cn] }],
    keys,
    ...validity(),
    signingAlgorithm: ECDSA_SHA256,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys, certPem: cert.toString("pem"), keyPem: await pkcs8Pem(keys) };
}

/** A leaf signed by `ca`, valid for localhost and 127.0.0.1, for server and client auth. */
export async function makeLeaf(ca: RawCertificate, cn: string): Promise<RawCertificate> {
  const keys = await p256();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: [{ CN: [cn] }],
    issuer: ca.cert.subject,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    ...validity(),
    signingAlgorithm: ECDSA_SHA256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
    ],
  });
  return { cert, keys, certPem: cert.toString("pem"), keyPem: await pkcs8Pem(keys) };
}

export interface CountingServer {
  readonly server: PeerServer;
  readonly url: string;
  /** Every request the handler saw, with the peer it came from. */
  readonly calls: { readonly path: string; readonly peer: AuthenticatedPeer }[];
}

/** A peer server whose one route answers 200 with the authenticated peer as JSON. */
export async function startCountingServer(
  identity: NodeIdentity,
  peers: PinnedPeerView,
  limits: Partial<PeerServerLimits> = {},
): Promise<CountingServer> {
  const calls: { path: string; peer: AuthenticatedPeer }[] = [];
  const server = await startPeerServer({
    identity,
    peers,
    host: "127.0.0.1",
    port: 0,
    limits,
    handler: (req, res, peer) => {
      calls.push({ path: req.url ?? "", peer });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(peer));
    },
  });
  return { server, url: `https://127.0.0.1:${server.port}`, calls };
}
