// The config of a managed Runpod node (`provider: runpod` with a `pod:` section): every setting read in
// snake_case with its defaults, the pod-id attach still working, and each refusal named by the key's
// path and code (a missing key, `--api-key` in vllm_args, a literal vLLM key, both endpoint and pod …).
import { describe, expect, test } from "vitest";
import type { RunpodPodNode } from "../../src/config/index.js";
import { parse, problemsOf, refusal } from "../config/config-fixtures.js";

const REFS =
  "    credential: os-credential-store:pair/runpod\n    vllm_api_key: os-credential-store:pair/vllm\n" +
  "    budget: { usd_per_day: 5 }\n";
const REQUIRED = [
  "      model: qwen",
  "      vllm_model: Qwen/Qwen2.5-7B-Instruct",
  "      gpu_types: [NVIDIA L40S, NVIDIA A40]",
  "      image: vllm/vllm-openai:v0.11.0",
  "      api_key_secret: vllm_key",
];

function podNode(podLines: readonly string[], extra = REFS): string {
  return `rented_nodes:\n  - name: rp\n    provider: runpod\n${extra}    pod:\n${podLines.join("\n")}\n`;
}

describe("a Runpod node with a pod: section", () => {
  test("reads every setting with its defaults", () => {
    const node = parse(podNode(REQUIRED)).rentedNodes[0] as RunpodPodNode;
    expect(node.provider).toBe("runpod");
    expect(node.vllmApiKey).toEqual({ service: "pair", account: "vllm" });
    expect(node.credential).toEqual({ service: "pair", account: "runpod" });
    expect(node.pod).toEqual({
      model: "qwen",
      vllmModel: "Qwen/Qwen2.5-7B-Instruct",
      gpuTypes: ["NVIDIA L40S", "NVIDIA A40"],
      gpuCount: 1,
      cloudType: "SECURE",
      image: "vllm/vllm-openai:v0.11.0",
      containerDiskGb: 50,
      volumeGb: 0,
      dataCenterIds: [],
      vllmArgs: [],
      port: 8000,
      apiKeySecret: "vllm_key",
      startupDeadlineMs: 900_000,
      idleTimeoutMs: 15 * 60_000,
      crashRestartLimit: 3,
      crashWindowMs: 600_000,
    });
  });

  test("reads every optional setting", () => {
    const node = parse(
      podNode([
        ...REQUIRED,
        "      gpu_count: 2",
        "      cloud_type: COMMUNITY",
        "      container_disk_gb: 80",
        "      network_volume_id: vol123",
        "      data_center_ids: [EU-RO-1]",
        "      vllm_args: [--max-model-len, '8192']",
        "      port: 8080",
        "      startup_deadline_s: 1200",
        "      idle_timeout_min: 0.5",
        "      crash_restart_limit: 1",
        "      crash_window_s: 120",
      ]),
    ).rentedNodes[0] as RunpodPodNode;
    expect(node.pod).toMatchObject({
      gpuCount: 2,
      cloudType: "COMMUNITY",
      containerDiskGb: 80,
      networkVolumeId: "vol123",
      dataCenterIds: ["EU-RO-1"],
      vllmArgs: ["--max-model-len", "8192"],
      port: 8080,
      startupDeadlineMs: 1_200_000,
      idleTimeoutMs: 30_000,
      crashRestartLimit: 1,
      crashWindowMs: 120_000,
    });
  });

  test("attaching an existing pod by id keeps working", () => {
    const text =
      "rented_nodes:\n  - { name: p, provider: runpod, endpoint: abc123, credential: os-credential-store:rp, budget: { unlimited: true } }\n";
    expect(parse(text).rentedNodes[0]).toMatchObject({ podId: "abc123" });
    expect(problemsOf(text.replace(" }\n", ", vllm_api_key: os-credential-store:v }\n"))).toEqual([
      "rented_nodes[0].vllm_api_key: invalid_value",
    ]);
  });

  const cases: [string, string, string[]][] = [
    [
      "no required key",
      podNode(["      port: 8000"]),
      [
        "rented_nodes[0].pod.model: missing_key",
        "rented_nodes[0].pod.vllm_model: missing_key",
        "rented_nodes[0].pod.gpu_types: missing_key",
        "rented_nodes[0].pod.image: missing_key",
        "rented_nodes[0].pod.api_key_secret: missing_key",
      ],
    ],
    [
      "--api-key in vllm_args",
      podNode([...REQUIRED, "      vllm_args: [--api-key, sk-x]"]),
      ["rented_nodes[0].pod.vllm_args: invalid_value"],
    ],
    [
      "--served-model-name in vllm_args",
      podNode([...REQUIRED, "      vllm_args: ['--served-model-name=x']"]),
      ["rented_nodes[0].pod.vllm_args: invalid_value"],
    ],
    [
      "no vllm_api_key",
      podNode(REQUIRED, "    credential: os-credential-store:pair/runpod\n    budget: { usd_per_day: 5 }\n"),
      ["rented_nodes[0].vllm_api_key: missing_key"],
    ],
    [
      "no credential",
      podNode(REQUIRED, "    vllm_api_key: os-credential-store:pair/vllm\n    budget: { usd_per_day: 5 }\n"),
      ["rented_nodes[0].credential: missing_key"],
    ],
    [
      "both a pod id and a pod section",
      podNode(REQUIRED, `${REFS}    endpoint: abc123\n`),
      ["rented_nodes[0].endpoint: invalid_value"],
    ],
    [
      "an unknown pod key",
      podNode([...REQUIRED, "      gpu_typ: [x]"]),
      ["rented_nodes[0].pod.gpu_typ: unknown_key"],
    ],
    [
      "an empty GPU list",
      podNode([...REQUIRED.filter((l) => !l.includes("gpu_types")), "      gpu_types: []"]),
      ["rented_nodes[0].pod.gpu_types: invalid_value"],
    ],
    [
      "an unpinned image",
      podNode([...REQUIRED.filter((l) => !l.includes("image")), "      image: vllm/vllm-openai"]),
      ["rented_nodes[0].pod.image: invalid_value"],
    ],
    [
      "a bad cloud type and gpu count",
      podNode([...REQUIRED, "      cloud_type: cheap", "      gpu_count: 9"]),
      ["rented_nodes[0].pod.gpu_count: invalid_value", "rented_nodes[0].pod.cloud_type: invalid_value"],
    ],
    [
      "a volume beside a network volume",
      podNode([...REQUIRED, "      network_volume_id: v1", "      volume_gb: 10"]),
      ["rented_nodes[0].pod.volume_gb: invalid_value"],
    ],
    [
      "managed: false with a pod section",
      podNode(REQUIRED, `${REFS}    lifecycle: { managed: false }\n`),
      ["rented_nodes[0].lifecycle: invalid_value"],
    ],
    [
      "a pod section on another provider",
      "rented_nodes:\n  - { name: h, provider: huggingface-endpoint, endpoint: a/b, credential: os-credential-store:hf, budget: { usd_per_day: 5 }, pod: { model: x } }\n",
      ["rented_nodes[0].pod: invalid_value"],
    ],
  ];
  test.each(cases)("refuses %s", (_label, text, expected) => {
    expect([...problemsOf(text)].sort()).toEqual([...expected].sort());
  });

  test("a vLLM key given as a literal is refused and never echoed", () => {
    const literal = `sk-${"q".repeat(12)}${Date.now().toString(36)}`;
    const error = refusal(
      podNode(
        REQUIRED,
        `    credential: os-credential-store:pair/runpod\n    vllm_api_key: ${literal}\n    budget: { usd_per_day: 5 }\n`,
      ),
    );
    expect(error.problems.map((p) => `${p.path}: ${p.code}`)).toEqual([
      "rented_nodes[0].vllm_api_key: literal_credential",
    ]);
    expect(error.message).not.toContain(literal);
  });
});
