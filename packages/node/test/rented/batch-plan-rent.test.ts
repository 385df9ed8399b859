// `pair batch plan` when the cluster alone misses the deadline: each Hugging Face Jobs GPU (the
// emulator's hardware list, with its prices) priced for the file — done in, cost per started minute,
// in time or not, within --budget-usd or not — and the cheapest in time named; with no way to list
// the hardware it says why. The cluster has no history: 20 tokens/s a line, 8 lines at once.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/cli-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { createWorld, type CreateWorld } from "./create-harness.js";

const worlds = keyringWorlds<CreateWorld>();

interface RentJson {
  options: {
    flavor: string;
    seconds: number;
    costUsd: number;
    meetsDeadline: boolean;
    withinBudget: boolean;
  }[];
  recommended: string | null;
}

/** 2,000 lines of 1,000 output tokens: 2,000,000 tokens, 12,500 s for the cluster alone. */
function bigFile(w: CreateWorld): string {
  const file = join(w.dataDir, "..", "night.jsonl");
  const line = (i: number) =>
    JSON.stringify({
      custom_id: `n${i}`,
      method: "POST",
      url: "/v1/chat/completions",
      body: {
        model: "Qwen/Qwen3-0.6B",
        max_tokens: 1_000,
        messages: [{ role: "user", content: "summarise" }],
      },
    });
  writeFileSync(file, Array.from({ length: 2_000 }, (_, i) => line(i)).join("\n") + "\n");
  return file;
}

describe("pair batch plan with rented GPUs", () => {
  it("prices each Jobs GPU for the file and names the cheapest that finishes in time within the budget", async () => {
    const w = worlds.add(await createWorld(worlds.ca));
    await w.start();
    const file = bigFile(w);
    const base = ["batch", "plan", file, "--deadline", "1h", "--config", w.configFile];
    const plan = (...extra: string[]) => runCli([...base, "--credential", w.credential, ...extra]);

    const planned = await plan("--json");
    expect(planned.code, planned.stderr).toBe(0);
    const p = JSON.parse(planned.stdout) as { seconds: number; meetsDeadline: boolean; rent: RentJson };
    expect(p).toMatchObject({ seconds: 12_500, meetsDeadline: false });
    const by = new Map(p.rent.options.map((o) => [o.flavor, o]));
    // T4 (250 tokens/s assumed, after 10 min): 5,244 s, too late; L4 (500): 3,485 s, 59 min × $0.80/h.
    expect(by.get("t4-small")).toMatchObject({ seconds: 5_244, costUsd: 0.59, meetsDeadline: false });
    expect(by.get("l4x1")).toMatchObject({ seconds: 3_485, costUsd: 0.79, meetsDeadline: true });
    expect(by.get("a100-large")).toMatchObject({ seconds: 1_572, costUsd: 1.13, meetsDeadline: true });
    expect([...by.keys()]).not.toContain("cpu-basic"); // CPU flavors are no batch capacity
    expect(p.rent.options.map((o) => o.costUsd)).toEqual(
      [...p.rent.options.map((o) => o.costUsd)].sort((a, b) => a - b),
    );
    expect(p.rent.recommended).toBe("l4x1");

    const table = await plan();
    expect(table.stdout).toContain("past the 60 min deadline");
    expect(table.stdout).toMatch(/l4x1 +L4 +\$0\.80 +500 \(assumed\) +58 min +\$0\.79 +yes/);
    expect(table.stdout).toContain("Cheapest in time: l4x1, done in about 58 min for about $0.79");

    const tight = JSON.parse((await plan("--budget-usd", "0.7", "--json")).stdout) as { rent: RentJson };
    expect(tight.rent.recommended).toBeNull();
    expect(tight.rent.options.find((o) => o.flavor === "l4x1")).toMatchObject({ withinBudget: false });
    expect((await plan("--budget-usd", "0.7")).stdout).toContain(
      "No Jobs GPU finishes it in time within $0.7.",
    );

    const noToken = await runCli([...base, "--credential", "pair/nobody"]);
    expect(noToken.code).toBe(0);
    expect(noToken.stdout).toContain("No rental options: Hugging Face Jobs' hardware could not be listed");
    expect((await plan("--budget-usd", "-1")).code).toBe(2);
  });
});
