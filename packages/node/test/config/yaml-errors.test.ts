// A file YAML cannot parse is refused with line and column; every later problem is placed in the file too.
import { describe, expect, test } from "vitest";
import { parse, problemsOf, refusal } from "./config-fixtures.js";

describe("YAML syntax errors", () => {
  test.each([
    ["bad indentation", 3, 1, "node:\n  name: a\n listen: 127.0.0.1:1\n"],
    ["an unclosed quote", 3, 1, "node:\n  name: \'a\n"],
    ["a tab as indentation", 2, 1, "node:\n\tname: a\n"],
    ["a duplicate key", 3, 1, "node: {}\ntls: {}\nnode: {}\n"],
    ["two documents", 2, 1, "node: {}\n---\ntls: {}\n"],
    ["an unclosed flow list", 2, 1, "engines: [\n"],
  ])("%s: line %s, column %s", (_label, line, column, yaml) => {
    const error = refusal(yaml);
    expect(error.problems[0]).toMatchObject({ path: "", code: "yaml_syntax", line, column });
    expect(error.toString().split("\n")[0]).toMatch(
      new RegExp(`^test\\.yaml:${line}:${column}: yaml_syntax: `),
    );
  });

  test("the parser's own code excerpt is not printed", () => {
    const error = refusal("node:\n  name: a\n listen: here-is-some-text\n");
    expect(error.message).not.toContain("here-is-some-text");
    expect(error.message).not.toContain("^");
  });

  test("an alias to no anchor is refused", () => {
    expect(problemsOf("node: *missing\n")).toEqual(["node: yaml_syntax"]);
  });

  test("aliases are followed: an anchored reference serves two nodes", () => {
    const config = parse(
      [
        "rented_nodes:",
        "  - { name: a, provider: huggingface-endpoint, endpoint: ns/a, credential: &hf os-credential-store:hf, budget: &cap { usd_per_day: 1 } }",
        "  - { name: b, provider: huggingface-endpoint, endpoint: ns/b, credential: *hf, budget: *cap }",
        "",
      ].join("\n"),
    );
    expect(config.rentedNodes.map((n) => n.credential)).toEqual([
      { service: "pair", account: "hf" },
      { service: "pair", account: "hf" },
    ]);
  });

  test("alias expansion is bounded (no billion laughs)", () => {
    const names = "abcdefg";
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < names.length; i++) {
      lines.push(
        `${names[i]}: &${names[i]} [${Array(10)
          .fill(`*${names[i - 1]}`)
          .join(", ")}]`,
      );
    }
    const error = refusal(`${lines.join("\n")}\n`);
    expect(error.problems.some((p) => p.code === "yaml_syntax" && p.message.includes("aliases"))).toBe(true);
  });

  test("keys are plain strings: __proto__ is just an unknown key", () => {
    expect(problemsOf("__proto__: { listen: x }\nnode: { __proto__: 1 }\n")).toEqual([
      "__proto__: unknown_key",
      "node.__proto__: unknown_key",
    ]);
    expect(({} as Record<string, unknown>)["listen"]).toBeUndefined();
  });
});

describe("problems carry their position", () => {
  test("an unknown key points at the key; a bad value at the value", () => {
    const error = refusal("node:\n  name: a\n  lisen: x\n  listen: 127.0.0.1:0\n");
    expect(error.problems.map((p) => [p.path, p.line, p.column])).toEqual([
      ["node.lisen", 3, 3],
      ["node.listen", 4, 11],
    ]);
  });

  test("a missing key points at the mapping it is missing from", () => {
    const error = refusal("rented_nodes:\n  - name: r\n    provider: openai-compatible\n");
    expect(error.problems).toEqual([
      expect.objectContaining({ path: "rented_nodes[0].base_url", code: "missing_key", line: 2, column: 5 }),
    ]);
  });
});
