// `model_aliases:` (issue 8): one name for a model advertised under several names; refused with the
// key's path when a name is in two groups or a group is empty.
import { describe, expect, it } from "vitest";
import { parse, problemsOf, refusal } from "./config-fixtures.js";

describe("model_aliases", () => {
  it("reads each alias with the names it stands for; none by default", () => {
    expect(parse("").modelAliases).toEqual([]);
    const config = parse(
      [
        "model_aliases:",
        '  llama3-8b: ["llama3:8b", meta-llama/Meta-Llama-3-8B-Instruct]',
        "  qwen3: [qwen3:0.6b, Qwen/Qwen3-0.6B, qwen3]",
      ].join("\n"),
    );
    expect(config.modelAliases).toEqual([
      { name: "llama3-8b", models: ["llama3:8b", "meta-llama/Meta-Llama-3-8B-Instruct"] },
      // The alias listed in its own group is not repeated.
      { name: "qwen3", models: ["qwen3:0.6b", "Qwen/Qwen3-0.6B"] },
    ]);
  });

  it("refuses a name in two groups, naming both places", () => {
    const error = refusal(["model_aliases:", "  a: [x, y]", "  b: [z, y]"].join("\n"));
    expect(error.problems).toEqual([
      expect.objectContaining({ path: "model_aliases.b[1]", code: "duplicate_name", line: 3 }),
    ]);
    expect(error.problems[0]?.message).toContain("model_aliases.a");
  });

  it("refuses an alias that is a name of another group", () => {
    expect(problemsOf(["model_aliases:", "  a: [b, c]", "  b: [d]"].join("\n"))).toEqual([
      "model_aliases.b: duplicate_name",
    ]);
  });

  it("refuses empty groups, and what is not a list of names", () => {
    expect(
      problemsOf(["model_aliases:", "  a: []", "  b:", "  c: x", "  d: [1]", "  e: [ok]"].join("\n")),
    ).toEqual([
      "model_aliases.a: invalid_value",
      "model_aliases.b: invalid_value",
      "model_aliases.c: invalid_type",
      "model_aliases.d: invalid_value",
      "model_aliases.d[0]: invalid_type",
    ]);
    expect(problemsOf("model_aliases: [a, b]\n")).toEqual(["model_aliases: invalid_type"]);
  });
});
