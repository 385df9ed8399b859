// The key's text: pair_<id>_<43 chars>, ids with "_" included; parsing is total and strict.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { API_KEY_ID_MAX_CHARS, apiKeyIdProblem, formatApiKey, parseApiKey } from "../../src/auth/index.js";

const SECRET = Buffer.alloc(32, 7);
const idArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/).filter((id) => id !== "local");

describe("ids", () => {
  it.each(["laptop", "ci_bot", "a", "A.b-c_d", "x".repeat(API_KEY_ID_MAX_CHARS)])("accepts %s", (id) => {
    expect(apiKeyIdProblem(id)).toBeUndefined();
  });

  it.each(["", "-lead", "_lead", ".lead", "has space", "é", "a/b", "x".repeat(API_KEY_ID_MAX_CHARS + 1)])(
    "refuses %j",
    (id) => {
      expect(apiKeyIdProblem(id)).toMatch(/1 to 63 letters/);
    },
  );

  it("reserves local, the requester of loopback callers without a key", () => {
    expect(apiKeyIdProblem("local")).toMatch(/reserved/);
  });
});

describe("format and parse", () => {
  it("writes pair_<id>_<base64url of 32 bytes>", () => {
    const key = formatApiKey("laptop", SECRET);
    expect(key).toBe(`pair_laptop_${SECRET.toString("base64url")}`);
    expect(key).toMatch(/^pair_laptop_[A-Za-z0-9_-]{43}$/);
  });

  it("reads the id back even when it contains _ and the secret starts with _", () => {
    const secret = Buffer.from(`ff${"00".repeat(31)}`, "hex");
    const bytes = Buffer.alloc(32, 0xff); // base64url "___…_8": nearly all underscores
    for (const s of [secret, bytes]) {
      const key = formatApiKey("ci_bot_2", s);
      expect(parseApiKey(key)).toEqual({ id: "ci_bot_2", secret: s.toString("base64url") });
    }
  });

  it("round-trips every valid id and secret", () => {
    fc.assert(
      fc.property(idArb, fc.uint8Array({ minLength: 32, maxLength: 32 }), (id, secret) => {
        const key = formatApiKey(id, secret);
        expect(parseApiKey(key)).toEqual({ id, secret: Buffer.from(secret).toString("base64url") });
      }),
    );
  });

  it("never throws, and accepts only what it would itself write", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `pair_${s}`),
        ),
        (text) => {
          const parsed = parseApiKey(text);
          if (parsed !== undefined)
            expect(formatApiKey(parsed.id, Buffer.from(parsed.secret, "base64url"))).toBe(text);
        },
      ),
    );
  });

  const good = formatApiKey("laptop", SECRET);
  it.each([
    ["another prefix", good.replace("pair_", "sk-")],
    ["no id", `pair__${SECRET.toString("base64url")}`],
    ["a short secret", good.slice(0, -1)],
    ["a long secret", `${good}A`],
    ["a character outside base64url", `${good.slice(0, -1)}=`],
    ["a non-canonical last character", `${good.slice(0, -1)}${good.endsWith("d") ? "f" : "d"}`],
    ["the reserved id", formatApiKey("local", SECRET)],
    ["an id with a space", `pair_lap top_${SECRET.toString("base64url")}`],
    ["too long", `pair_${"x".repeat(64)}_${SECRET.toString("base64url")}`],
  ])("refuses %s", (_label, text) => {
    expect(parseApiKey(text)).toBeUndefined();
  });

  it("formats only 32-byte secrets", () => {
    expect(() => formatApiKey("a", Buffer.alloc(16))).toThrow(RangeError);
  });
});
