// `pair status|models|jobs|history` in-process against a node over engine emulators (the e2e harness).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { startCluster, type Cluster } from "../e2e/node-harness.js";
import { processorOf } from "../../src/cli/ps-command.js";
import { runCli, writeConfig } from "./cli-harness.js";
import { chatReply, type ChatRoute } from "../support/chat.js";

/** The `pair jobs` / `pair history --json` fields docs/reference.md promises. */
const WORKLOAD_FIELDS = [
  "id",
  "model",
  "origin_node",
  "serving_node",
  "sponsor",
  "off_lan",
  "status",
  "started_at",
  "first_byte_ms",
  "duration_ms",
  "tokens_in",
  "tokens_out",
  "est_cost_usd",
  "requester",
];

let c: Cluster;
let config: ReturnType<typeof writeConfig>;
/** Between the first two requests and the last one. */
let midIso: string;

const cli = (...argv: string[]) => runCli([...argv, "--config", config.file]);

const chat = (model: string, route?: ChatRoute) =>
  chatReply(c.node.url, { model, route, stream: false }).then((r) => r.status);

beforeAll(async () => {
  c = await startCluster([
    { name: "ollama-1", api: "ollama", models: ["llama3.2:latest", "shared:latest"] },
    { name: "slow-1", api: "openai", models: ["slow-model", "shared:latest"], tokenDelayMs: 40 },
  ]);
  config = writeConfig(
    `node:\n  name: node-a\n  data_dir: ${c.dataDir}\n  listen: 127.0.0.1:${c.node.port}\nengines: []\n`,
  );
  expect(await chat("llama3.2:latest")).toBe(200);
  expect(await chat("nope", "/api/chat")).toBe(404);
  await new Promise((r) => setTimeout(r, 5));
  midIso = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  expect(await chat("shared:latest", "/api/chat")).toBe(200);
});
afterAll(async () => {
  await c.close();
  config.cleanup();
});

describe("pair status", () => {
  it("shows the node, its engines and their models", async () => {
    const r = await cli("status");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^node +node-a {2}\(PAIR 0\.1\.0\)$/m);
    expect(r.stdout).toMatch(new RegExp(`^listen +127\\.0\\.0\\.1:${c.node.port}$`, "m"));
    expect(r.stdout).toMatch(/^ENGINE +API +STATE +IN FLIGHT +BASE URL +MODELS$/m);
    expect(r.stdout).toMatch(
      /^ollama-1 +ollama +up +0\/4 +http:\/\/127\.0\.0\.1:\d+ +llama3\.2:latest, shared:latest$/m,
    );
    expect(r.stdout).toMatch(
      /^slow-1 +openai +up +0\/4 +http:\/\/127\.0\.0\.1:\d+\/v1 +slow-model, shared:latest$/m,
    );
  });

  it("--json prints the admin API's object", async () => {
    const r = await cli("status", "--json");
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ node: "node-a", version: "0.1.0", peers: [], rented_nodes: [] });
    expect((status.engines as { name: string }[]).map((e) => e.name)).toEqual(["ollama-1", "slow-1"]);
  });
});

describe("pair models", () => {
  // The emulated engines' models hold 1,048,576 tokens (their default window).
  it("prints model → nodes, with each node's context window, as an aligned table", async () => {
    const r = await cli("models");
    expect(r).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "MODEL            NODES   CONTEXT",
        "llama3.2:latest  node-a  1048576",
        "shared:latest    node-a  1048576",
        "slow-model       node-a  1048576",
        "",
      ].join("\n"),
    });
  });

  it("--json prints [{model, nodes, context_tokens}]", async () => {
    const r = await cli("models", "--json");
    const window = { "node-a": 1048576 };
    expect(JSON.parse(r.stdout)).toEqual([
      { model: "llama3.2:latest", nodes: ["node-a"], context_tokens: window },
      { model: "shared:latest", nodes: ["node-a"], context_tokens: window },
      { model: "slow-model", nodes: ["node-a"], context_tokens: window },
    ]);
  });
});

describe("pair ps", () => {
  // ollama-1 loaded the two models it was asked for; slow-1 (OpenAI) serves its models while up.
  it("shows what is loaded where, as ollama ps: node, engine, size, processor, until", async () => {
    const r = await cli("ps");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const [header, ...rows] = r.stdout.trimEnd().split("\n");
    expect(header?.split(/\s{2,}/)).toEqual([
      "NAME",
      "NODE",
      "ENGINE",
      "SIZE",
      "PROCESSOR",
      "CONTEXT",
      "UNTIL",
    ]);
    expect(rows).toHaveLength(4);
    expect(rows).toContainEqual(
      expect.stringMatching(
        /^llama3\.2:latest +node-a +ollama-1 +[\d.]+ [KMG]B +100% GPU +\S+ +in \dm\d\ds$/,
      ),
    );
    // An OpenAI-dialect engine keeps what it serves loaded: no size known, never unloaded.
    expect(rows).toContainEqual(
      expect.stringMatching(/^slow-model +node-a +slow-1 +- +- +1048576 +forever$/),
    );
    expect((await runCli(["help", "ps"])).stdout).toMatch(/^Usage: pair ps/);
  });

  it("--json prints /api/ps's models, each with its node and engine", async () => {
    const r = await cli("ps", "--json");
    const models = JSON.parse(r.stdout) as Record<string, unknown>[];
    const direct = (await (await fetch(`${c.node.url}/api/ps`)).json()) as { models: unknown[] };
    expect(models.map((m) => m["name"])).toEqual(direct.models.map((m) => (m as { name: string }).name));
    expect(models.map((m) => `${String(m["engine"])}/${String(m["name"])}`).sort()).toEqual([
      "ollama-1/llama3.2:latest",
      "ollama-1/shared:latest",
      "slow-1/shared:latest",
      "slow-1/slow-model",
    ]);
    expect(models.every((m) => m["node"] === "node-a")).toBe(true);
  });

  it("the processor column is the model's share in GPU memory, as ollama ps prints it", () => {
    expect(processorOf(100, 100)).toBe("100% GPU");
    expect(processorOf(100, 0)).toBe("100% CPU");
    expect(processorOf(100, 75)).toBe("25%/75% CPU/GPU");
    expect(processorOf(undefined, 5)).toBe("-");
  });
});

