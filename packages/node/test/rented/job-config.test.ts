// The config of a managed Hugging Face Jobs node (`provider: huggingface-job` with a `job:` section):
// the settings read with units converted, managed and `prefer` by default, secrets as credential
// references; without `job:` it stays a base_url node as before; each refusal named by its path and code.
import { describe, expect, test } from "vitest";
import type { HuggingFaceJobNode } from "../../src/config/index.js";
import { parse, problemsOf } from "../config/config-fixtures.js";

const CRED = "    credential: os-credential-store:pair/hf\n    budget: { usd_per_day: 5 }\n";
const REQUIRED = ["      repo: Qwen/Qwen3-0.6B", "      flavor: l4x1", "      window_min: 120"];

function jobNode(jobLines: readonly string[], extra = CRED): string {
  return `rented_nodes:\n  - name: batch\n    provider: huggingface-job\n${extra}    job:\n${jobLines.join("\n")}\n`;
}

describe("a Hugging Face Jobs node with a job: section", () => {
  test("reads its settings; managed, routing prefer by default", () => {
    const node = parse(
      jobNode([
        ...REQUIRED,
        "      image: vllm/vllm-openai:v0.23.0",
        "      secrets: { HF_TOKEN: 'os-credential-store:pair/hf-read' }",
      ]),
    ).rentedNodes[0] as HuggingFaceJobNode;
    expect(node.provider).toBe("huggingface-job");
    expect(node.job).toEqual({
      repo: "Qwen/Qwen3-0.6B",
      flavor: "l4x1",
      windowMs: 120 * 60_000,
      image: "vllm/vllm-openai:v0.23.0",
      secrets: { HF_TOKEN: { service: "pair", account: "hf-read" } },
    });
    expect(node.lifecycle.managed).toBe(true);
    expect(node.routing).toEqual({ use: "prefer" });
    expect("baseUrl" in node).toBe(false);
  });

  test("routing.use given explicitly wins over prefer", () => {
    const text = jobNode(REQUIRED).replace("    job:\n", "    routing: { use: overflow }\n    job:\n");
    expect(parse(text).rentedNodes[0]?.routing).toEqual({ use: "overflow", explicit: true });
    // Written down even when it is the default: it then holds outside the window too.
    const prefer = jobNode(REQUIRED).replace("    job:\n", "    routing: { use: prefer }\n    job:\n");
    expect(parse(prefer).rentedNodes[0]?.routing).toEqual({ use: "prefer", explicit: true });
  });

  test("without job: it stays a base_url node, routed to and not managed", () => {
    const text =
      "rented_nodes:\n  - { name: j, provider: huggingface-job, base_url: https://abc--8000.hf.jobs/v1, " +
      "credential: os-credential-store:pair/hf, lifecycle: { managed: false } }\n";
    const node = parse(text).rentedNodes[0];
    expect(node).toMatchObject({ provider: "huggingface-job", baseUrl: "https://abc--8000.hf.jobs/v1" });
    expect(node?.routing.use).not.toBe("prefer");
  });

  const cases: [string, string, string[]][] = [
    [
      "no required key",
      jobNode(["      image: x:y"]),
      [
        "rented_nodes[0].job.repo: missing_key",
        "rented_nodes[0].job.flavor: missing_key",
        "rented_nodes[0].job.window_min: missing_key",
      ],
    ],
    [
      "a repo that is not owner/name",
      jobNode(["      repo: qwen", "      flavor: l4x1", "      window_min: 60"]),
      ["rented_nodes[0].job.repo: invalid_value"],
    ],
    [
      "a window longer than a day",
      jobNode(["      repo: a/b", "      flavor: l4x1", "      window_min: 1441"]),
      ["rented_nodes[0].job.window_min: invalid_value"],
    ],
    [
      "a literal secret value",
      jobNode([...REQUIRED, "      secrets: { HF_TOKEN: 12345 }"]),
      ["rented_nodes[0].job.secrets.HF_TOKEN: literal_credential"],
    ],
    [
      "a secret name that is no environment name",
      jobNode([...REQUIRED, "      secrets: { 'bad name': 'os-credential-store:pair/x' }"]),
      ['rented_nodes[0].job.secrets["bad name"]: invalid_value'],
    ],
    [
      "base_url beside job:",
      jobNode(REQUIRED, `${CRED}    base_url: https://x.example/v1\n`),
      ["rented_nodes[0].base_url: invalid_value"],
    ],
    [
      "job: on another provider",
      "rented_nodes:\n  - { name: r, provider: openai-compatible, base_url: https://x.example/v1, job: { repo: a/b } }\n",
      ["rented_nodes[0].job: invalid_value"],
    ],
    [
      "an unknown key in job:",
      jobNode([...REQUIRED, "      timeout: 5"]),
      ["rented_nodes[0].job.timeout: unknown_key"],
    ],
  ];
  test.each(cases)("refuses %s, naming the path", (_name, text, expected) => {
    expect(problemsOf(text)).toEqual(expected);
  });
});
