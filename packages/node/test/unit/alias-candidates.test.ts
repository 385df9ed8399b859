// Where a request may go when its model has an alias group (issue 8): this node's engines and peers
// advertising any name of the group are candidates, each to be sent the name it advertises; without
// a group, names are exact.
import { clockAt, SYSTEM_TIMERS } from "@pair/cluster";
import { describe, expect, it } from "vitest";
import type { SponsoredRented } from "../../src/server/forward.js";
import { ModelAliases } from "../../src/server/model-aliases.js";
import {
  candidates,
  type ForwardDeps,
  type ForwardRequest,
  type PeerUpstream,
} from "../../src/server/upstreams.js";

const REPO = "meta-llama/Meta-Llama-3-8B-Instruct";
const aliases = new ModelAliases([{ name: "llama3-8b", models: ["llama3:8b", REPO] }]);

/** This node with engines advertising the given models, and peers (by name) advertising theirs. */
function depsWith(
  engines: Record<string, string[]>,
  peers: Record<string, string[]>,
  withAliases = true,
  sponsored: Record<string, string[]> = {},
): ForwardDeps {
  const specs = Object.entries(engines).map(([name, models]) => ({
    spec: {
      name,
      api: "ollama",
      baseUrl: `http://127.0.0.1/${name}`,
      maxConcurrent: 1,
      firstByteTimeoutMs: 1_000,
    },
    healthy: true,
    models,
  }));
  const peerList: PeerUpstream[] = Object.keys(peers).map((name) => ({
    nodeId: `id-${name}`,
    name,
    maxConcurrent: 2,
  }));
  return {
    nodeName: "here",
    inventory: { serving: (model: string) => specs.filter((s) => s.models.includes(model)) },
    scheduler: { inFlight: () => 0 },
    dispatcher: {},
    clock: clockAt(() => 0),
    timers: SYSTEM_TIMERS,
    ...(withAliases ? { aliases } : {}),
    peers: {
      serving: (model: string) => peerList.filter((p) => peers[p.name]?.includes(model)),
      link: () => ({ dispatcher: {}, baseUrl: "https://127.0.0.1:1/pair/v1/peer/route" }),
      markDown: () => undefined,
      sponsoring: (model: string): SponsoredRented[] =>
        Object.entries(sponsored)
          .filter(([, models]) => models.includes(model))
          .map(([name]) => ({
            peer: peerList[0]!,
            name,
            shared: true,
            eligible: true,
            reason: null,
            policy: "when-no-local-node",
            state: "running",
            usdPerHour: 0.8,
            usdPerMtok: null,
          })),
      firstByteTimeoutMs: 1_000,
    },
  } as unknown as ForwardDeps;
}

function request(model: string): ForwardRequest {
  return {
    route: "/v1/chat/completions",
    request: { model, messages: [] },
    workload: { requester: "local" },
  } as unknown as ForwardRequest;
}

const where = (deps: ForwardDeps, model: string) =>
  candidates(deps, request(model), new Set()).upstreams.map((u) => `${u.label} as ${u.model ?? model}`);

describe("candidates with model aliases", () => {
  it("any name of a group reaches this node's engines advertising another name, sent that name", () => {
    const deps = depsWith({ ollama: ["llama3:8b"], vllm: [REPO], other: ["mistral"] }, {});
    expect(where(deps, "llama3-8b")).toEqual(["engine ollama as llama3:8b", `engine vllm as ${REPO}`]);
    expect(where(deps, REPO)).toEqual([`engine vllm as ${REPO}`, "engine ollama as llama3:8b"]);
    expect(where(deps, "mistral")).toEqual(["engine other as mistral"]);
  });

  it("applies to models peers advertise, and to rented nodes peers sponsor", () => {
    expect(where(depsWith({}, { laptop: ["llama3:8b"] }), "llama3-8b")).toEqual(["node laptop as llama3:8b"]);
    // The peer's shared rented node advertises the repo id: asked for by the alias, sent the repo id.
    expect(where(depsWith({}, { laptop: [] }, true, { "gpu-hf": [REPO] }), "llama3-8b")).toEqual([
      `node laptop as ${REPO}`,
    ]);
  });

  it("this node's engines stay ahead of peers across the names of a group", () => {
    expect(where(depsWith({ ollama: [REPO] }, { laptop: ["llama3:8b"] }), "llama3:8b")).toEqual([
      `engine ollama as ${REPO}`,
    ]);
  });

  it("without aliases, names are exact", () => {
    const deps = depsWith({ ollama: ["llama3:8b"] }, { laptop: [REPO] }, false);
    expect(where(deps, "llama3-8b")).toEqual([]);
    expect(where(deps, REPO)).toEqual([`node laptop as ${REPO}`]);
  });
});
