// `--rent auto` over HTTP: the options read from a batch's OpenAI metadata. Without pair_rent a batch
// never rents (and the other keys are refused alone); the deadline fits the window; the budget is
// above 0; a rental serves the file's one model.
import { describe, expect, it } from "vitest";
import { readRentOptions, type InputLine } from "../../src/batch/index.js";

const line = (model: string, i = 0): InputLine => ({ customId: `c${i}`, model, body: "{}" });
const DAY_S = 86_400;

/** The refusal's message ("" when the options were read). */
const refusal = (read: ReturnType<typeof readRentOptions>): string => (read.ok ? "" : read.message);

describe("readRentOptions", () => {
  it("reads pair_rent auto with its deadline, budget, credential and the file's model", () => {
    const read = readRentOptions(
      { pair_rent: "auto", pair_deadline: "8h", pair_budget_usd: "5", pair_credential: "pair/hf" },
      DAY_S,
      [line("m"), line("m", 1)],
    );
    expect(read).toEqual({
      ok: true,
      rent: { model: "m", deadlineS: 8 * 3600, budgetUsd: 5, credential: "pair/hf" },
    });
    // No deadline: the completion window; no budget: none.
    expect(readRentOptions({ pair_rent: "auto" }, 3600, [line("m")])).toEqual({
      ok: true,
      rent: { model: "m", deadlineS: 3600, budgetUsd: null, credential: null },
    });
  });

  it("never rents without pair_rent", () => {
    expect(readRentOptions(null, DAY_S, [line("m")])).toEqual({ ok: true, rent: undefined });
    expect(readRentOptions({ project: "x" }, DAY_S, [line("m")])).toEqual({ ok: true, rent: undefined });
    const alone = readRentOptions({ pair_budget_usd: "5" }, DAY_S, [line("m")]);
    expect(alone).toMatchObject({ ok: false, message: 'metadata: pair_budget_usd need pair_rent: "auto"' });
  });

  it("refuses a bad value, naming the key", () => {
    const bad = (m: Record<string, string>, lines = [line("m")], windowS = DAY_S) =>
      readRentOptions({ pair_rent: "auto", ...m }, windowS, lines);
    expect(refusal(bad({ pair_rent: "always" }))).toContain("pair_rent");
    expect(refusal(bad({ pair_deadline: "2d" }))).toContain("pair_deadline");
    expect(refusal(bad({ pair_deadline: "soon" }))).toContain("pair_deadline");
    expect(refusal(bad({ pair_budget_usd: "0" }))).toContain("pair_budget_usd");
    expect(refusal(bad({ pair_budget_usd: "five" }))).toContain("pair_budget_usd");
    expect(refusal(bad({}, [line("a"), line("b", 1)]))).toContain("a, b");
    expect(refusal(bad({ pair_model: "other" }))).toContain("other");
  });
});
