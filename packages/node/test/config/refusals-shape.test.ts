// Refusals of the file's shape: unknown keys, wrong types, out-of-range values — each with its path and code.
import { describe, expect, test } from "vitest";
import { problemsOf, rentedNode } from "./config-fixtures.js";

type Case = readonly [label: string, yaml: string, expected: readonly string[]];

const unknownKeys: Case[] = [
  ["a misspelt top-level key", "rented_node: []\n", ["rented_node: unknown_key"]],
  ["a misspelt node key", "node: { lisen: 127.0.0.1:1 }\n", ["node.lisen: unknown_key"]],
  ["a key from another section", "node: { mdns: true }\n", ["node.mdns: unknown_key"]],
  [
    "a misspelt duration",
    rentedNode("timeouts: { cold_start: 5 }"),
    ["rented_nodes[0].timeouts.cold_start: unknown_key"],
  ],
  ["a TLS switch that does not exist", "tls: { verify: false }\n", ["tls.verify: unknown_key"]],
  ["__proto__", "__proto__: { polluted: true }\n", ["__proto__: unknown_key"]],
  ["an odd key, quoted in the path", 'node: { "data dir": /x }\n', ['node["data dir"]: unknown_key']],
];

const wrongTypes: Case[] = [
  ["a list at the top", "- node\n", [": invalid_type"]],
  ["a list for a section", "node: [a]\n", ["node: invalid_type"]],
  ["a number for host:port", "node: { listen: 11434 }\n", ["node.listen: invalid_type"]],
  [
    "yes is a string in YAML 1.2",
    "node: { discovery: { mdns: yes } }\n",
    ["node.discovery.mdns: invalid_type"],
  ],
  ["a mapping for a list", "engines: { name: x }\n", ["engines: invalid_type"]],
  [
    "a quoted number",
    'engines:\n  - { name: o, api: ollama, base_url: "http://127.0.0.1:1", max_concurrent: "2" }\n',
    ["engines[0].max_concurrent: invalid_type"],
  ],
  ["a string for a list", rentedNode("models: gpt-4o"), ["rented_nodes[0].models: invalid_type"]],
  ["a number in a list of strings", rentedNode("models: [1]"), ["rented_nodes[0].models[0]: invalid_type"]],
  ["a number for an enum", rentedNode("routing: { use: 3 }"), ["rented_nodes[0].routing.use: invalid_type"]],
  [
    "a string for a duration",
    rentedNode('timeouts: { cold_start_s: "600" }'),
    ["rented_nodes[0].timeouts.cold_start_s: invalid_type"],
  ],
  ["a list as a key", "? [a, b]\n: 1\n", [": invalid_type"]],
  ["a list for a peer", "node: { peers: [[a]] }\n", ["node.peers[0]: invalid_type"]],
];

