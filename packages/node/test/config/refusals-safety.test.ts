// Refusals of unsafe or inconsistent values (insecure URLs, literal secrets, an open client port without
// keys, duplicate names, endpoint vs base_url), what is accepted instead, the messages, and all problems
// of one file at once.
import { describe, expect, test } from "vitest";
import type { ConfigError } from "../../src/config/index.js";
import { parse, problemsOf, refusal, rentedNode } from "./config-fixtures.js";

const HF = "provider: huggingface-endpoint, credential: os-credential-store:hf, budget: { usd_per_day: 5 }";

type Case = readonly [label: string, yaml: string, expected: readonly string[]];

const insecure: Case[] = [
  [
    "http to a LAN rented node",
    rentedNode("").replace("https://gpu.example.com", "http://10.0.0.5"),
    ["rented_nodes[0].base_url: insecure_url"],
  ],
  [
    "http to a LAN engine",
    "engines:\n  - { name: o, api: ollama, base_url: http://192.168.1.10:11434 }\n",
    ["engines[0].base_url: insecure_url"],
  ],
  [
    "http to a provider API",
    "providers: { runpod: { api: http://api.runpod.io } }\n",
    ["providers.runpod.api: insecure_url"],
  ],
  [
    "http to Runpod's pod proxy",
    "providers: { runpod: { proxy_url: 'http://{pod_id}-{port}.proxy.runpod.net' } }\n",
    ["providers.runpod.proxy_url: insecure_url"],
  ],
  [
    "a name that only starts like localhost",
    rentedNode("").replace("https://gpu.example.com", "http://localhost.evil.example"),
    ["rented_nodes[0].base_url: insecure_url"],
  ],
  [
    "http to the unspecified address",
    rentedNode("").replace("https://gpu.example.com", "http://0.0.0.0:80"),
    ["rented_nodes[0].base_url: insecure_url"],
  ],
];

const literals: Case[] = [
  [
    "a token as the credential",
    rentedNode("credential: hf_AbCdEfGhIjKlMnOpQrStUv"),
    ["rented_nodes[0].credential: literal_credential"],
  ],
  [
    "a number as the credential",
    rentedNode("credential: 12345678"),
    ["rented_nodes[0].credential: literal_credential"],
  ],
  [
    "a token in the credential store's name",
    rentedNode("credential: os-credential-store:hf_AbCdEfGhIjKlMnOpQrStUv"),
    ["rented_nodes[0].credential: literal_credential"],
  ],
  [
    "a literal API key",
    "node: { api_keys: [{ id: a, key_credential: s3cr3t-key }] }\n",
    ["node.api_keys[0].key_credential: literal_credential"],
  ],
  [
    "a password in a URL",
    rentedNode("").replace("https://", "https://user:pw@"),
    ["rented_nodes[0].base_url: literal_credential"],
  ],
  [
    "a malformed reference",
    rentedNode("credential: os-credential-store:pair/"),
    ["rented_nodes[0].credential: invalid_value"],
  ],
];

const duplicates: Case[] = [
  [
    "two engines of one name",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1 }\n  - { name: o, api: ollama, base_url: http://127.0.0.1:2 }\n",
    ["engines[1].name: duplicate_name"],
  ],
  [
    "two rented nodes of one name",
    `${rentedNode("")}  - { name: r1, provider: openai-compatible, base_url: https://b.example/v1 }\n`,
    ["rented_nodes[1].name: duplicate_name"],
  ],
  [
    "a rented node named like this node",
    `node: { name: r1 }\n${rentedNode("")}`,
    ["rented_nodes[0].name: duplicate_name"],
  ],
  [
    "two API keys of one id",
    "node: { api_keys: [{ id: a, key_credential: os-credential-store:k1 }, { id: a, key_credential: os-credential-store:k2 }] }\n",
    ["node.api_keys[1].id: duplicate_name"],
  ],
];

