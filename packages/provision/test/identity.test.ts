import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatKey, sameResource, type ResourceKey } from "@pair/provision";

const part = fc.string({ minLength: 1, maxLength: 6 });
const key = fc.record({ provider: part, account: part, name: part, incarnation: part });

describe("ResourceKey", () => {
  it("equality needs all four parts", () => {
    fc.assert(
      fc.property(
        key,
        fc.constantFrom<keyof ResourceKey>("provider", "account", "name", "incarnation"),
        part,
        (k, field, other) => {
          expect(sameResource(k, { ...k })).toBe(true);
          const changed = { ...k, [field]: other };
          expect(sameResource(k, changed)).toBe(k[field] === other);
        },
      ),
    );
  });

  it("same name, other incarnation is another resource", () => {
    const a = { provider: "runpod", account: "me", name: "pair-llama", incarnation: "pod-1" };
    expect(sameResource(a, { ...a, incarnation: "pod-2" })).toBe(false);
    expect(formatKey(a)).toBe("runpod:me/pair-llama#pod-1");
  });
});
