import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalIncarnation,
  formatKey,
  resourceKeyString,
  sameIncarnation,
  sameResource,
  type ResourceKey,
} from "@pair/provision";

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

describe("timestamp incarnations", () => {
  // 1970..2200, whole milliseconds: the precision PAIR compares at.
  const instant = fc.integer({ min: 0, max: 7_258_118_400_000 });
  const subMs = fc.integer({ min: 0, max: 999_999 });

  /** `ms` written the ways providers write it: 0-9 fraction digits (below-ms digits kept), Z or an offset. */
  function spell(ms: number, extra: number, digits: number, offsetMin: number, zulu: "Z" | "+00:00"): string {
    const local = new Date(ms + offsetMin * 60_000).toISOString(); // wall time at that offset
    const fraction = (local.slice(20, 23) + String(extra).padStart(6, "0")).slice(0, digits);
    const stamp = local.slice(0, 19) + (digits > 0 ? `.${fraction}` : "");
    if (offsetMin === 0) return stamp + zulu;
    const sign = offsetMin < 0 ? "-" : "+";
    const abs = Math.abs(offsetMin);
    return `${stamp}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  }

  const key = (incarnation: string): ResourceKey => ({
    provider: "huggingface-endpoint",
    account: "me",
    name: "pair-llama",
    incarnation,
  });

  it("one instant in any precision or offset spelling is one identity", () => {
    fc.assert(
      fc.property(
        instant,
        subMs,
        fc.array(
          fc.record({
            digits: fc.integer({ min: 3, max: 9 }),
            offsetMin: fc.constantFrom(0, 0, 60, -300, 330, -690),
            zulu: fc.constantFrom<"Z" | "+00:00">("Z", "+00:00"),
          }),
          { minLength: 2, maxLength: 5 },
        ),
        (ms, extra, spellings) => {
          const written = spellings.map((s) => spell(ms, extra, s.digits, s.offsetMin, s.zulu));
          for (const w of written) {
            expect(canonicalIncarnation(w)).toBe(new Date(ms).toISOString());
            expect(sameResource(key(written[0]!), key(w))).toBe(true);
            expect(resourceKeyString(key(w))).toBe(resourceKeyString(key(written[0]!)));
          }
        },
      ),
    );
  });

  it("different instants (by a millisecond or more) are different incarnations", () => {
    fc.assert(
      fc.property(instant, instant, subMs, fc.integer({ min: 3, max: 9 }), (a, b, extra, digits) => {
        fc.pre(a !== b);
        const left = key(spell(a, extra, digits, 0, "Z"));
        const right = key(spell(b, extra, 9, 60, "+00:00"));
        expect(sameResource(left, right)).toBe(false);
        expect(resourceKeyString(left)).not.toBe(resourceKeyString(right));
      }),
    );
  });

  it("second precision and opaque ids", () => {
    expect(canonicalIncarnation("2024-05-01T10:00:00Z")).toBe("2024-05-01T10:00:00.000Z");
    expect(canonicalIncarnation("2024-05-01T10:00:00.5+00:00")).toBe("2024-05-01T10:00:00.500Z");
    expect(sameIncarnation("2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00.123Z")).toBe(true);
    // Pod and job ids are not times: kept verbatim, compared exactly.
    expect(canonicalIncarnation("pod-1")).toBe("pod-1");
    expect(sameIncarnation("pod-1", "pod-2")).toBe(false);
    expect(canonicalIncarnation("2024-13-45T99:00:00Z")).toBe("2024-13-45T99:00:00Z");
  });
});