const perProvider: Case[] = [
  [
    "huggingface-endpoint with a base_url",
    `rented_nodes:\n  - { name: h, ${HF}, endpoint: ns/e, base_url: https://x.example }\n`,
    ["rented_nodes[0].base_url: invalid_value"],
  ],
  [
    "huggingface-endpoint without an endpoint",
    `rented_nodes:\n  - { name: h, ${HF} }\n`,
    ["rented_nodes[0].endpoint: missing_key"],
  ],
  [
    "an endpoint without a namespace",
    `rented_nodes:\n  - { name: h, ${HF}, endpoint: just-a-name }\n`,
    ["rented_nodes[0].endpoint: invalid_value"],
  ],
  [
    "an endpoint with two slashes",
    `rented_nodes:\n  - { name: h, ${HF}, endpoint: a/b/c }\n`,
    ["rented_nodes[0].endpoint: invalid_value"],
  ],
  [
    "an endpoint named ..",
    `rented_nodes:\n  - { name: h, ${HF}, endpoint: ns/.. }\n`,
    ["rented_nodes[0].endpoint: invalid_value"],
  ],
  [
    "huggingface-endpoint without a credential",
    "rented_nodes:\n  - { name: h, provider: huggingface-endpoint, endpoint: ns/e, budget: { usd_per_day: 5 } }\n",
    ["rented_nodes[0].credential: missing_key"],
  ],
  [
    "openai-compatible without a base_url",
    "rented_nodes:\n  - { name: o, provider: openai-compatible }\n",
    ["rented_nodes[0].base_url: missing_key"],
  ],
  [
    "openai-compatible with an endpoint",
    `${rentedNode("endpoint: ns/e")}`,
    ["rented_nodes[0].endpoint: invalid_value"],
  ],
  [
    "huggingface-job without a base_url",
    "rented_nodes:\n  - { name: j, provider: huggingface-job, credential: os-credential-store:hf }\n",
    ["rented_nodes[0].base_url: missing_key"],
  ],
  [
    "runpod without a pod id",
    "rented_nodes:\n  - { name: p, provider: runpod, credential: os-credential-store:rp, budget: { usd_per_day: 5 } }\n",
    ["rented_nodes[0].endpoint: missing_key"],
  ],
  [
    "runpod with a bad pod id",
    "rented_nodes:\n  - { name: p, provider: runpod, endpoint: Pod-1, credential: os-credential-store:rp, budget: { usd_per_day: 5 } }\n",
    ["rented_nodes[0].endpoint: invalid_value"],
  ],
  [
    "a rented node without name or provider",
    "rented_nodes:\n  - { base_url: https://x.example/v1 }\n",
    ["rented_nodes[0].name: missing_key", "rented_nodes[0].provider: missing_key"],
  ],
  [
    "an engine without api or base_url",
    "engines:\n  - { name: o }\n",
    ["engines[0].api: missing_key", "engines[0].base_url: missing_key"],
  ],
];
describe.each([
  ["insecure_url", insecure],
  ["literal_credential", literals],
  ["duplicate_name", duplicates],
  ["endpoint vs base_url, required keys", perProvider],
])("%s", (_code, cases) => {
  test.each(cases)("%s", (_label, yaml, expected) => {
    expect(problemsOf(yaml)).toEqual(expected);
  });
});

describe("accepted where the rules allow", () => {
  test.each([
    ["http to 127.0.0.0/8", rentedNode("").replace("https://gpu.example.com", "http://127.5.6.7:8080")],
    ["http to ::1", rentedNode("").replace("https://gpu.example.com", "http://[::1]:8080")],
    [
      "http to localhost, any case",
      rentedNode("").replace("https://gpu.example.com", "http://LocalHost:8080"),
    ],
    [
      "http to IPv4-mapped loopback",
      rentedNode("").replace("https://gpu.example.com", "http://[::ffff:127.0.0.1]:8080"),
    ],
    [
      "a non-loopback listen with API keys",
      "node: { listen: 0.0.0.0:11434, api_keys: [{ id: a, key_credential: os-credential-store:k }] }\n",
    ],
    // API keys live in the data dir (`pair apikey create`): the node decides at start (auth_required).
    ["0.0.0.0 without API keys in the config", "node: { listen: 0.0.0.0:11434 }\n"],
    ["[::] without API keys in the config", 'node: { listen: "[::]:11434" }\n'],
    ["a LAN address with an empty list", "node: { listen: 192.168.1.2:11434, api_keys: [] }\n"],
    ["localhost listen without API keys", "node: { listen: localhost:11434 }\n"],
    ["[::1] listen without API keys", 'node: { listen: "[::1]:11434" }\n'],
    ["managed: false on openai-compatible", rentedNode("lifecycle: { managed: false }")],
    ["openai-compatible without a credential", rentedNode("")],
    [
      "an http pod proxy on loopback (the emulator's)",
      "providers: { runpod: { proxy_url: 'http://127.0.0.1:9003/proxy/{pod_id}-{port}' } }\n",
    ],
  ])("%s", (_label, yaml) => {
    expect(() => parse(yaml)).not.toThrow();
  });
});

