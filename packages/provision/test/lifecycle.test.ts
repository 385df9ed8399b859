import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PHASES, TRANSITIONS, canTransition, isTerminal, transition, type Phase } from "@pair/provision";

/** Parse the lifecycle block of docs/contract.md into a table. */
function documentedTable(): Record<string, string[]> {
  const doc = readFileSync(new URL("../../../docs/contract.md", import.meta.url), "utf8");
  const block = /```\n(Declared[\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error("docs/contract.md has no lifecycle block");
  const table: Record<string, string[]> = {};
  for (const line of block.trim().split("\n")) {
    const arrow = /^(\w+)\s+->\s+(.+)$/.exec(line);
    if (arrow !== null) table[arrow[1]!] = arrow[2]!.split("|").map((s) => s.trim());
    const terminal = /^(.+) are terminal$/.exec(line);
    if (terminal !== null) for (const p of terminal[1]!.split(",")) table[p.trim()] = [];
  }
  return table;
}

describe("the lifecycle table", () => {
  it("is exactly the documented diagram", () => {
    const documented = documentedTable();
    expect(Object.keys(documented).sort()).toEqual([...PHASES].sort());
    for (const from of PHASES) expect([...TRANSITIONS[from]].sort()).toEqual([...documented[from]!].sort());
  });

  it("allows every listed edge and refuses every other, with a result", () => {
    let allowed = 0;
    let refused = 0;
    for (const from of PHASES)
      for (const to of PHASES) {
        const result = transition(from, to);
        if (TRANSITIONS[from].includes(to)) {
          expect(result).toEqual({ ok: true, value: to });
          allowed += 1;
        } else {
          expect(result).toEqual({ ok: false, error: { code: "illegal-transition", from, to } });
          refused += 1;
        }
      }
    expect(allowed + refused).toBe(64);
    expect(allowed).toBe(3 + 5 + 4 + 6 + 3);
  });

  it("has Stopped, Cancelled and Disowned as its only terminal phases", () => {
    expect(PHASES.filter(isTerminal)).toEqual<Phase[]>(["Stopped", "Cancelled", "Disowned"]);
  });

  it("reaches Cancelled only from Declared", () => {
    expect(PHASES.filter((p) => canTransition(p, "Cancelled"))).toEqual(["Declared"]);
  });
});
