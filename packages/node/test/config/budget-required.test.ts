// Every node PAIR starts and bills needs a written budget: a cap, or `unlimited: true` said out loud.
// A missing budget is refused at start with budget_required, naming the key path and what to write;
// nodes PAIR only routes to need none; unlimited beside a cap is a contradiction.
import { describe, expect, test } from "vitest";
import { readRentedNodeValue } from "../../src/config/index.js";
import { parse, problemsOf, refusal } from "./config-fixtures.js";

const HF = "provider: huggingface-endpoint, endpoint: ns/e, credential: os-credential-store:hf";
const RUNPOD_ID = "provider: runpod, endpoint: abc123, credential: os-credential-store:rp";
const JOB =
  "provider: huggingface-job, credential: os-credential-store:hf, " +
  "job: { repo: Qwen/Qwen3-0.6B, flavor: l4x1, window_min: 60 }";
const POD =
  "provider: runpod, credential: os-credential-store:rp, vllm_api_key: os-credential-store:v, " +
  "pod: { model: q, vllm_model: Qwen/Qwen3-0.6B, gpu_types: [NVIDIA L4], " +
  "image: vllm/vllm-openai:v0.11.0, api_key_secret: k }";

const node = (body: string) => `rented_nodes:\n  - { name: n, ${body} }\n`;

describe("budget_required", () => {
  test.each([
    ["a managed Hugging Face endpoint (managed by default)", HF],
    ["a Hugging Face endpoint with managed: true", `${HF}, lifecycle: { managed: true }`],
    ["a Runpod pod PAIR creates (pod:)", POD],
    ["a Hugging Face Job PAIR runs (job:)", JOB],
    ["an empty budget", `${HF}, budget: {}`],
    ["unlimited: false", `${HF}, budget: { unlimited: false }`],
  ])("refuses %s with no cap", (_label, body) => {
    expect(problemsOf(node(body))).toEqual(["rented_nodes[0].budget: budget_required"]);
  });

  test("the message names the key path and says what to write", () => {
    const error = refusal(node(HF));
    expect(error.message).toContain("rented_nodes[0].budget: budget_required:");
    expect(error.message).toContain("usd_per_day");
    expect(error.message).toContain("unlimited: true");
  });

  test.each([
    ["a daily cap", `${HF}, budget: { usd_per_day: 2 }`, { budgetMicroUsdPerDay: 2_000_000 }],
    ["a monthly cap", `${RUNPOD_ID}, budget: { usd_per_month: 30 }`, { budgetMicroUsdPerMonth: 30_000_000 }],
    ["unlimited, written down", `${JOB}, budget: { unlimited: true }`, { unlimited: true }],
    [
      "a cap on a pod PAIR creates",
      `${POD}, budget: { usd_per_day: 1 }`,
      { budgetMicroUsdPerDay: 1_000_000 },
    ],
  ])("accepts %s", (_label, body, budget) => {
    expect(parse(node(body)).rentedNodes[0]?.budget).toEqual(budget);
  });

  test.each([
    ["an endpoint PAIR only routes to", `${HF}, lifecycle: { managed: false }`],
    ["a pod attached by id (PAIR routes to it, never starts it)", RUNPOD_ID],
    ["an OpenAI-compatible server", "provider: openai-compatible, base_url: https://x.example/v1"],
    ["Inference Providers", "provider: huggingface-providers, credential: os-credential-store:hf"],
    [
      "a Jobs node reached by its URL",
      "provider: huggingface-job, base_url: https://j--8000.hf.jobs/v1, credential: os-credential-store:hf",
    ],
  ])("needs none for %s (PAIR does not start it)", (_label, body) => {
    expect(parse(node(body)).rentedNodes[0]?.budget).toEqual({});
  });

  test("unlimited beside a cap is refused as a contradiction", () => {
    expect(problemsOf(node(`${HF}, budget: { unlimited: true, usd_per_day: 3 }`))).toEqual([
      "rented_nodes[0].budget.unlimited: invalid_value",
    ]);
    expect(problemsOf(node(`${HF}, budget: { unlimited: true, usd_per_month: 3 }`))).toEqual([
      "rented_nodes[0].budget.unlimited: invalid_value",
    ]);
  });

  test("pair rented attach reads a node by the same rule", () => {
    const refused = readRentedNodeValue(
      { name: "n", provider: "huggingface-endpoint", endpoint: "ns/e", credential: "os-credential-store:hf" },
      "self",
    );
    expect(refused).toMatchObject({ ok: false, problems: [{ path: "budget", code: "budget_required" }] });
    const accepted = readRentedNodeValue(
      {
        name: "n",
        provider: "huggingface-endpoint",
        endpoint: "ns/e",
        credential: "os-credential-store:hf",
        budget: { usd_per_day: 1 },
      },
      "self",
    );
    expect(accepted).toMatchObject({ ok: true, node: { budget: { budgetMicroUsdPerDay: 1_000_000 } } });
  });
});
