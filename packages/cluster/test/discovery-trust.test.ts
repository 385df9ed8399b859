// The trust store's one door for discovery (`relocate`), and which network mDNS uses.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodeIdentity } from "../src/peers/identity.js";
import { openPinnedPeers, PEERS_FILE, type PeersChange } from "../src/peers/pinned-peers.js";
import { resolveMdnsNetwork } from "../src/index.js";
import { clock, makeIdentity, TempDirs } from "./cluster-fixtures.js";

const dirs = new TempDirs();
const idDirs = new TempDirs();
afterEach(() => dirs.removeAll());

let b: NodeIdentity;
let c: NodeIdentity;
beforeAll(async () => {
  [b, c] = await Promise.all([makeIdentity(idDirs, "pc-3090"), makeIdentity(idDirs, "mini")]);
  return () => idDirs.removeAll();
});

describe("PinnedPeers.relocate", () => {
  it("moves an active peer's address on disk and reports it; the same address again changes nothing", () => {
    const dir = dirs.make();
    const changes: PeersChange[] = [];
    const store = openPinnedPeers(dir, { clock, onChange: (change) => changes.push(change) });
    store.pin({ name: "pc-3090", certPem: b.certPem, address: "10.0.0.2:14323" });
    expect(store.relocate(b.nodeId, "10.0.0.2:15000", b.fingerprint)).toMatchObject({
      ok: true,
      changed: true,
    });
    expect(store.relocate(b.nodeId, "10.0.0.2:15000", b.fingerprint)).toMatchObject({
      ok: true,
      changed: false,
    });
    expect(changes.map((ch) => ch.kind)).toEqual(["pinned", "moved"]);
    expect(changes[1]).toMatchObject({ from: "10.0.0.2:14323", peer: { address: "10.0.0.2:15000" } });
    const file = JSON.parse(readFileSync(join(dir, PEERS_FILE), "utf8")) as { peers: { address: string }[] };
    expect(file.peers[0]?.address).toBe("10.0.0.2:15000");
    expect(openPinnedPeers(dir, { clock }).active()[0]?.address).toBe("10.0.0.2:15000");
  });

  it("refuses another certificate's fingerprint, a revoked or unknown peer, and a non-address", () => {
    const store = openPinnedPeers(dirs.make(), { clock });
    store.pin({ name: "pc-3090", certPem: b.certPem, address: "10.0.0.2:14323" });
    expect(store.relocate(b.nodeId, "10.0.0.9:1", c.fingerprint)).toMatchObject({
      ok: false,
      code: "certificate_changed",
    });
    expect(store.relocate(c.nodeId, "10.0.0.9:1", c.fingerprint)).toMatchObject({
      ok: false,
      code: "unknown_peer",
    });
    expect(store.relocate(b.nodeId, "not an address", b.fingerprint)).toMatchObject({
      ok: false,
      code: "invalid_address",
    });
    store.revoke(b.nodeId);
    expect(store.relocate(b.nodeId, "10.0.0.9:1", b.fingerprint)).toMatchObject({
      ok: false,
      code: "unknown_peer",
    });
    expect(store.list()[0]?.address).toBe("10.0.0.2:14323");
  });
});

describe("resolveMdnsNetwork", () => {
  it("the caller's choice first, then the environment's, else the library's defaults", () => {
    expect(resolveMdnsNetwork(undefined, {})).toEqual({});
    expect(resolveMdnsNetwork({ interface: "192.168.1.5" }, {})).toEqual({
      interface: "192.168.1.5",
      bind: "0.0.0.0",
    });
    expect(resolveMdnsNetwork(undefined, { PAIR_MDNS_INTERFACE: "127.0.0.1" })).toEqual({
      interface: "127.0.0.1",
      bind: "0.0.0.0",
    });
    expect(
      resolveMdnsNetwork({ interface: "10.1.1.1", bind: "10.1.1.1" }, { PAIR_MDNS_INTERFACE: "127.0.0.1" }),
    ).toEqual({ interface: "10.1.1.1", bind: "10.1.1.1" });
  });

  it("the test runner keeps mDNS on loopback for any node not told otherwise", () => {
    expect(resolveMdnsNetwork(undefined)).toEqual({ interface: "127.0.0.1", bind: "0.0.0.0" });
  });
});
