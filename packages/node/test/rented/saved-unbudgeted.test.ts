// A billed node saved in rented-nodes.json before budgets were required stays managed, held at a
// spent-out cap, instead of being dropped (which would leave a billed endpoint nothing pauses).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attachedRentedConfigs } from "@pair/sponsor";
import { readSavedEntry } from "../../../sponsor/src/registry/attached-configs.js";
import { RENTED_FILE } from "../../../sponsor/src/registry/rented-file.js";
import { readRentedNodeValue } from "../../src/config/index.js";

const saved = {
  name: "gpu-old",
  provider: "huggingface-endpoint",
  endpoint: "ns/old",
  credential: "os-credential-store:pair/hf",
};

let dir: string | undefined;
afterEach(() => dir !== undefined && rmSync(dir, { recursive: true, force: true }));

describe("a saved billed node without a budget", () => {
  it("reads with the smallest daily cap, marked as such", () => {
    const read = readSavedEntry(saved, "sponsor", readRentedNodeValue);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.legacyBudget).toBe(true);
    expect(read.node.budget).toEqual({ budgetMicroUsdPerDay: 1 });
    expect(read.node.lifecycle.managed).toBe(true);
  });

  it("is still among the nodes managed at start; a saved entry with a budget is read as it is", () => {
    dir = mkdtempSync(join(tmpdir(), "pair-saved-"));
    const budgeted = { ...saved, name: "gpu-new", budget: { usd_per_day: 3 } };
    writeFileSync(
      join(dir, RENTED_FILE),
      JSON.stringify({ version: 1, attached: [saved, budgeted], overrides: {} }),
    );
    const configs = attachedRentedConfigs(dir, "sponsor", [], readRentedNodeValue);
    expect(configs.map((c) => [c.name, c.budget])).toEqual([
      ["gpu-old", { budgetMicroUsdPerDay: 1 }],
      ["gpu-new", { budgetMicroUsdPerDay: 3_000_000 }],
    ]);
  });

  it("an entry wrong in another way is still left out", () => {
    expect(readSavedEntry({ ...saved, endpoint: "no-slash" }, "sponsor", readRentedNodeValue).ok).toBe(false);
  });
});
