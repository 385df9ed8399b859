// Discovery's decisions with every port faked and time in the test's hands: a sighting moves a
// paired node's address only when the check under its pin succeeds there and not at the old one.
import { describe, expect, it } from "vitest";
import {
  type NodeIdentity,
  type PinnedPeer,
  type RelocateResult,
  startDiscovery,
  type AddressCheck,
  type DiscoveryEvent,
  type MdnsBeaconOptions,
  type MdnsReport,
  VirtualRuntime,
} from "../src/index.js";

const SELF = "aaaaaaaaaaaaaaaaaaaa";
const B = "bbbbbbbbbbbbbbbbbbbb";
const FP = "f".repeat(64);

function harness(answers: Record<string, boolean>) {
  let peer = { node_id: B, name: "pc", fingerprint: FP, address: "10.0.0.2:14323" } as PinnedPeer;
  const runtime = new VirtualRuntime({ wallMs: 0, monoMs: 0 });
  let report: ((r: MdnsReport) => void) | undefined;
  const checks: string[] = [];
  const events: DiscoveryEvent[] = [];
  const moved: string[] = [];
  let beaconStopped = false;
  const discovery = startDiscovery({
    identity: { nodeId: SELF, name: "me" } as NodeIdentity,
    port: 14323,
    trust: {
      active: () => [peer],
      relocate: (nodeId, address, fingerprint): RelocateResult => {
        if (nodeId !== B || fingerprint !== FP) return { ok: false, code: "unknown_peer", message: "no" };
        peer = { ...peer, address };
        return { ok: true, peer, changed: true };
      },
    },
    mdns: {},
    staticPeers: [],
    clock: runtime.clock,
    timers: runtime.timers,
    recheckMs: 1_000,
    startBeacon: (o: MdnsBeaconOptions) => {
      report = o.onReport;
      return { query: () => undefined, stop: () => Promise.resolve(void (beaconStopped = true)) };
    },
    check: (_p, address): Promise<AddressCheck> => {
      checks.push(address);
      return Promise.resolve(answers[address] === true ? { ok: true } : { ok: false, reason: "refused" });
    },
    onMoved: (p) => void moved.push(p.address ?? ""),
    onEvent: (e) => void events.push(e),
  });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    discovery,
    checks,
    events,
    moved,
    address: () => peer.address,
    beaconStopped: () => beaconStopped,
    see: async (port: number, host = "10.0.0.2") => {
      report?.({ seen: [{ nodeId: B, name: "pc", host, port }], gone: [] });
      await settle();
    },
    advance: async (ms: number) => {
      runtime.advance(ms);
      await settle();
    },
  };
}

describe("discovery decisions (faked ports, virtual time)", () => {
  it("moves the address when the old one is silent and the pinned peer answers at the new one", async () => {
    const h = harness({ "10.0.0.2:15000": true });
    await h.see(15000);
    expect(h.checks).toEqual(["10.0.0.2:14323", "10.0.0.2:15000"]);
    expect(h.address()).toBe("10.0.0.2:15000");
    expect(h.moved).toEqual(["10.0.0.2:15000"]);
    await h.discovery.stop();
    expect(h.beaconStopped()).toBe(true);
  });

  it("keeps the address while the peer still answers there (no flapping between two ways in)", async () => {
    const h = harness({ "10.0.0.2:14323": true, "10.0.0.2:15000": true });
    await h.see(15000);
    expect(h.checks).toEqual(["10.0.0.2:14323"]);
    expect(h.address()).toBe("10.0.0.2:14323");
    expect(h.events).toEqual([
      { type: "PeerAddressKept", nodeId: B, address: "10.0.0.2:14323", seenAt: "10.0.0.2:15000" },
    ]);
    await h.discovery.stop();
  });

  it("a sighting that fails the check moves nothing, and is checked again only after recheckMs", async () => {
    const h = harness({});
    await h.see(15000);
    expect(h.address()).toBe("10.0.0.2:14323");
    expect(h.events).toContainEqual({
      type: "PeerAddressRejected",
      nodeId: B,
      address: "10.0.0.2:15000",
      reason: "refused",
    });
    const checked = h.checks.length;
    await h.see(15000);
    await h.advance(999);
    expect(h.checks.length).toBe(checked);
    await h.advance(5_000);
    expect(h.checks.length).toBe(checked + 2);
    expect(h.moved).toEqual([]);
    await h.discovery.stop();
  });
});
