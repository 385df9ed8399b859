// PeerMembership without sockets: injected fetch, timer and clock.
import { describe, expect, it } from "vitest";
import { VirtualRuntime, type NodeIdentity, type PinnedPeer } from "@pair/cluster";
import { PeerLinks } from "../../src/cluster-node/peer-links.js";
import { clockOffsetMs, PeerMembership } from "../../src/cluster-node/peer-membership.js";
import type { PeerInventory } from "../../src/cluster-node/peer-routes.js";

function peer(id: string, address: string | null = "127.0.0.2:14323"): PinnedPeer {
  return {
    node_id: id,
    name: `node-${id}`,
    cert_pem: "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
    fingerprint: `fp-${id}`,
    paired_at: new Date(0).toISOString(),
    ...(address === null ? {} : { address }),
  };
}

function inventory(id: string, models: string[], inFlight = 1): PeerInventory {
  return {
    node_id: id,
    name: `node-${id}`,
    models: models.map((model) => ({ model, engines: 1 })),
    in_flight: inFlight,
    capacity: 4,
    rented: [],
    generated_at: new Date(0).toISOString(),
  };
}

function world() {
  const runtime = new VirtualRuntime({ wallMs: 1_000 });
  const answers = new Map<string, PeerInventory | Error>();
  let active: PinnedPeer[] = [peer("a"), peer("b"), peer("old", null)];
  const asked: string[] = [];
  const m = new PeerMembership({
    identity: {} as NodeIdentity, // not used: fetchInventory replaces the mTLS fetch
    peers: { active: () => active },
    refreshMs: 5_000,
    timeoutMs: 2_000,
    runtime,
    fetchInventory: (p) => {
      asked.push(p.node_id);
      const a = answers.get(p.node_id);
      return a instanceof Error || a === undefined
        ? Promise.reject(a ?? new Error("no answer"))
        : Promise.resolve(a);
    },
  });
  return {
    m,
    answers,
    asked,
    setActive: (peers: PinnedPeer[]) => (active = peers),
    tick: async (ms: number) => {
      runtime.advance(ms);
      await m.refresh();
    },
  };
}

