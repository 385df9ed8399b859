// The routing policy as a pure function: candidates are plain data, no sockets, no deps. Each
// routing use (`prefer`, `when-no-local-node`, `overflow`, `never` as the sponsor's refusal), the
// warm-then-cheap order, failover past tried candidates, refusals, and extra checks with a reason.
import { describe, expect, it } from "vitest";
import type { RoutingUse } from "../../src/config/index.js";
import type { PairError } from "@pair/dialects";
import {
  selectCandidates,
  sponsoredRefusal,
  type CandidateCheck,
  type RentedOption,
  type RoutingSnapshot,
} from "../../src/server/routing-policy.js";

interface C {
  readonly id: string;
  readonly maxConcurrent: number;
  readonly window?: number;
}

const engine = (id: string, maxConcurrent = 1): C => ({ id, maxConcurrent });
const rented = (
  id: string,
  policy: RoutingUse,
  warm = true,
  price: number | null = null,
): RentedOption<C> => ({
  eligible: true,
  candidate: { id, maxConcurrent: 64 },
  policy,
  warm,
  price,
});
const paused: PairError = { code: "rented_node_paused", message: "gpu is paused", node: "gpu" };

function snapshot(
  s: Partial<RoutingSnapshot<C>> & { peerList?: C[] },
): RoutingSnapshot<C> & { peerCalls: number } {
  const out = {
    local: s.local ?? [],
    peerCalls: 0,
    peers: () => {
      out.peerCalls += 1;
      return s.peerList ?? [];
    },
    rented: s.rented ?? [],
    tried: s.tried ?? new Set<string>(),
    inFlight: s.inFlight ?? (() => 0),
    ...(s.checks === undefined ? {} : { checks: s.checks }),
    ...(s.batch === undefined ? {} : { batch: s.batch }),
  };
  return out;
}

const ids = (s: RoutingSnapshot<C>) => selectCandidates(s).upstreams.map((c) => c.id);

