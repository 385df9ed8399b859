import { createHash, createPublicKey, X509Certificate } from "node:crypto";
import { chmodSync, copyFileSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterError } from "../src/peers/cluster-error.js";
import {
  CERT_BACKDATE_MS,
  CERT_VALIDITY_MS,
  IDENTITY_CERT_FILE,
  IDENTITY_KEY_FILE,
  loadOrCreateIdentity,
} from "../src/peers/identity.js";
import { base32Lower, nodeIdOfPublicKey } from "../src/peers/node-certificate.js";
import { clockAt } from "../src/runtime/index.js";
import { clock, FIXED_NOW_MS, TempDirs } from "./cluster-fixtures.js";

const dirs = new TempDirs();
afterEach(() => dirs.removeAll());

async function refusal(promise: Promise<unknown>): Promise<ClusterError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClusterError);
  return error as ClusterError;
}

describe("loadOrCreateIdentity", () => {
  it("creates the identity once, then loads the same one", async () => {
    const dataDir = join(dirs.make(), "data");
    const created = await loadOrCreateIdentity(dataDir, { name: "macbook", clock });
    const keyBefore = readFileSync(join(dataDir, IDENTITY_KEY_FILE), "utf8");
    const loaded = await loadOrCreateIdentity(dataDir, {
      name: "renamed",
      clock: clockAt(() => FIXED_NOW_MS + 1_000),
    });
    expect(loaded.nodeId).toBe(created.nodeId);
    expect(loaded.fingerprint).toBe(created.fingerprint);
    expect(loaded.certPem).toBe(created.certPem);
    expect(readFileSync(join(dataDir, IDENTITY_KEY_FILE), "utf8")).toBe(keyBefore);
    expect(loaded.name).toBe("renamed"); // the name is the configured one, not part of the identity
  });

  it("writes the key 0600 in a 0700 data dir, PKCS#8 PEM", async () => {
    const dataDir = join(dirs.make(), "nested", "data");
    await loadOrCreateIdentity(dataDir, { name: "n1", clock });
    expect(statSync(join(dataDir, IDENTITY_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dataDir, IDENTITY_KEY_FILE), "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it("derives a stable node id from the public key, and the pin from the certificate", async () => {
    const dataDir = join(dirs.make(), "data");
    const identity = await loadOrCreateIdentity(dataDir, { name: "n1", clock });
    expect(identity.nodeId).toMatch(/^[a-z2-7]{20}$/);
    const keyPem = readFileSync(join(dataDir, IDENTITY_KEY_FILE), "utf8");
    const spki = createPublicKey(keyPem).export({ type: "spki", format: "der" });
    const digest = createHash("sha256").update(spki).digest();
    expect(identity.nodeId).toBe(base32Lower(digest).slice(0, 20));
    expect(nodeIdOfPublicKey(createPublicKey(keyPem))).toBe(identity.nodeId);
    const der = new X509Certificate(identity.certPem).raw;
    expect(identity.fingerprint).toBe(createHash("sha256").update(der).digest("hex"));
  });

  it("makes a self-signed P-256 leaf: CN and SAN are the node id, both EKUs, 20 years", async () => {
    const identity = await loadOrCreateIdentity(join(dirs.make(), "data"), { name: "n1", clock });
    const cert = new X509Certificate(identity.certPem);
    expect(cert.subject).toBe(`CN=${identity.nodeId}`);
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.subjectAltName).toBe(`DNS:${identity.nodeId}`);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(expect.arrayContaining(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]));
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    expect(Date.parse(cert.validFrom)).toBe(FIXED_NOW_MS - CERT_BACKDATE_MS);
    expect(Date.parse(cert.validTo)).toBe(FIXED_NOW_MS - CERT_BACKDATE_MS + CERT_VALIDITY_MS);
  });

  it("never shows the private key when printed or serialized", async () => {
    const identity = await loadOrCreateIdentity(join(dirs.make(), "data"), { name: "n1", clock });
    for (const text of [
      inspect(identity, { depth: 5 }),
      JSON.stringify(identity),
      String(identity.privateKeyPem),
    ])
      expect(text).not.toContain("PRIVATE KEY");
    expect(identity.privateKeyPem.reveal()).toContain("PRIVATE KEY");
  });

  it.each([0o644, 0o640, 0o604, 0o660])("refuses a key file with mode %o, naming the file", async (mode) => {
    const dataDir = join(dirs.make(), "data");
    await loadOrCreateIdentity(dataDir, { name: "n1", clock });
    const keyPath = join(dataDir, IDENTITY_KEY_FILE);
    chmodSync(keyPath, mode);
    const error = await refusal(loadOrCreateIdentity(dataDir, { name: "n1", clock }));
    expect(error.code).toBe("identity_key_exposed");
    expect(error.file).toBe(keyPath);
    expect(error.message).toContain(keyPath);
    expect(error.message).toContain(mode.toString(8));
  });

  it("refuses a certificate that does not belong to the key, naming the file", async () => {
    const one = join(dirs.make(), "data");
    const other = join(dirs.make(), "data");
    await loadOrCreateIdentity(one, { name: "n1", clock });
    await loadOrCreateIdentity(other, { name: "n2", clock });
    copyFileSync(join(other, IDENTITY_CERT_FILE), join(one, IDENTITY_CERT_FILE));
    const error = await refusal(loadOrCreateIdentity(one, { name: "n1", clock }));
    expect(error.code).toBe("identity_mismatch");
    expect(error.message).toContain(join(one, IDENTITY_CERT_FILE));
  });

  it("refuses half an identity instead of silently making a new one", async () => {
    const dataDir = join(dirs.make(), "data");
    await loadOrCreateIdentity(dataDir, { name: "n1", clock });
    const certPath = join(dataDir, IDENTITY_CERT_FILE);
    rmSync(certPath);
    const error = await refusal(loadOrCreateIdentity(dataDir, { name: "n1", clock }));
    expect(error.code).toBe("identity_incomplete");
    expect(error.file).toBe(certPath);
    expect(statSync(join(dataDir, IDENTITY_KEY_FILE)).isFile()).toBe(true);
  });

  it("refuses a certificate file that is not a node certificate", async () => {
    const dataDir = join(dirs.make(), "data");
    const identity = await loadOrCreateIdentity(dataDir, { name: "n1", clock });
    const certPath = join(dataDir, IDENTITY_CERT_FILE);
    writeFileSync(certPath, identity.certPem + identity.certPem);
    const error = await refusal(loadOrCreateIdentity(dataDir, { name: "n1", clock }));
    expect(error.code).toBe("identity_invalid");
    expect(error.message).toContain(certPath);
  });
});

describe("base32Lower", () => {
  it.each([
    ["", ""],
    ["f", "my"],
    ["fo", "mzxq"],
    ["foo", "mzxw6"],
    ["foob", "mzxw6yq"],
    ["fooba", "mzxw6ytb"],
    ["foobar", "mzxw6ytboi"],
  ])("encodes %j as RFC 4648 does (lowercase, unpadded)", (input, expected) => {
    expect(base32Lower(Buffer.from(input))).toBe(expected);
  });
});