describe("pair jobs", () => {
  it("shows a running stream while it runs, and nothing once it is done", async () => {
    const res = await fetch(`${c.node.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "slow-model",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk: the workload is running
    try {
      const table = await cli("jobs");
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        /^ID +MODEL +ORIGIN +SERVED BY +ENGINE +STATUS +STARTED +FIRST BYTE +DURATION +TOKENS IN\/OUT +EST\. COST$/,
      );
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(
        /^[0-9a-f]{8} +slow-model +node-a +node-a +slow-1 +running +\d\d:\d\d:\d\d +\d+ ms +\d+ ms +-\/- +\$0$/,
      );
      const json = await cli("jobs", "--json");
      const jobs = JSON.parse(json.stdout) as WorkloadJson[];
      expect(jobs).toHaveLength(1);
      expect(Object.keys(jobs[0]!)).toEqual(expect.arrayContaining(WORKLOAD_FIELDS));
      expect(jobs[0]).toMatchObject({
        model: "slow-model",
        status: "running",
        serving_node: "node-a",
        off_lan: false,
      });
      expect(lines[1]!.startsWith(jobs[0]!.id.slice(0, 8))).toBe(true);
    } finally {
      while (!(await reader.read()).done);
    }
    await expect
      .poll(async () => (await cli("jobs")).stdout)
      .toBe("no workloads running (finished ones: pair history)\n");
    expect((await cli("jobs", "--json")).stdout.trim()).toBe("[]");
  });
});

describe("pair history", () => {
  it("prints finished workloads, newest first, with every column", async () => {
    const r = await cli("history");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^ID +MODEL +ORIGIN +SERVED BY +ENGINE +STATUS +STARTED +FIRST BYTE +DURATION +TOKENS IN\/OUT +EST\. COST$/,
    );
    const body = lines.slice(1).join("\n");
    expect(body).toMatch(
      / llama3\.2:latest +node-a +node-a +ollama-1 +completed +\S+ +\d+ ms +\d+ ms +\d+\/8 +\$0$/m,
    );
    expect(body).toMatch(/ nope +node-a +- +- +failed \(model_not_found\) /m);
  });

  it("--json prints the WorkloadJson fields of docs/reference.md", async () => {
    const r = await cli("history", "--json");
    const history = JSON.parse(r.stdout) as WorkloadJson[];
    expect(history.length).toBeGreaterThanOrEqual(3);
    for (const w of history) expect(Object.keys(w)).toEqual(expect.arrayContaining(WORKLOAD_FIELDS));
    const started = history.map((w) => Date.parse(w.started_at));
    expect(started).toEqual([...started].sort((a, b) => b - a));
    expect(history.find((w) => w.model === "llama3.2:latest")).toMatchObject({
      status: "completed",
      origin_node: "node-a",
      serving_node: "node-a",
      engine: "ollama-1",
      tokens_out: 8,
      est_cost_usd: 0,
      requester: "local",
      off_lan: false,
    });
  });

  it("--since takes an ISO time or a duration back from now", async () => {
    const since = async (...args: string[]) =>
      (JSON.parse((await cli("history", "--json", ...args)).stdout) as WorkloadJson[]).map((w) => w.model);
    expect(await since("--since", midIso)).not.toContain("llama3.2:latest");
    expect(await since("--since", midIso)).toContain("shared:latest");
    expect(await since("--since", "1h")).toEqual(
      expect.arrayContaining(["llama3.2:latest", "nope", "shared:latest"]),
    );
    expect(await since("--since", "2999-01-01T00:00:00Z")).toEqual([]);
    const empty = await cli("history", "--since", "2999-01-01");
    expect(empty).toMatchObject({ code: 0, stdout: "no workloads since 2999-01-01\n" });
  });

  it("--limit caps the rows", async () => {
    const r = await cli("history", "--json", "--limit", "1");
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });
});

describe("the admin token", () => {
  it("a token of another node is refused with what to do", async () => {
    const other = writeConfig((dir) => `node:\n  data_dir: ${dir}\n  listen: 127.0.0.1:${c.node.port}\n`);
    try {
      writeFileSync(join(other.dir, "admin.token"), "not-the-token\n");
      const r = await runCli(["models", "--config", other.file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`refused the admin token from ${join(other.dir, "admin.token")}`);
      expect(r.stderr).toContain("--config");
    } finally {
      other.cleanup();
    }
  });
});
