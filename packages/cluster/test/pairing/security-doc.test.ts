// docs/security.md states the PIN phases and the pairing error codes; keep it true to the code.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PAIRING_ERROR_CODES, PIN_TRANSITIONS } from "../../src/pairing/index.js";

const doc = readFileSync(new URL("../../../../docs/security.md", import.meta.url), "utf8");

describe("docs/security.md", () => {
  it("shows exactly the PIN phase table", () => {
    const block = /```\nnone\s+->[\s\S]*?```/.exec(doc)?.[0] ?? "";
    const documented = Object.fromEntries(
      block
        .split("\n")
        .filter((line) => line.includes("->"))
        .map((line) => {
          const [from = "", to = ""] = line.split("->");
          return [from.trim(), to.split("|").map((phase) => phase.trim())];
        }),
    );
    expect(documented).toEqual(PIN_TRANSITIONS);
  });

  it("lists every pairing error code, and no other", () => {
    const listed = [...doc.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    expect(listed).toEqual([...PAIRING_ERROR_CODES]);
  });
});
