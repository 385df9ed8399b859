// The index of names PAIR stored outside service `pair`: its JSON, what a damaged one reads as, and its limit.
import { describe, expect, it } from "vitest";
import {
  addToIndex,
  decodeIndex,
  encodeIndex,
  INDEX_REF,
  MAX_INDEXED_CREDENTIALS,
  needsIndex,
  removeFromIndex,
} from "../../src/credentials/credential-index.js";

const a = { service: "huggingface", account: "work" };
const b = { service: "runpod", account: "me@example.org" };

describe("credential index", () => {
  it("round-trips names as SERVICE/ACCOUNT", () => {
    const text = encodeIndex([a, b]);
    expect(JSON.parse(text)).toEqual({
      version: 1,
      credentials: ["huggingface/work", "runpod/me@example.org"],
    });
    expect(decodeIndex(text)).toEqual([a, b]);
  });

  it("only names outside service pair need it; its own entry is one no name can take", () => {
    expect(needsIndex({ service: "pair", account: "hf" })).toBe(false);
    expect(needsIndex(a)).toBe(true);
    expect(INDEX_REF).toEqual({ service: "pair", account: ".credential-index" });
  });

  it.each([
    [undefined],
    ["not json"],
    ["null"],
    ['{"version": 2, "credentials": ["x/y"]}'],
    ['{"version": 1, "credentials": "x/y"}'],
  ])("reads %j as empty", (text) => {
    expect(decodeIndex(text)).toEqual([]);
  });

  it("drops entries that are not valid names, belong to service pair, or repeat", () => {
    const text = JSON.stringify({
      version: 1,
      credentials: [
        "huggingface/work",
        7,
        "bare",
        "pair/hf",
        "x/hf_abcdefghijklmnopqrstuvwxyz",
        "huggingface/work",
      ],
    });
    expect(decodeIndex(text)).toEqual([a]);
  });

  it("adds once, removes, and refuses one more than MAX_INDEXED_CREDENTIALS", () => {
    expect(addToIndex([a], a)).toEqual([a]);
    expect(addToIndex([a], b)).toEqual([a, b]);
    expect(removeFromIndex([a, b], a)).toEqual([b]);
    const full = Array.from({ length: MAX_INDEXED_CREDENTIALS }, (_, i) => ({
      service: "s",
      account: `a${i}`,
    }));
    expect(addToIndex(full, b)).toBe("full");
    expect(addToIndex(full, full[3]!)).toHaveLength(MAX_INDEXED_CREDENTIALS);
  });
});