describe("selectCandidates", () => {
  it("serves from local engines, never looking at peers while one is left", () => {
    const s = snapshot({ local: [engine("e1"), engine("e2")], peerList: [engine("peer:a")] });
    expect(ids(s)).toEqual(["e1", "e2"]);
    expect(s.peerCalls).toBe(0);
  });

  it("fails over past tried candidates: local, then peers, then rented when-no-local-node is not reached", () => {
    const base = {
      local: [engine("e1")],
      peerList: [engine("peer:a")],
      rented: [rented("r", "when-no-local-node")],
    };
    expect(ids(snapshot({ ...base, tried: new Set(["e1"]) }))).toEqual(["peer:a"]);
    // The LAN advertises the model: a when-no-local-node node is not used even once all LAN attempts failed.
    expect(ids(snapshot({ ...base, tried: new Set(["e1", "peer:a"]) }))).toEqual([]);
    // Overflow is: every local attempt failed.
    const overflow = { ...base, rented: [rented("r", "overflow")] };
    expect(ids(snapshot({ ...overflow, tried: new Set(["e1", "peer:a"]) }))).toEqual(["r"]);
  });

  it("puts prefer ahead of local, and uses when-no-local-node only without a local node", () => {
    expect(ids(snapshot({ local: [engine("e1")], rented: [rented("r", "prefer")] }))).toEqual(["r"]);
    expect(ids(snapshot({ local: [engine("e1")], rented: [rented("r", "when-no-local-node")] }))).toEqual([
      "e1",
    ]);
    expect(ids(snapshot({ rented: [rented("r", "when-no-local-node")] }))).toEqual(["r"]);
  });

  it("spreads batch work over local engines and peers alike", () => {
    const s = { local: [engine("e1")], peerList: [engine("peer:a")] };
    expect(ids(snapshot(s))).toEqual(["e1"]);
    expect(ids(snapshot({ ...s, batch: true }))).toEqual(["e1", "peer:a"]);
    expect(ids(snapshot({ ...s, batch: true, tried: new Set(["peer:a"]) }))).toEqual(["e1"]);
  });

  it("gives batch work a cold prefer node only once no LAN candidate is left", () => {
    const cold = [rented("r", "prefer", false)];
    expect(ids(snapshot({ local: [engine("e1")], rented: cold }))).toEqual(["r"]);
    expect(ids(snapshot({ local: [engine("e1")], rented: cold, batch: true }))).toEqual(["e1"]);
    expect(ids(snapshot({ peerList: [engine("peer:a")], rented: cold, batch: true }))).toEqual(["peer:a"]);
    expect(
      ids(snapshot({ local: [engine("e1")], rented: cold, batch: true, tried: new Set(["e1"]) })),
    ).toEqual(["r"]);
    expect(ids(snapshot({ rented: cold, batch: true }))).toEqual(["r"]);
    // Warm, it is preferred for batch work as for any request.
    expect(ids(snapshot({ local: [engine("e1")], rented: [rented("r", "prefer")], batch: true }))).toEqual([
      "r",
    ]);
  });

  it("overflows only while every local candidate is at its max_concurrent", () => {
    const local = [engine("e1", 2), engine("e2", 1)];
    const options = [rented("r", "overflow")];
    expect(ids(snapshot({ local, rented: options, inFlight: (id) => (id === "e1" ? 2 : 0) }))).toEqual([
      "e1",
      "e2",
    ]);
    expect(ids(snapshot({ local, rented: options, inFlight: (id) => (id === "e1" ? 2 : 1) }))).toEqual(["r"]);
  });

  it("orders rented candidates warm first, then cheaper, unknown prices last", () => {
    const options = [
      rented("cold-cheap", "when-no-local-node", false, 0.1),
      rented("warm-unpriced", "when-no-local-node", true, null),
      rented("warm-dear", "when-no-local-node", true, 2),
      rented("warm-cheap", "when-no-local-node", true, 0.5),
    ];
    expect(ids(snapshot({ rented: options }))).toEqual([
      "warm-cheap",
      "warm-dear",
      "warm-unpriced",
      "cold-cheap",
    ]);
  });

  it("lists a rented candidate once, and skips one already tried", () => {
    const options = [rented("r", "overflow"), rented("r", "overflow"), rented("s", "overflow")];
    expect(ids(snapshot({ rented: options }))).toEqual(["r", "s"]);
    expect(ids(snapshot({ rented: options, tried: new Set(["r"]) }))).toEqual(["s"]);
  });

  it("gives the first sponsor's refusal when nothing serves, and none while the LAN advertises the model", () => {
    const other: PairError = { code: "rented_node_ineligible", message: "over budget", node: "b" };
    const options: RentedOption<C>[] = [
      { eligible: false, refusal: paused },
      { eligible: false, refusal: other },
    ];
    expect(selectCandidates(snapshot({ rented: options }))).toEqual({ upstreams: [], refusal: paused });
    expect(
      selectCandidates(snapshot({ local: [engine("e1")], rented: options, tried: new Set(["e1"]) })),
    ).toEqual({
      upstreams: [],
    });
    expect(selectCandidates(snapshot({}))).toEqual({ upstreams: [] });
  });

  it("applies extra checks to every kind; a refused candidate does not count as serving", () => {
    const tooSmall: PairError = { code: "invalid_request", message: "the prompt does not fit" };
    const fits: CandidateCheck<C> = {
      reason: "context",
      refuse: (c) => ((c.window ?? 0) < 8_000 ? tooSmall : undefined),
    };
    const big: RentedOption<C> = {
      eligible: true,
      candidate: { id: "big", maxConcurrent: 64, window: 32_000 },
      policy: "when-no-local-node",
      warm: true,
      price: 1,
    };
    const local = [{ id: "small", maxConcurrent: 1, window: 4_000 }];
    // Without the check the local engine serves; with it, the rented node with the bigger window.
    expect(ids(snapshot({ local, rented: [big] }))).toEqual(["small"]);
    expect(ids(snapshot({ local, rented: [big], checks: [fits] }))).toEqual(["big"]);
    expect(selectCandidates(snapshot({ local, checks: [fits] }))).toEqual({
      upstreams: [],
      refusal: tooSmall,
    });
  });
});

describe("sponsoredRefusal", () => {
  const view = { name: "gpu", peer: { name: "a" }, shared: true, eligible: true, reason: null };
  it("refuses an unshared node by its switch, an ineligible one with its sponsor's reason", () => {
    expect(sponsoredRefusal(view, "m")).toBeUndefined();
    expect(sponsoredRefusal({ ...view, shared: false }, "m")).toMatchObject({
      code: "rented_node_not_shared",
      node: "gpu",
      message: expect.stringContaining("pair rented share gpu on") as string,
    });
    expect(sponsoredRefusal({ ...view, eligible: false, reason: "budget reached" }, "m")).toMatchObject({
      code: "rented_node_ineligible",
      message: "rented node gpu (sponsored by a) cannot take requests now: budget reached",
    });
  });
});
