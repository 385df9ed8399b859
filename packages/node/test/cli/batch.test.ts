// `pair batch` against a real node over an engine emulator: submit a JSONL file and wait, list,
// status, results (output and errors), and the refusals a user meets.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "../e2e/node-harness.js";
import { runCli, writeConfig } from "./cli-harness.js";

let c: Cluster;
let config: ReturnType<typeof writeConfig>;
const cli = (...argv: string[]) => runCli([...argv, "--config", config.file]);

function line(id: string, model = "m1"): string {
  return JSON.stringify({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model, messages: [{ role: "user", content: "hi" }] },
  });
}

beforeAll(async () => {
  c = await startCluster([{ name: "e1", api: "openai", models: ["m1"] }]);
  config = writeConfig(
    `node:\n  name: node-a\n  data_dir: ${c.dataDir}\n  listen: 127.0.0.1:${c.node.port}\nengines: []\n`,
  );
});
afterAll(async () => {
  await c.close();
  config.cleanup();
});

describe("pair batch", () => {
  it("submits and waits, then lists, shows and prints the results", async () => {
    const file = join(config.dir, "in.jsonl");
    writeFileSync(file, [line("a"), line("b"), line("c", "nobody")].join("\n"));
    const submitted = await cli("batch", "submit", file, "--wait", "--json");
    expect(submitted.code, submitted.stderr).toBe(0);
    const batch = JSON.parse(submitted.stdout) as { id: string; status: string; request_counts: unknown };
    expect(batch).toMatchObject({
      status: "completed",
      request_counts: { total: 3, completed: 2, failed: 1 },
    });
    expect(submitted.stderr).toMatch(/3\/3 done \(1 failed\)/);

    const list = await cli("batch", "list");
    expect(list.stdout).toMatch(new RegExp(`${batch.id}\\s+completed\\s+3/3\\s+1`));
    const status = await cli("batch", "status", batch.id);
    expect(status.stdout).toContain(`${batch.id}  completed  3/3 done (1 failed)`);

    const results = await cli("batch", "results", batch.id);
    const ids = results.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { custom_id: string }).custom_id);
    expect(ids).toEqual(["a", "b"]);
    const errors = await cli("batch", "results", batch.id, "--errors");
    expect(errors.stdout).toContain('"custom_id":"c"');
    expect(errors.stdout).toContain("model_not_found");
  });

  it("names what is wrong: a file that cannot run, an unknown batch, a missing argument", async () => {
    const bad = join(config.dir, "bad.jsonl");
    writeFileSync(bad, [line("a"), line("a")].join("\n"));
    const failed = await cli("batch", "submit", bad);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("line 2: duplicate_custom_id");
    const unknown = await cli("batch", "status", "batch_nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("batch_not_found");
    expect((await cli("batch", "status")).code).toBe(2);
    expect((await cli("batch", "frobnicate")).code).toBe(2);
  });

  it("plans: measured rates from history, an assumption where none, whether the deadline holds", async () => {
    // The first test's lines are in history: m1 has a measured rate on node-a.
    const file = join(config.dir, "plan.jsonl");
    const big = (id: string, model: string, maxTokens: number) =>
      JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model, max_tokens: maxTokens, messages: [{ role: "user", content: "x".repeat(400) }] },
      });
    writeFileSync(file, [big("a", "m1", 8), big("b", "m1", 8), big("c", "unseen", 100)].join("\n"));
    const planned = await cli("batch", "plan", file, "--deadline", "90m", "--json");
    expect(planned.code, planned.stderr).toBe(0);
    const p = JSON.parse(planned.stdout) as {
      meetsDeadline: boolean;
      deadlineS: number;
      models: {
        model: string;
        lines: number;
        outputTokens: number;
        inputTokens: number;
        assumed: boolean;
        measured: Record<string, number>;
      }[];
    };
    expect(p.deadlineS).toBe(5400);
    expect(p.meetsDeadline).toBe(true);
    const m1 = p.models.find((m) => m.model === "m1")!;
    expect(m1).toMatchObject({ lines: 2, outputTokens: 16, assumed: false });
    expect(m1.inputTokens).toBeGreaterThan(200);
    expect(Object.keys(m1.measured)).toEqual(["node-a"]);
    expect(p.models.find((m) => m.model === "unseen")).toMatchObject({
      lines: 1,
      outputTokens: 100,
      assumed: true,
    });
    // 100,000 tokens at the assumed 20 tokens/s for one line: 5,000 s, past a 1 h deadline.
    writeFileSync(file, big("slow", "unseen", 100_000));
    const late = await cli("batch", "plan", file, "--deadline", "1h");
    expect(late.code).toBe(0);
    expect(late.stdout).toMatch(/assumed to give 20 tokens\/s/);
    expect(late.stdout).toMatch(/needs about 83 min, past the 60 min deadline/);
    // No Hugging Face token here: the plan says why it lists no GPU to rent.
    expect(late.stdout).toContain("No rental options: Hugging Face Jobs' hardware could not be listed");
  });
});
