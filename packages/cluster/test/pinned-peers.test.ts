import { chmodSync, linkSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ClusterError } from "../src/peers/cluster-error.js";
import type { NodeIdentity } from "../src/peers/identity.js";
import { openPinnedPeers, PEERS_FILE, type PeersChange } from "../src/peers/pinned-peers.js";
import { clockAt } from "../src/runtime/index.js";
import { clock, FIXED_NOW_MS, makeCa, makeIdentity, TempDirs } from "./cluster-fixtures.js";

const dirs = new TempDirs();
const idDirs = new TempDirs();
afterEach(() => dirs.removeAll());

let b: NodeIdentity;
let c: NodeIdentity;
beforeAll(async () => {
  [b, c] = await Promise.all([makeIdentity(idDirs, "pc-3090"), makeIdentity(idDirs, "mini")]);
  return () => idDirs.removeAll();
});

function pinOk(store: ReturnType<typeof openPinnedPeers>, identity: NodeIdentity) {
  const result = store.pin({ name: identity.name, certPem: identity.certPem });
  if (!result.ok) throw new Error(result.message);
  return result.peer;
}

describe("PinnedPeers", () => {
  it("pins, lists, recognises and revokes; a revoked peer stays recorded but is not pinned", () => {
    const changes: PeersChange[] = [];
    let atMs = FIXED_NOW_MS;
    const store = openPinnedPeers(dirs.make(), {
      clock: clockAt(() => atMs),
      onChange: (change) => changes.push(change),
    });
    const peer = pinOk(store, b);
    expect(peer).toEqual({
      node_id: b.nodeId,
      name: "pc-3090",
      cert_pem: b.certPem,
      fingerprint: b.fingerprint,
      paired_at: new Date(FIXED_NOW_MS).toISOString(),
    });
    expect(store.isPinned(b.fingerprint)).toBe(true);
    expect(store.isPinned(c.fingerprint)).toBe(false);
    // The same list while nothing changed (forwarding asks on every request), a new one after a change.
    const active = store.active();
    expect(active).toEqual([peer]);
    expect(store.active()).toBe(active);
    atMs += 60_000;
    const revoked = store.revoke(b.nodeId);
    expect(revoked).toMatchObject({ ok: true, alreadyRevoked: false });
    expect(store.isPinned(b.fingerprint)).toBe(false);
    expect(store.findActive(b.fingerprint)).toBeUndefined();
    expect(store.active()).toEqual([]);
    expect(store.list()).toEqual([{ ...peer, revoked_at: new Date(atMs).toISOString() }]);
    expect(changes.map((change) => [change.kind, change.peer.node_id])).toEqual([
      ["pinned", b.nodeId],
      ["revoked", b.nodeId],
    ]);
  });

  it("answers a revocation of an unknown node, and a second revocation, without a change", () => {
    const changes: PeersChange[] = [];
    const store = openPinnedPeers(dirs.make(), { clock, onChange: (change) => changes.push(change) });
    expect(store.revoke("aaaaaaaaaaaaaaaaaaaa")).toMatchObject({ ok: false, code: "unknown_peer" });
    pinOk(store, b);
    store.revoke(b.nodeId);
    expect(store.revoke(b.nodeId)).toMatchObject({ ok: true, alreadyRevoked: true });
    expect(changes).toHaveLength(2);
  });

  it("pins a revoked node anew when it pairs again", () => {
    const store = openPinnedPeers(dirs.make(), { clock });
    pinOk(store, b);
    store.revoke(b.nodeId);
    pinOk(store, b);
    expect(store.isPinned(b.fingerprint)).toBe(true);
    expect(store.list()).toHaveLength(1);
  });

  it("writes peers.json 0600 by replacing it, leaves no temp file, and survives a reload", () => {
    const dataDir = dirs.make();
    const path = join(dataDir, PEERS_FILE);
    const store = openPinnedPeers(dataDir, { clock });
    pinOk(store, b);
    // A second name for the file as it is now: a rewrite in place would change what it shows.
    const before = readFileSync(path, "utf8");
    linkSync(path, join(dataDir, "before.json"));
    pinOk(store, c);
    store.revoke(b.nodeId);
    expect(readFileSync(join(dataDir, "before.json"), "utf8")).toBe(before);
    rmSync(join(dataDir, "before.json"));
    expect(readFileSync(path, "utf8")).not.toBe(before);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir)).toEqual([PEERS_FILE]);
    const reloaded = openPinnedPeers(dataDir, { clock });
    expect(reloaded.list()).toEqual(store.list());
    expect(reloaded.isPinned(c.fingerprint)).toBe(true);
    expect(reloaded.isPinned(b.fingerprint)).toBe(false);
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ version: 1, peers: [{}, {}] });
  });

  it("ignores a temp file a crash left behind", () => {
    const dataDir = dirs.make();
    const store = openPinnedPeers(dataDir, { clock });
    pinOk(store, b);
    writeFileSync(join(dataDir, `${PEERS_FILE}.123.abcdef.tmp`), "{ half a fi");
    expect(openPinnedPeers(dataDir, { clock }).list()).toEqual(store.list());
  });

  it("refuses certificates unfit to be a node identity, and bad names", async () => {
    const store = openPinnedPeers(dirs.make(), { clock });
    const ca = await makeCa("would-be-ca");
    const cases = [
      { name: "x", certPem: ca.certPem, code: "unfit_certificate" },
      { name: "x", certPem: b.certPem + c.certPem, code: "unfit_certificate" },
      {
        name: "x",
        certPem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        code: "unfit_certificate",
      },
      { name: "x", certPem: `junk\n${b.certPem}`, code: "unfit_certificate" },
      { name: "", certPem: b.certPem, code: "invalid_name" },
      { name: "a b", certPem: b.certPem, code: "invalid_name" },
      { name: "x".repeat(64), certPem: b.certPem, code: "invalid_name" },
    ];
    for (const { code, ...request } of cases) expect(store.pin(request)).toMatchObject({ ok: false, code });
    expect(store.list()).toEqual([]);
  });

  it("refuses a peers.json whose pin was edited, naming the file", () => {
    const dataDir = dirs.make();
    const path = join(dataDir, PEERS_FILE);
    pinOk(openPinnedPeers(dataDir, { clock }), b);
    const file = JSON.parse(readFileSync(path, "utf8")) as {
      peers: { fingerprint: string; cert_pem: string }[];
    };
    const record = file.peers[0];
    if (record === undefined) throw new Error("no record");
    record.cert_pem = c.certPem; // someone swaps the certificate and keeps the fingerprint
    writeFileSync(path, JSON.stringify(file), { mode: 0o600 });
    const error = (() => {
      try {
        openPinnedPeers(dataDir, { clock });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ClusterError);
    expect(error).toMatchObject({ code: "peers_file_invalid", file: path });
  });

  it("refuses a peers.json others can write", () => {
    const dataDir = dirs.make();
    pinOk(openPinnedPeers(dataDir, { clock }), b);
    chmodSync(join(dataDir, PEERS_FILE), 0o666);
    expect(() => openPinnedPeers(dataDir, { clock })).toThrow(
      expect.objectContaining({ code: "peers_file_exposed" }),
    );
  });
});

describe("a peer's address", () => {
  it("is kept across a reopen; a record without one still loads; a bad one is left out", async () => {
    const dir = dirs.make();
    const a = await makeIdentity(dirs, "node-a");
    const b = await makeIdentity(dirs, "node-b");
    const c = await makeIdentity(dirs, "node-c");
    const store = openPinnedPeers(dir, { clock });
    expect(store.pin({ name: "node-a", certPem: a.certPem, address: "10.0.0.7:14323" }).ok).toBe(true);
    expect(store.pin({ name: "node-b", certPem: b.certPem }).ok).toBe(true);
    expect(store.pin({ name: "node-c", certPem: c.certPem, address: "no port" }).ok).toBe(true);
    const reopened = openPinnedPeers(dir, { clock }).active();
    expect(reopened.map((p) => [p.name, p.address])).toEqual([
      ["node-a", "10.0.0.7:14323"],
      ["node-b", undefined],
      ["node-c", undefined],
    ]);
  });
});
