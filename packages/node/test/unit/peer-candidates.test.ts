// Peers as routing candidates (issue 13's routing micro-benchmark): a peer's upstream is made once per
// peer, link and request shape and reused, remade when the link changes, never shared between
// requesters, and peers are not looked at while a local engine can take the request.
import { clockAt, SYSTEM_TIMERS } from "@pair/cluster";
import { describe, expect, it } from "vitest";
import {
  candidates,
  type ForwardDeps,
  type ForwardRequest,
  type PeerUpstream,
} from "../../src/server/upstreams.js";

interface Setup {
  deps: ForwardDeps;
  links: { calls: number; dispatcher: object; baseUrl: string | undefined };
}

function setup(localModels: string[] = []): Setup {
  const peers: PeerUpstream[] = [
    { nodeId: "id-a", name: "a", maxConcurrent: 2 },
    { nodeId: "id-b", name: "b", maxConcurrent: 0 },
  ];
  const links = { calls: 0, dispatcher: {}, baseUrl: "https://127.0.0.1:1/route" as string | undefined };
  const spec = {
    name: "e1",
    api: "ollama",
    baseUrl: "http://127.0.0.1/e1",
    maxConcurrent: 1,
    firstByteTimeoutMs: 1,
  };
  const deps = {
    nodeName: "here",
    inventory: {
      serving: (model: string) =>
        localModels.includes(model) ? [{ spec, healthy: true, models: localModels }] : [],
    },
    scheduler: { inFlight: () => 0 },
    dispatcher: {},
    clock: clockAt(() => 0),
    timers: SYSTEM_TIMERS,
    peers: {
      serving: () => peers,
      link: () => {
        links.calls += 1;
        return links.baseUrl === undefined
          ? undefined
          : { dispatcher: links.dispatcher, baseUrl: links.baseUrl };
      },
      markDown: () => undefined,
      sponsoring: () => [],
      firstByteTimeoutMs: 1_000,
    },
  } as unknown as ForwardDeps;
  return { deps, links };
}

function request(requester = "local", route = "/v1/chat/completions"): ForwardRequest {
  return { route, request: { model: "m" }, workload: { requester } } as unknown as ForwardRequest;
}

const pick = (deps: ForwardDeps, fr: ForwardRequest, tried: ReadonlySet<string> = new Set()) =>
  candidates(deps, fr, tried).upstreams;

describe("candidates: peers", () => {
  it("reuses a peer's upstream for the next request of the same shape", () => {
    const { deps } = setup();
    const first = pick(deps, request());
    expect(first.map((u) => [u.id, u.baseUrl, u.maxConcurrent, u.headers])).toEqual([
      ["peer:id-a", "https://127.0.0.1:1/route/v1", 2, { "x-pair-requester": "local" }],
      ["peer:id-b", "https://127.0.0.1:1/route/v1", 1, { "x-pair-requester": "local" }],
    ]);
    const second = pick(deps, request());
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
  });

  it("gives each requester and dialect its own upstream", () => {
    const { deps } = setup();
    const local = pick(deps, request("local"))[0]!;
    const key = pick(deps, request("key-1"))[0]!;
    const ollama = pick(deps, request("local", "/api/chat"))[0]!;
    expect(local.headers).toEqual({ "x-pair-requester": "local" });
    expect(key.headers).toEqual({ "x-pair-requester": "key-1" });
    expect([ollama.api, ollama.baseUrl]).toEqual(["ollama", "https://127.0.0.1:1/route"]);
    expect(pick(deps, request("local"))[0]).toBe(local);
  });

  it("remakes the upstream when the peer's link changes, and skips a peer without one", () => {
    const { deps, links } = setup();
    const before = pick(deps, request())[0]!;
    links.dispatcher = {};
    const afterAgent = pick(deps, request())[0]!;
    expect(afterAgent).not.toBe(before);
    expect(afterAgent.dispatcher).toBe(links.dispatcher);
    links.baseUrl = "https://127.0.0.1:2/route";
    expect(pick(deps, request())[0]!.baseUrl).toBe("https://127.0.0.1:2/route/v1");
    links.baseUrl = undefined;
    expect(pick(deps, request())).toEqual([]);
  });

  it("does not look at peers while a local engine can take the request, and falls back to them", () => {
    const { deps, links } = setup(["m"]);
    expect(pick(deps, request()).map((u) => u.id)).toEqual(["e1"]);
    expect(links.calls).toBe(0);
    expect(pick(deps, request(), new Set(["e1"])).map((u) => u.id)).toEqual(["peer:id-a", "peer:id-b"]);
    expect(pick(deps, request(), new Set(["e1", "peer:id-a"])).map((u) => u.id)).toEqual(["peer:id-b"]);
  });
});
