// The nesting bound of request bodies, counted on bytes before JSON.parse.
import { describe, expect, it } from "vitest";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../../src/http/json-depth.js";

const nested = (depth: number, open = "[", close = "]") =>
  Buffer.from(open.repeat(depth) + close.repeat(depth));

describe("jsonNestsDeeperThan", () => {
  it("admits up to the limit and refuses one more, for arrays and objects", () => {
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = (d: number) => Buffer.from('{"a":'.repeat(d - 1) + "{}" + "}".repeat(d - 1));
    expect(jsonNestsDeeperThan(objects(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestsDeeperThan(objects(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const inString = JSON.stringify({ text: "[".repeat(10_000) + '\\"' + "{".repeat(10_000) });
    expect(jsonNestsDeeperThan(Buffer.from(inString))).toBe(false);
    expect(jsonNestsDeeperThan(Buffer.from(JSON.stringify({ q: 'say "[[[["' })), 2)).toBe(false);
  });

  it("counts depth, not the number of brackets", () => {
    const wide = Buffer.from(JSON.stringify(Array.from({ length: 10_000 }, () => [[1]])));
    expect(jsonNestsDeeperThan(wide)).toBe(false);
  });

  it("sees what overflows the stack today: 200,000 levels in a tool's parameters", () => {
    const deep = `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":${"[".repeat(200_000)}${"]".repeat(200_000)}}}]}`;
    expect(() => JSON.stringify(JSON.parse(deep))).toThrow(RangeError);
    expect(jsonNestsDeeperThan(Buffer.from(deep))).toBe(true);
  });
});