describe("PeerMembership", () => {
  it("polls peers with an address, marks failures down at once and answers up again", async () => {
    const w = world();
    w.answers.set("a", inventory("a", ["llama3.2:latest"]));
    w.answers.set("b", new Error("ECONNREFUSED"));
    await w.m.refresh();
    expect(w.asked.sort()).toEqual(["a", "b"]); // "old" has no address: never polled
    expect(w.m.members().map((v) => [v.node_id, v.state, v.models.map((x) => x.model)])).toEqual([
      ["a", "up", ["llama3.2:latest"]],
      ["b", "down", []],
    ]);
    w.answers.set("a", new Error("timeout"));
    w.answers.set("b", inventory("b", ["qwen"]));
    await w.tick(5_000);
    const views = w.m.members();
    expect(views.find((v) => v.node_id === "a")).toMatchObject({
      state: "down",
      models: [],
      last_error: expect.any(String) as unknown,
    });
    expect(views.find((v) => v.node_id === "b")).toMatchObject({ state: "up", capacity: 4, in_flight: 1 });
    await w.m.stop();
  });

  it("measures each peer's clock against this node's from its answer's generated_at", async () => {
    const w = world();
    // now is 1_000 at the poll (no time passes in the fake fetch): a is 90 s ahead, b 1 s behind.
    w.answers.set("a", { ...inventory("a", ["m"]), generated_at: new Date(91_000).toISOString() });
    w.answers.set("b", { ...inventory("b", ["m"]), generated_at: new Date(0).toISOString() });
    await w.m.refresh();
    expect(w.m.members().map((v) => [v.node_id, v.clock_offset_ms])).toEqual([
      ["a", 90_000],
      ["b", -1_000],
    ]);
    // A peer down keeps its last measure; one that never answered has none.
    w.answers.set("a", new Error("timeout"));
    await w.tick(5_000);
    expect(w.m.members().find((v) => v.node_id === "a")?.clock_offset_ms).toBe(90_000);
    expect(clockOffsetMs("not a time", 0, 0)).toBeUndefined();
    expect(clockOffsetMs(new Date(10_000).toISOString(), 4_000, 6_000)).toBe(5_000);
    await w.m.stop();
  });

  it("refuses an answer from another node id, and forgets an unpaired peer at once", async () => {
    const w = world();
    w.answers.set("a", inventory("someone-else", ["m"]));
    w.answers.set("b", inventory("b", ["m"]));
    await w.m.refresh();
    expect(w.m.members().find((v) => v.node_id === "a")?.state).toBe("down");
    w.setActive([peer("b")]);
    expect(w.m.members().map((v) => v.node_id)).toEqual(["b"]);
    await w.m.stop();
    // Stopped: no more rounds.
    const before = w.asked.length;
    await w.m.refresh();
    expect(w.asked.length).toBe(before);
  });

  it("keeps its view while nothing changed, and builds it again after each change", async () => {
    const w = world();
    w.answers.set("a", inventory("a", ["m"]));
    w.answers.set("b", inventory("b", ["m"]));
    await w.m.refresh();
    const first = w.m.members();
    expect(w.m.members()).toBe(first);
    expect(first.map((v) => v.state)).toEqual(["up", "up"]);

    w.m.markDown("a", "refused");
    expect(w.m.members().map((v) => [v.node_id, v.state, v.last_error ?? null])).toEqual([
      ["a", "down", "refused"],
      ["b", "up", null],
    ]);
    await w.tick(5_000);
    expect(w.m.members().map((v) => v.state)).toEqual(["up", "up"]);
    w.answers.set("b", new Error("ECONNREFUSED"));
    await w.tick(5_000);
    expect(w.m.members().map((v) => v.state)).toEqual(["up", "down"]);
    w.setActive([peer("a")]);
    expect(w.m.members().map((v) => v.node_id)).toEqual(["a"]);
    await w.m.stop();
  });

  it("gives forwarding the up peers serving a model, least loaded first, as the view changes", async () => {
    const w = world();
    w.answers.set("a", inventory("a", ["m", "only-a"], 3));
    w.answers.set("b", inventory("b", ["m"], 1));
    await w.m.refresh();
    const links = new PeerLinks({
      identity: {} as NodeIdentity, // no agent is made: only `serving` is asked
      peers: { active: () => [peer("a"), peer("b")] },
      membership: w.m,
    });
    expect(links.serving("m").map((p) => p.nodeId)).toEqual(["b", "a"]);
    expect(links.serving("only-a")).toEqual([{ nodeId: "a", name: "node-a", maxConcurrent: 4 }]);
    expect(links.serving("nobody")).toEqual([]);
    w.m.markDown("b", "refused");
    expect(links.serving("m").map((p) => p.nodeId)).toEqual(["a"]);
    w.answers.set("a", inventory("a", ["m"], 0));
    await w.tick(5_000);
    expect(links.serving("m").map((p) => p.nodeId)).toEqual(["a", "b"]);
    expect(links.serving("only-a")).toEqual([]);
    await links.close();
    await w.m.stop();
  });

  it("tells onDown listeners of every failed poll and every markDown, and PeerLinks hands them to the right peer's watchers", async () => {
    const w = world();
    w.answers.set("a", inventory("a", ["m"]));
    w.answers.set("b", inventory("b", ["m"]));
    const heard: string[] = [];
    const stop = w.m.onDown((id) => heard.push(id));
    await w.m.refresh();
    expect(heard).toEqual([]); // answers are not news

    const links = new PeerLinks({
      identity: {} as NodeIdentity,
      peers: { active: () => [peer("a"), peer("b")] },
      membership: w.m,
    });
    expect(links.silentMs).toBe(2_000); // the poll's timeout: the window the peer failed to answer in
    const toB: number[] = [];
    const stopB = links.watchDown({ nodeId: "b" }, () => toB.push(1));

    w.answers.set("b", new Error("no answer within 2000 ms"));
    await w.tick(5_000);
    await w.tick(5_000); // still down: heard again (a request that was busy the first time is checked again)
    expect(heard).toEqual(["b", "b"]);
    expect(toB).toHaveLength(2);
    w.m.markDown("a", "refused");
    expect(heard).toEqual(["b", "b", "a"]);
    expect(toB).toHaveLength(2); // a's trouble is not b's

    stopB();
    await w.tick(5_000);
    expect(toB).toHaveLength(2);
    stop();
    await w.tick(5_000);
    expect(heard).toHaveLength(4);
    await links.close();
    await w.m.stop();
  });
});
