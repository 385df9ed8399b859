// Bad input to the decoders (fast-check, bounded runs): the config loader on random YAML trees and on
// the full example config with one value replaced or the text truncated, and the provider wire
// decoders (Hugging Face endpoints, Runpod pods) on random JSON and on valid answers with one field
// replaced. Each either succeeds or throws its own clear error type — never a TypeError or a hang.
import { readFileSync } from "node:fs";
import { readEndpoint, readEndpointList } from "../../../huggingface/src/wire.js";
import { toEndpoint } from "@pair/huggingface";
import { parsePod, parsePodList, WireShapeError as RunpodShapeError } from "@pair/runpod";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ConfigError, parseConfig } from "../../src/config/index.js";

const RUNS = 200;
const EXAMPLE = readFileSync(new URL("../config/fixtures/every-key.yaml", import.meta.url), "utf8");

/** Every path to a leaf of a JSON tree. */
function leafPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...at, i]));
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...at, k]));
  return [at];
}

function replaced(tree: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  if (Array.isArray(tree))
    return (tree as unknown[]).map((v, i) => (i === head ? replaced(v, rest, leaf) : v));
  const obj = tree as Record<string, unknown>;
  return { ...obj, [head!]: replaced(obj[head!], rest, leaf) };
}

/** A valid tree with one leaf replaced by random JSON. */
function mutated(tree: unknown): fc.Arbitrary<unknown> {
  const paths = leafPaths(tree);
  return fc
    .tuple(fc.constantFrom(...paths), fc.jsonValue())
    .map(([path, leaf]) => replaced(tree, path, leaf));
}

function onlyOwnErrors(run: () => unknown, own: (e: unknown) => boolean): void {
  try {
    run();
  } catch (error) {
    if (!own(error)) throw error;
    expect((error as Error).message.length).toBeGreaterThan(0);
  }
}

describe("config loader on bad input", () => {
  const load = (text: string) =>
    onlyOwnErrors(
      () => parseConfig(text, "fuzz.yaml", { homeDir: "/home/fuzz", hostName: "fuzz" }),
      (e) => e instanceof ConfigError,
    );
  const exampleTree = parseYaml(EXAMPLE) as unknown;

  it(`random YAML trees and texts: ${RUNS} runs, a ConfigError or a config`, () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue().map((v) => stringifyYaml(v)),
          fc.string({ maxLength: 300 }),
          mutated(exampleTree).map((v) => stringifyYaml(v)),
          fc.nat({ max: EXAMPLE.length }).map((n) => EXAMPLE.slice(0, n)),
        ),
        (text) => load(text),
      ),
      { numRuns: RUNS },
    );
  });
});

const WIRE_ENDPOINT = {
  name: "qwen",
  type: "private",
  accountId: null,
  provider: { vendor: "aws", region: "us-east-1" },
  compute: {
    accelerator: "gpu",
    instanceType: "nvidia-l4",
    instanceSize: "x1",
    scaling: { minReplica: 0, maxReplica: 1, scaleToZeroTimeout: 15 },
  },
  model: { repository: "Qwen/Qwen3-0.6B", framework: "pytorch", task: "text-generation", image: {} },
  status: {
    createdAt: "2026-08-01T00:00:00.000000001Z",
    createdBy: { id: "u", name: "alice" },
    updatedAt: "2026-08-01T00:00:00.000Z",
    updatedBy: { id: "u", name: "alice" },
    state: "running",
    message: "Endpoint is running",
    readyReplica: 1,
    targetReplica: 1,
    url: "https://x.endpoints.huggingface.cloud",
  },
};

const POD = {
  id: "pod1",
  name: "pair-1",
  status: "RUNNING",
  actions: ["stop"],
  image: "vllm/vllm-openai:latest",
  env: { A: "b" },
  ports: ["8000/http"],
  gpu: { id: "NVIDIA L4", count: 1 },
  cost: 0.69,
  createdAt: "2026-08-01T00:00:00Z",
};

const isShapeError = (e: unknown) => e instanceof Error && e.name === "WireShapeError";

describe("provider wire decoders on bad input", () => {
  it(`Hugging Face endpoint answers: ${RUNS} runs, decoded or a WireShapeError`, () => {
    expect(() => toEndpoint("alice", readEndpoint(WIRE_ENDPOINT))).not.toThrow();
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), mutated(WIRE_ENDPOINT), mutated({ items: [WIRE_ENDPOINT] })),
        (json) => {
          onlyOwnErrors(() => toEndpoint("alice", readEndpoint(json)), isShapeError);
          onlyOwnErrors(() => readEndpointList(json).items.map((i) => toEndpoint("alice", i)), isShapeError);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`Runpod pod answers: ${RUNS} runs, decoded or a WireShapeError`, () => {
    expect(parsePod(POD).id).toBe("pod1");
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), mutated(POD), mutated({ pods: [POD] })), (json) => {
        onlyOwnErrors(
          () => parsePod(json),
          (e) => e instanceof RunpodShapeError,
        );
        onlyOwnErrors(
          () => parsePodList(json),
          (e) => e instanceof RunpodShapeError,
        );
      }),
      { numRuns: RUNS },
    );
  });
});
