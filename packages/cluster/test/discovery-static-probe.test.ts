// Who is at a static address, with every hello faked and time in the test's hands: a pinned peer
// only when its pin's hello succeeds; the cheap guesses first, a bounded number per round, each
// other (peer, address) at most once per recheckMs; else the name only (no node id); never itself.
import { clockAt } from "../src/runtime/index.js";
import { describe, expect, it } from "vitest";
import {
  type PinnedPeer,
  parseHostPort,
  type HostPort,
  StaticProber,
  type AddressCheck,
} from "../src/index.js";

const peer = (id: string, name: string, address: string): PinnedPeer =>
  ({ node_id: id.repeat(20), name, fingerprint: id.repeat(64), address }) as PinnedPeer;

const B = peer("b", "pc", "10.0.0.2:14323");
const C = peer("c", "mini", "10.0.0.3:14323");
const D = peer("d", "laptop", "10.0.0.4:14323");
const E = peer("e", "nas", "10.0.0.5:14323");

function at(address: string): HostPort {
  const parsed = parseHostPort(address);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
}

/** `who`: the node id whose pin answers at each address ("refused": nothing listens). `names`: plain-HTTP names. */
function harness(who: Record<string, string>, names: Record<string, string>, peers = [B, C, D, E]) {
  let now = 0;
  const hellos: string[] = [];
  const asked: string[] = [];
  const prober = new StaticProber({
    selfName: "me",
    isSelf: (a) => a.port === 14323 && a.host === "10.0.0.1",
    active: () => peers,
    hello: (p, address): Promise<AddressCheck> => {
      hellos.push(`${p.name}@${address}`);
      if (who[address] === "refused")
        return Promise.resolve({ ok: false, reason: "connection refused", unreachable: true });
      return Promise.resolve(
        who[address] === p.node_id
          ? { ok: true }
          : { ok: false, reason: "another certificate than the pinned one" },
      );
    },
    askName: (a) => {
      const shown = `${a.host}:${a.port}`;
      asked.push(shown);
      return Promise.resolve(names[shown]);
    },
    clock: clockAt(() => now),
    recheckMs: 1_000,
    maxHellos: 3,
  });
  const signal = new AbortController().signal;
  return {
    hellos,
    asked,
    ask: (address: string) => prober.ask(at(address), signal),
    advance: (ms: number) => void (now += ms),
  };
}

describe("StaticProber", () => {
  it("a pinned peer at its recorded address: one hello under its pin, no plain-HTTP question", async () => {
    const h = harness({ "10.0.0.3:14323": C.node_id }, {});
    expect(await h.ask("10.0.0.3:14323")).toEqual({ kind: "pinned", peer: C });
    expect(h.hellos).toEqual(["mini@10.0.0.3:14323"]);
    expect(h.asked).toEqual([]);
  });

  it("a pinned peer at a new address: found by the name its port gives first; later rounds try it first", async () => {
    const h = harness({ "10.0.0.9:15000": D.node_id }, { "10.0.0.9:15000": "laptop" });
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "pinned", peer: D });
    expect(h.hellos).toEqual(["laptop@10.0.0.9:15000"]);
    h.hellos.length = 0;
    h.asked.length = 0;
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "pinned", peer: D });
    expect(h.hellos).toEqual(["laptop@10.0.0.9:15000"]);
    expect(h.asked).toEqual([]);
  });

  it("an unknown node: at most maxHellos per round, each (peer, address) once per recheckMs; listed by name only", async () => {
    const h = harness({}, { "10.0.0.9:15000": "stranger" });
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "named", name: "stranger" });
    expect(h.hellos).toHaveLength(3);
    // The next round tries the one left, not the three that failed.
    h.hellos.length = 0;
    h.advance(100);
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "named", name: "stranger" });
    expect(h.hellos).toEqual(["nas@10.0.0.9:15000"]);
    h.hellos.length = 0;
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "named", name: "stranger" });
    expect(h.hellos).toEqual([]);
    // After recheckMs, again at most three.
    h.advance(1_000);
    await h.ask("10.0.0.9:15000");
    expect(h.hellos).toHaveLength(3);
  });

  it("a port claiming a pinned peer's name with another certificate: its pin is tried first and fails", async () => {
    const h = harness({}, { "10.0.0.9:15000": "pc" });
    expect(await h.ask("10.0.0.9:15000")).toEqual({ kind: "named", name: "pc" });
    expect(h.hellos[0]).toBe("pc@10.0.0.9:15000");
  });

  it("the recorded peer gone and another node there: tried every round, then the others", async () => {
    const h = harness({ "10.0.0.2:14323": E.node_id }, { "10.0.0.2:14323": "nas" });
    expect(await h.ask("10.0.0.2:14323")).toEqual({ kind: "pinned", peer: E });
    expect(h.hellos).toEqual(["pc@10.0.0.2:14323", "nas@10.0.0.2:14323"]);
  });

  it("nothing listening: one refused hello (or none) and no further questions", async () => {
    const h = harness({ "10.0.0.2:14323": "refused" }, {});
    expect(await h.ask("10.0.0.2:14323")).toEqual({ kind: "nobody" });
    expect(h.hellos).toEqual(["pc@10.0.0.2:14323"]);
    expect(h.asked).toEqual([]);
    expect(await h.ask("10.0.0.7:1")).toEqual({ kind: "nobody" });
    expect(h.hellos).toHaveLength(1);
  });

  it("this node itself: by its own address asks nothing; by its own name tries only a pinned namesake", async () => {
    const h = harness({}, { "10.0.0.8:14323": "me" }, [B, C, peer("f", "me", "10.0.0.6:1")]);
    expect(await h.ask("10.0.0.1:14323")).toEqual({ kind: "self" });
    expect(h.hellos).toEqual([]);
    expect(h.asked).toEqual([]);
    expect(await h.ask("10.0.0.8:14323")).toEqual({ kind: "self" });
    expect(h.hellos).toEqual(["me@10.0.0.8:14323"]);
  });
});
