// PeerLinks.link() looks the peer up by node id in an index of the trust store's active peers
// (rebuilt only when that list changes), not by scanning the list on every request: the link is
// found among many peers, follows the store when a peer is unpaired or moves, and is undefined for
// an unknown peer or one without an address.
import { afterEach, describe, expect, it } from "vitest";
import type { PinnedPeer } from "@pair/cluster";
import { PeerLinks } from "../../src/cluster-node/peer-links.js";
import type { PeerMembership } from "../../src/cluster-node/peer-membership.js";
import { makeIdentity, TempDirs } from "../../../cluster/test/cluster-fixtures.js";

const dirs = new TempDirs();
const links: PeerLinks[] = [];
afterEach(async () => {
  for (const l of links.splice(0)) await l.close();
  dirs.removeAll();
});

describe("PeerLinks.link", () => {
  it("finds a peer by id among many, follows the trust store's changes, and ignores unknown peers", async () => {
    const identity = await makeIdentity(dirs, "self");
    const peerIdentity = await makeIdentity(dirs, "peer");
    const record = (i: number, address?: string): PinnedPeer => ({
      node_id: `node-${i}`,
      name: `peer-${i}`,
      cert_pem: peerIdentity.certPem,
      fingerprint: peerIdentity.fingerprint,
      paired_at: "2026-01-15T12:00:00.000Z",
      ...(address === undefined ? {} : { address }),
    });
    let active: readonly PinnedPeer[] = Array.from({ length: 500 }, (_, i) =>
      record(i, `127.0.0.1:${20_000 + i}`),
    );
    // A list whose `find` fails the test: the lookup must not scan it per request.
    const guarded = (list: readonly PinnedPeer[]) =>
      Object.assign([...list], {
        find: () => {
          throw new Error("link() scanned the peer list");
        },
      });
    let current = guarded(active);
    const peerLinks = new PeerLinks({
      identity,
      peers: { active: () => current },
      membership: { onDown: () => () => undefined, timeoutMs: 2_000 } as unknown as PeerMembership,
    });
    links.push(peerLinks);

    const a = peerLinks.link({ nodeId: "node-321" });
    expect(a?.baseUrl.startsWith("https://127.0.0.1:20321")).toBe(true);
    expect(peerLinks.link({ nodeId: "node-321" })).toBe(a);
    expect(peerLinks.link({ nodeId: "nobody" })).toBeUndefined();

    // Unpaired: the next list no longer has it; moved: a new address, a new link.
    active = [
      ...active.filter((p) => p.node_id !== "node-321" && p.node_id !== "node-7"),
      record(7, "127.0.0.1:29999"),
    ];
    current = guarded(active);
    expect(peerLinks.link({ nodeId: "node-321" })).toBeUndefined();
    expect(peerLinks.link({ nodeId: "node-7" })?.baseUrl.startsWith("https://127.0.0.1:29999")).toBe(true);

    // A peer without an address cannot be reached.
    current = guarded([record(1)]);
    expect(peerLinks.link({ nodeId: "node-1" })).toBeUndefined();
  });
});
