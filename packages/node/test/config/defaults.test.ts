// Defaults exactly as docs/reference.md writes them: with no file, an empty file, or empty sections.
import { describe, expect, test } from "vitest";
import { defaultConfig, type PairConfig } from "../../src/config/index.js";
import { HOST, parse } from "./config-fixtures.js";

const EXPECTED: PairConfig = {
  node: {
    name: "ada-laptop",
    dataDir: "/home/ada/.local/share/pair",
    listen: { host: "127.0.0.1", port: 11434 },
    clusterListen: { host: "0.0.0.0", port: 14323 },
    discovery: { mdns: true },
    peers: [],
    apiKeys: [],
    history: { maxRows: 100_000, maxAgeMs: 30 * 86_400_000 },
    allowedHosts: [],
    allowedOrigins: [],
    maxUpstreamBodyBytes: 32 * 1024 * 1024,
  },
  engines: [
    {
      name: "ollama",
      api: "ollama",
      baseUrl: "http://127.0.0.1:11435",
      maxConcurrent: 2,
      probeIntervalMs: 5_000,
      firstByteTimeoutMs: 300_000,
    },
  ],
  rentedNodes: [],
  modelAliases: [],
  providers: {
    huggingface: {
      endpointsApi: "https://api.endpoints.huggingface.cloud",
      hubApi: "https://huggingface.co",
      catalogApi: "https://endpoints.huggingface.co/api/catalog",
    },
    runpod: { api: "https://api.runpod.io", proxyUrl: "https://{pod_id}-{port}.proxy.runpod.net" },
  },
  tls: { extraCaFile: null },
};

describe("defaults", () => {
  test("no file: every default of docs/reference.md, adopting Ollama on 127.0.0.1:11435", () => {
    expect(defaultConfig(HOST)).toStrictEqual(EXPECTED);
  });

  test.each([
    ["an empty file", ""],
    ["comments only", "# nothing here\n"],
    ["empty sections", "node:\nproviders:\ntls:\n"],
    ["empty mappings", "node: {}\nproviders: { huggingface: {}, runpod: {} }\ntls: {}\n"],
    ["null values", "node: { name: null, listen: ~ }\ntls: { extra_ca_file: null }\n"],
  ])("%s gives the defaults", (_label, text) => {
    expect(parse(text)).toStrictEqual(EXPECTED);
  });

  test("the result is deeply frozen", () => {
    const config = parse("");
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.node.listen)).toBe(true);
    expect(Object.isFrozen(config.engines[0])).toBe(true);
  });

  test("engines: [] adopts no engine; an absent key adopts the local Ollama", () => {
    expect(parse("engines: []\n").engines).toEqual([]);
    expect(parse("node: { name: n1 }\n").engines).toEqual(EXPECTED.engines);
  });

  test("engine keys left out take their defaults", () => {
    const [engine] = parse(
      "engines:\n  - { name: vllm, api: openai, base_url: http://localhost:8000/v1 }\n",
    ).engines;
    expect(engine).toStrictEqual({
      name: "vllm",
      api: "openai",
      baseUrl: "http://localhost:8000/v1",
      maxConcurrent: 2,
      probeIntervalMs: 5_000,
      firstByteTimeoutMs: 300_000,
    });
  });

  test("rented-node keys left out take their defaults", () => {
    const [node] = parse(
      "rented_nodes:\n  - { name: hf, provider: huggingface-endpoint, endpoint: alice/l40s, credential: os-credential-store:hf, budget: { unlimited: true } }\n",
    ).rentedNodes;
    expect(node).toStrictEqual({
      provider: "huggingface-endpoint",
      endpoint: { namespace: "alice", name: "l40s" },
      name: "hf",
      credential: { service: "pair", account: "hf" },
      shareWithCluster: false,
      models: [],
      routing: { use: "when-no-local-node" },
      maxConcurrent: 64,
      timeouts: { coldStartMs: 600_000 },
      lifecycle: {
        managed: true,
        wakeOnRequest: true,
        idlePauseMs: 15 * 60_000,
        pauseOnSponsorExit: true,
        exitTimeoutMs: 60_000,
        startupDeadlineMs: 1_800_000,
      },
      budget: { unlimited: true },
    });
  });

  test("managed defaults to true only where PAIR can drive the lifecycle", () => {
    const config = parse(
      [
        "rented_nodes:",
        "  - { name: a, provider: huggingface-endpoint, endpoint: ns/a, credential: os-credential-store:hf, budget: { usd_per_day: 1 } }",
        "  - { name: b, provider: runpod, endpoint: abc123, credential: os-credential-store:runpod/key, budget: { usd_per_day: 1 } }",
        "  - { name: c, provider: openai-compatible, base_url: https://x.example/v1 }",
        "  - { name: d, provider: huggingface-job, base_url: https://j1--8000.hf.jobs/v1, credential: os-credential-store:hf }",
        "  - { name: e, provider: huggingface-providers, credential: os-credential-store:hf }",
        "",
      ].join("\n"),
    );
    expect(config.rentedNodes.map((n) => [n.name, n.lifecycle.managed])).toEqual([
      ["a", true],
      ["b", true],
      ["c", false],
      ["d", false],
      ["e", false],
    ]);
  });

  test("derived defaults: Inference Providers router; a pod by id keeps no URL (the proxy template fills it)", () => {
    const config = parse(
      [
        "rented_nodes:",
        "  - { name: b, provider: runpod, endpoint: abc123, credential: os-credential-store:runpod/key, budget: { usd_per_day: 1 } }",
        "  - { name: e, provider: huggingface-providers, credential: os-credential-store:hf }",
        "",
      ].join("\n"),
    );
    expect(config.rentedNodes.map((n) => ("baseUrl" in n ? n.baseUrl : undefined))).toEqual([
      undefined,
      "https://router.huggingface.co/v1",
    ]);
  });

  test("the default node name is the host name, made a valid name", () => {
    expect(defaultConfig({ homeDir: "/h", hostName: "lab box #3" }).node.name).toBe("lab-box--3");
    expect(defaultConfig({ homeDir: "/h", hostName: "" }).node.name).toBe("pair-node");
    expect(parse("node: { name: node-a }\n").node.name).toBe("node-a");
  });
});