const badValues: Case[] = [
  [
    "an allowed host with a port or scheme",
    'node: { allowed_hosts: [box.lan, "box.lan:11434", "http://box.lan"] }\n',
    ["node.allowed_hosts[1]: invalid_value", "node.allowed_hosts[2]: invalid_value"],
  ],
  ["a number as an allowed host", "node: { allowed_hosts: [3] }\n", ["node.allowed_hosts[0]: invalid_type"]],
  [
    "an allowed origin without a scheme, or with a path",
    'node: { allowed_origins: ["http://ok.lan", localhost:3000, "https://app.example/chat"] }\n',
    ["node.allowed_origins[1]: invalid_value", "node.allowed_origins[2]: invalid_value"],
  ],
  [
    "a string for allowed origins",
    "node: { allowed_origins: '*' }\n",
    ["node.allowed_origins: invalid_type"],
  ],
  [
    "a negative duration",
    rentedNode("timeouts: { cold_start_s: -1 }"),
    ["rented_nodes[0].timeouts.cold_start_s: invalid_value"],
  ],
  [
    "an infinite duration",
    rentedNode("lifecycle: { managed: false, idle_pause_min: .inf }"),
    ["rented_nodes[0].lifecycle.idle_pause_min: invalid_value"],
  ],
  [
    "a NaN duration",
    rentedNode("lifecycle: { managed: false, exit_timeout_s: .nan }"),
    ["rented_nodes[0].lifecycle.exit_timeout_s: invalid_value"],
  ],
  [
    "a zero duration",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1, probe_interval_s: 0 }\n",
    ["engines[0].probe_interval_s: invalid_value"],
  ],
  [
    "a duration under 1 ms",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1, first_byte_timeout_s: 0.0001 }\n",
    ["engines[0].first_byte_timeout_s: invalid_value"],
  ],
  [
    "a duration over a week",
    rentedNode("timeouts: { cold_start_s: 1e9 }"),
    ["rented_nodes[0].timeouts.cold_start_s: invalid_value"],
  ],
  [
    "a duration of 1e400 (Infinity)",
    rentedNode("timeouts: { cold_start_s: 1e400 }"),
    ["rented_nodes[0].timeouts.cold_start_s: invalid_value"],
  ],
  [
    "max_concurrent 0",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1, max_concurrent: 0 }\n",
    ["engines[0].max_concurrent: invalid_value"],
  ],
  [
    "max_concurrent 2.5",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:1, max_concurrent: 2.5 }\n",
    ["engines[0].max_concurrent: invalid_value"],
  ],
  ["port 0", "node: { listen: 127.0.0.1:0 }\n", ["node.listen: invalid_value"]],
  ["port 65536", "node: { cluster_listen: 0.0.0.0:65536 }\n", ["node.cluster_listen: invalid_value"]],
  ["a port that is not a number", "node: { listen: 127.0.0.1:http }\n", ["node.listen: invalid_value"]],
  ["no port", "node: { listen: localhost }\n", ["node.listen: invalid_value"]],
  ["a bad IPv4 host", "node: { listen: 999.1.1.1:80 }\n", ["node.listen: invalid_value"]],
  ["an unbracketed IPv6 host", 'node: { listen: "::1:80" }\n', ["node.listen: invalid_value"]],
  [
    "a bad peer",
    "node: { peers: [node-b, 'a b:1'] }\n",
    ["node.peers[0]: invalid_value", "node.peers[1]: invalid_value"],
  ],
  [
    "an ftp URL",
    "engines:\n  - { name: o, api: ollama, base_url: ftp://127.0.0.1/ }\n",
    ["engines[0].base_url: invalid_value"],
  ],
  [
    "a file URL",
    rentedNode("").replace("https://gpu.example.com/v1", "file:///etc/passwd"),
    ["rented_nodes[0].base_url: invalid_value"],
  ],
  [
    "not a URL",
    rentedNode("").replace("https://gpu.example.com/v1", "gpu.example.com/v1"),
    ["rented_nodes[0].base_url: invalid_value"],
  ],
  [
    "a URL with a query",
    rentedNode("").replace("/v1", "/v1?x=1"),
    ["rented_nodes[0].base_url: invalid_value"],
  ],
  [
    "an unknown routing use",
    rentedNode("routing: { use: sometimes }"),
    ["rented_nodes[0].routing.use: invalid_value"],
  ],
  [
    "an unknown provider",
    "rented_nodes:\n  - { name: r, provider: aws, base_url: https://x.example }\n",
    ["rented_nodes[0].provider: invalid_value"],
  ],
  [
    "an unknown engine api",
    "engines:\n  - { name: o, api: llamacpp, base_url: http://127.0.0.1:1 }\n",
    ["engines[0].api: invalid_value"],
  ],
  ["history max_rows 0", "node: { history: { max_rows: 0 } }\n", ["node.history.max_rows: invalid_value"]],
  ["history max_days -1", "node: { history: { max_days: -1 } }\n", ["node.history.max_days: invalid_value"]],
  [
    "an openai engine without /v1",
    "engines:\n  - { name: v, api: openai, base_url: http://127.0.0.1:8000 }\n",
    ["engines[0].base_url: invalid_value"],
  ],
  [
    "an ollama engine with /v1",
    "engines:\n  - { name: o, api: ollama, base_url: http://127.0.0.1:11435/v1 }\n",
    ["engines[0].base_url: invalid_value"],
  ],
  [
    "a provider API with its version",
    "providers: { huggingface: { endpoints_api: https://api.endpoints.huggingface.cloud/v2 } }\n",
    ["providers.huggingface.endpoints_api: invalid_value"],
  ],
  [
    "a pod proxy URL without {pod_id}",
    "providers: { runpod: { proxy_url: 'https://pods.example.com:{port}' } }\n",
    ["providers.runpod.proxy_url: invalid_value"],
  ],
  [
    "a pod proxy URL without {port}",
    "providers: { runpod: { proxy_url: 'https://{pod_id}.proxy.runpod.net' } }\n",
    ["providers.runpod.proxy_url: invalid_value"],
  ],
  [
    "a pod proxy URL with an unknown placeholder",
    "providers: { runpod: { proxy_url: 'https://{pod_id}-{port}.{region}.proxy.runpod.net' } }\n",
    ["providers.runpod.proxy_url: invalid_value"],
  ],
  [
    "a pod proxy URL with a query",
    "providers: { runpod: { proxy_url: 'https://{pod_id}-{port}.proxy.runpod.net/?k=1' } }\n",
    ["providers.runpod.proxy_url: invalid_value"],
  ],
  ["a relative data_dir", "node: { data_dir: data }\n", ["node.data_dir: invalid_value"]],
  ["another user's home", "node: { data_dir: ~bob/pair }\n", ["node.data_dir: invalid_value"]],
  ["a relative CA file", "tls: { extra_ca_file: ca.pem }\n", ["tls.extra_ca_file: invalid_value"]],
  ["a name with a space", "node: { name: node a }\n", ["node.name: invalid_value"]],
  ["a name too long", `node: { name: ${"n".repeat(64)} }\n`, ["node.name: invalid_value"]],
  [
    "a zero budget",
    rentedNode("budget: { usd_per_day: 0 }"),
    ["rented_nodes[0].budget.usd_per_day: invalid_value"],
  ],
  [
    "a negative budget",
    rentedNode("budget: { usd_per_month: -5 }"),
    ["rented_nodes[0].budget.usd_per_month: invalid_value"],
  ],
  [
    "a budget under a micro-dollar",
    rentedNode("budget: { usd_per_day: 1e-9 }"),
    ["rented_nodes[0].budget.usd_per_day: invalid_value"],
  ],
  [
    "an infinite budget",
    rentedNode("budget: { usd_per_day: .inf }"),
    ["rented_nodes[0].budget.usd_per_day: invalid_value"],
  ],
  [
    "managed on an endpoint PAIR cannot manage",
    rentedNode("lifecycle: { managed: true }"),
    ["rented_nodes[0].lifecycle.managed: invalid_value"],
  ],
  [
    "too many models",
    rentedNode(`models: [${Array.from({ length: 1025 }, (_, i) => `m${i}`).join(", ")}]`),
    ["rented_nodes[0].models: invalid_value"],
  ],
];

describe.each([
  ["unknown_key", unknownKeys],
  ["invalid_type", wrongTypes],
  ["invalid_value", badValues],
])("%s", (_code, cases) => {
  test.each(cases)("%s", (_label, yaml, expected) => {
    expect(problemsOf(yaml)).toEqual(expected);
  });
});
