// The documented example (docs/reference.md) parses as written, and a file using every key reads into the typed config.
import { describe, expect, test } from "vitest";
import { fixture, parse } from "./config-fixtures.js";

describe("the documented example", () => {
  test("parses and reads as documented", () => {
    const config = parse(fixture("interface-example.yaml"));
    expect(config.node).toMatchObject({
      name: "node-a",
      dataDir: "/home/ada/.local/share/pair",
      listen: { host: "127.0.0.1", port: 11434 },
      clusterListen: { host: "0.0.0.0", port: 14323 },
      discovery: { mdns: true },
      peers: [],
    });
    expect(config.engines).toEqual([
      {
        name: "ollama",
        api: "ollama",
        baseUrl: "http://127.0.0.1:11435",
        maxConcurrent: 2,
        probeIntervalMs: 5_000,
        firstByteTimeoutMs: 300_000,
      },
    ]);
    expect(config.rentedNodes).toEqual([
      {
        provider: "huggingface-endpoint",
        endpoint: { namespace: "<namespace>", name: "<endpoint-name>" },
        name: "hf-l40s",
        credential: { service: "pair", account: "hf" },
        shareWithCluster: false,
        models: [],
        routing: { use: "when-no-local-node" },
        maxConcurrent: 64,
        timeouts: { coldStartMs: 600_000 },
        lifecycle: {
          managed: true,
          wakeOnRequest: true,
          idlePauseMs: 900_000,
          pauseOnSponsorExit: true,
          exitTimeoutMs: 60_000,
          startupDeadlineMs: 1_800_000,
        },
        budget: { budgetMicroUsdPerDay: 10_000_000, budgetMicroUsdPerMonth: 100_000_000 },
      },
    ]);
    expect(config.providers).toEqual({
      huggingface: {
        endpointsApi: "https://api.endpoints.huggingface.cloud",
        hubApi: "https://huggingface.co",
        catalogApi: "https://endpoints.huggingface.co/api/catalog",
      },
      runpod: { api: "https://api.runpod.io", proxyUrl: "https://{pod_id}-{port}.proxy.runpod.net" },
    });
    expect(config.tls).toEqual({ extraCaFile: null });
  });
});

describe("a file with every key", () => {
  const config = parse(fixture("every-key.yaml"));

  test("node", () => {
    expect(config.node).toEqual({
      name: "lab-gpu-1",
      dataDir: "/srv/pair",
      listen: { host: "0.0.0.0", port: 8080 },
      clusterListen: { host: "::", port: 14324 },
      discovery: { mdns: false },
      peers: [
        { host: "192.168.1.20", port: 14323 },
        { host: "node-b.lan", port: 14323 },
        { host: "fe80::1", port: 14323 },
      ],
      apiKeys: [
        { id: "laptop", keyCredential: { service: "pair", account: "api-laptop" } },
        { id: "ci", keyCredential: { service: "pair", account: "ci-bot" } },
      ],
      history: { maxRows: 5000, maxAgeMs: 7.5 * 86_400_000 },
      allowedHosts: ["pair-box.lan", "*.home.arpa", "192.168.1.5"],
      allowedOrigins: ["http://chat.localhost:5173", "https://*.example.com", "*"],
      maxUpstreamBodyBytes: 8 * 1024 * 1024,
    });
  });

  test("engines (URLs normalised without a trailing slash)", () => {
    expect(config.engines).toEqual([
      {
        name: "ollama",
        api: "ollama",
        baseUrl: "http://127.0.0.1:11435",
        maxConcurrent: 4,
        probeIntervalMs: 2_500,
        firstByteTimeoutMs: 90_000,
      },
      {
        name: "vllm",
        api: "openai",
        baseUrl: "https://gpu-box.lan:8443/v1",
        maxConcurrent: 2,
        probeIntervalMs: 5_000,
        firstByteTimeoutMs: 300_000,
      },
    ]);
  });

  test("rented nodes, one per provider", () => {
    const [hf, job, router, pod, own] = config.rentedNodes;
    expect(hf).toEqual({
      provider: "huggingface-endpoint",
      endpoint: { namespace: "alice", name: "llama-l40s" },
      name: "hf-l40s",
      credential: { service: "pair", account: "hf" },
      shareWithCluster: true,
      models: ["meta-llama/Llama-3.1-70B-Instruct"],
      routing: { use: "overflow" },
      maxConcurrent: 8,
      timeouts: { coldStartMs: 500 },
      lifecycle: {
        managed: true,
        wakeOnRequest: false,
        idlePauseMs: 15_000,
        pauseOnSponsorExit: false,
        exitTimeoutMs: 12_500,
        startupDeadlineMs: 2_700_000,
      },
      budget: { budgetMicroUsdPerDay: 100_000, budgetMicroUsdPerMonth: 2_500_000 },
    });
    expect(job).toMatchObject({
      provider: "huggingface-job",
      baseUrl: "https://abc123--8000.hf.jobs/v1",
      lifecycle: { managed: false },
    });
    expect(router).toMatchObject({
      provider: "huggingface-providers",
      baseUrl: "https://router.huggingface.co/v1",
      routing: { use: "never" },
    });
    expect(pod).toMatchObject({
      provider: "runpod",
      podId: "x1y2z3",
      baseUrl: "https://x1y2z3-8000.proxy.runpod.net/v1",
      credential: { service: "runpod", account: "vllm" },
      routing: { use: "prefer" },
      budget: { unlimited: true },
    });
    expect(own).toMatchObject({ provider: "openai-compatible", baseUrl: "http://127.0.0.1:9443/v1" });
    expect(own !== undefined && "credential" in own).toBe(false);
  });

  test("providers and tls (emulators on loopback, ~ expanded)", () => {
    expect(config.providers).toEqual({
      huggingface: {
        endpointsApi: "https://127.0.0.1:9001",
        hubApi: "http://localhost:9002",
        catalogApi: "https://endpoints.huggingface.co/api/catalog",
      },
      runpod: { api: "https://[::1]:9003", proxyUrl: "https://[::1]:9003/proxy/{pod_id}-{port}" },
    });
    expect(config.tls).toEqual({ extraCaFile: "/home/ada/pair-test/ca.pem" });
  });
});
