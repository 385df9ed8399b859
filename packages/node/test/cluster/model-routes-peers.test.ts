// Ollama's model routes across paired nodes, through the official `ollama` client: /api/ps lists
// what each node's engines have loaded with the serving node; /api/show and /api/tags pass on the
// engine's answer for a model only a peer serves, the same on every call.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { fastNodes, joinWith, sees, showPin, type TestNode } from "./node-pair-harness.js";
import { cleanupAfterEach } from "../support/eventually.js";
import { ollamaPs } from "../support/ollama-cli.js";

const defer = cleanupAfterEach();
const DETAIL_KEYS = ["families", "family", "format", "parameter_size", "parent_model", "quantization_level"];
const node = fastNodes(defer);

async function paired(a: TestNode, b: TestNode): Promise<void> {
  expect((await joinWith(a, b, await showPin(b))).status).toBe(200);
}

const rowsOf = (models: readonly unknown[]) => models.map((m) => m as Record<string, unknown>);

describe("Ollama model routes across peers", () => {
  it("lists the models loaded on every node, each with its serving node and engine", async () => {
    const laptop = await node("laptop", { models: ["llama3.2:latest"] });
    const tower = await node("tower", {
      models: [{ name: "qwen-7b", contextTokens: 32_768 }],
      engineApi: "openai",
    });
    const studio = await node("studio", { models: ["phi:latest"] });
    await paired(laptop, tower);
    await paired(laptop, studio);
    await sees(laptop, "qwen-7b");
    await sees(laptop, "phi:latest");
    const client = new Ollama({ host: laptop.node.url });
    // Loaded once used, as Ollama does: the chat reaches studio's engine through laptop.
    await client.chat({ model: "phi:latest", messages: [{ role: "user", content: "hi" }] });
    const rows = rowsOf((await client.ps()).models);
    expect(rows.map((r) => [r["node"], r["name"]])).toEqual([
      ["studio", "phi:latest"],
      ["tower", "qwen-7b"],
    ]);
    const phi = rows[0]!;
    expect(phi).toMatchObject({ engine: "studio-ollama" });
    expect(phi["size"]).toBeGreaterThan(0);
    expect(phi["size_vram"]).toBe(phi["size"]);
    expect(Date.parse(String(phi["expires_at"]))).toBeGreaterThan(Date.now());
    const qwen = rows[1]!;
    expect(qwen).toMatchObject({ engine: "tower-openai", context_length: 32_768 });
    expect(qwen["size"]).toBeUndefined();
    // A vLLM-style server never unloads: Ollama's "Forever", more than 20 years ahead.
    expect(Date.parse(String(qwen["expires_at"])) - Date.now()).toBeGreaterThan(20 * 365 * 86_400_000);
    // Ollama's CLI prints the digest's first 12 characters.
    for (const r of rows) expect(String(r["digest"]).length).toBeGreaterThanOrEqual(12);
    // And `ollama ps` decodes the merged answer and prints both rows.
    const printed = ollamaPs(await (await fetch(`${laptop.node.url}/api/ps`)).json());
    expect(printed.map((r) => [r.name, r.until === "Forever"])).toEqual([
      ["phi:latest", false],
      ["qwen-7b", true],
    ]);
  });

  it("shows and lists a model only a peer serves with its engine's answer, the same each time", async () => {
    const laptop = await node("laptop");
    const tower = await node("tower", {
      models: [
        { name: "coder:latest", capabilities: ["completion", "tools", "insert"], template: "{{ .Suffix }}" },
      ],
    });
    await paired(laptop, tower);
    await sees(laptop, "coder:latest");
    const client = new Ollama({ host: laptop.node.url });
    const shown = await client.show({ model: "coder:latest" });
    expect(shown.capabilities).toEqual(["completion", "tools", "insert"]);
    expect(shown.template).toBe("{{ .Suffix }}");
    expect(shown.details).toMatchObject({ family: "emulated", format: "gguf" });
    expect(Object.keys(shown.details).sort()).toEqual(DETAIL_KEYS);
    expect(await client.show({ model: "coder:latest" })).toEqual(shown);
    const { models } = await client.list();
    const coder = models.find((m) => m.name === "coder:latest");
    expect(coder?.size).toBeGreaterThan(0);
    expect(new Date(coder?.modified_at ?? 0).toISOString()).toBe("2025-01-01T00:00:00.000Z");
    expect(coder?.details).toMatchObject({ family: "emulated", parameter_size: "1B" });
    await expect(client.show({ model: "nope" })).rejects.toMatchObject({ status_code: 404 });
  });

  it("shows a peer's OpenAI-engine model with the context window it publishes", async () => {
    const laptop = await node("laptop");
    const tower = await node("tower", {
      models: [{ name: "qwen-7b", contextTokens: 32_768 }],
      engineApi: "openai",
    });
    await paired(laptop, tower);
    await sees(laptop, "qwen-7b");
    const shown = await new Ollama({ host: laptop.node.url }).show({ model: "qwen-7b" });
    expect(shown.capabilities).toEqual(["completion"]);
    const info = shown.model_info as unknown as Record<string, unknown>;
    expect(info[`${String(info["general.architecture"])}.context_length`]).toBe(32_768);
    expect((shown as unknown as Record<string, unknown>)["modified_at"]).toBeUndefined();
    // The engine's created/owned_by reach a client of another node, listed and retrieved.
    const openai = new OpenAI({ baseURL: `${laptop.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const expected = { id: "qwen-7b", object: "model", created: 1_700_000_000, owned_by: "pair-emulator" };
    expect((await openai.models.list()).data).toEqual([expected]);
    expect(await openai.models.retrieve("qwen-7b")).toEqual(expected);
  });
});