describe("messages", () => {
  test("the insecure_url line reads as the spec's example", () => {
    const error = refusal(rentedNode("").replace("https://gpu.example.com", "http://10.0.0.5"));
    expect(error.toString()).toContain(
      "rented_nodes[0].base_url: insecure_url: http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost)",
    );
  });

  test("a pod proxy URL template names what it lacks and the key path", () => {
    const error = refusal("providers: { runpod: { proxy_url: 'https://pods.example.com/x' } }\n");
    expect(error.toString()).toContain(
      "providers.runpod.proxy_url: invalid_value: the template needs {pod_id} and {port}",
    );
  });

  test("an unknown key suggests the closest known key, or lists the known ones", () => {
    expect(refusal("rented_node: []\n").problems[0]?.message).toContain('did you mean "rented_nodes"?');
    expect(refusal(rentedNode("timeouts: { cold_start: 5 }")).problems[0]?.message).toContain(
      'did you mean "cold_start_s"?',
    );
    expect(refusal("tls: { verify: false }\n").problems[0]?.message).toContain(
      "known keys here: extra_ca_file",
    );
  });
});

describe("all problems at once", () => {
  const yaml = [
    "node:",
    "  lisen: 127.0.0.1:11434",
    "  listen: 0.0.0.0:11434",
    "  peers: [nohost]",
    "engines:",
    "  - { name: o, api: ollama, base_url: http://192.168.1.10:11434, max_concurrent: 0 }",
    "  - { name: o, api: openai, base_url: http://127.0.0.1:8000/v1 }",
    "rented_nodes:",
    "  - name: r",
    "    provider: openai-compatible",
    "    base_url: http://10.0.0.5/v1",
    "    credential: sk-literal-secret-value",
    "    timeouts: { cold_start_s: -1 }",
    "    budget: { usd_per_day: 0 }",
    "tls: { verify: false }",
    "",
  ].join("\n");

  test("every problem is listed, in file order, with its line", () => {
    const error = refusal(yaml);
    expect(error.problems.map((p) => `${p.line}: ${p.path}: ${p.code}`)).toEqual([
      "2: node.lisen: unknown_key",
      "4: node.peers[0]: invalid_value",
      "6: engines[0].base_url: insecure_url",
      "6: engines[0].max_concurrent: invalid_value",
      "7: engines[1].name: duplicate_name",
      "11: rented_nodes[0].base_url: insecure_url",
      "12: rented_nodes[0].credential: literal_credential",
      "13: rented_nodes[0].timeouts.cold_start_s: invalid_value",
      "14: rented_nodes[0].budget.usd_per_day: invalid_value",
      "15: tls.verify: unknown_key",
    ]);
  });

  test("ConfigError: stable code, one line per problem, a JSON twin", () => {
    const error = refusal(yaml);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("invalid_config");
    expect(error.retryable).toBe(false);
    const lines = error.toString().split("\n");
    expect(lines).toHaveLength(error.problems.length);
    expect(lines[0]).toBe('test.yaml:2:3: node.lisen: unknown_key: unknown key; did you mean "listen"?');
    expect(error.message.split("\n")[0]).toBe(
      "invalid_config: test.yaml: the configuration was refused (10 problems):",
    );
    expect(error.message).toContain(error.toString());
    const json = JSON.parse(JSON.stringify(error)) as ReturnType<ConfigError["toJSON"]>;
    expect(json.code).toBe("invalid_config");
    expect(json.problems).toHaveLength(10);
    expect(json.problems[0]).toEqual({
      path: "node.lisen",
      code: "unknown_key",
      message: 'unknown key; did you mean "listen"?',
      line: 2,
      column: 3,
    });
  });
});
