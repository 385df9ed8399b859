// The model routes through the official clients against engine emulators: what each engine says of
// its models (/v1/models, /v1/models/{id}, /api/tags, /api/show, /api/ps) reaches the client; and
// the Ollama timing fields of answers translated from an OpenAI engine.
import { Ollama } from "ollama";
import OpenAI, { NotFoundError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";
import { ollamaLs, ollamaPs } from "../support/ollama-cli.js";

let c: Cluster;
beforeAll(async () => {
  c = await startCluster([
    {
      name: "ollama-1",
      api: "ollama",
      models: [
        { name: "llama3.2:latest", capabilities: ["completion", "tools"], template: "{{ .System }}" },
        "shared:latest",
      ],
    },
    { name: "vllm-1", api: "openai", models: [{ name: "qwen-7b", contextTokens: 32_768 }, "shared:latest"] },
  ]);
});
afterAll(async () => c.close());

const openai = () => new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
const ollama = () => new Ollama({ host: c.node.url });
const EMULATOR_CREATED_S = 1_700_000_000;
const EMULATOR_MODIFIED_AT = "2025-01-01T00:00:00Z";
const DETAIL_KEYS = ["families", "family", "format", "parameter_size", "parent_model", "quantization_level"];

describe("OpenAI model routes", () => {
  it("keeps the engine's created and owned_by, or derives created from Ollama's modified_at", async () => {
    const { data } = await openai().models.list();
    const byId = new Map(data.map((m) => [m.id, m]));
    expect(byId.get("qwen-7b")).toEqual({
      id: "qwen-7b",
      object: "model",
      created: EMULATOR_CREATED_S,
      owned_by: "pair-emulator",
    });
    expect(byId.get("llama3.2:latest")).toMatchObject({
      created: Date.parse(EMULATOR_MODIFIED_AT) / 1000,
      owned_by: "pair",
    });
  });

  it("retrieves one model, its id URL-encoded by the client", async () => {
    expect(await openai().models.retrieve("llama3.2:latest")).toMatchObject({
      id: "llama3.2:latest",
      object: "model",
    });
    expect((await openai().models.retrieve("qwen-7b")).created).toBe(EMULATOR_CREATED_S);
  });

  it("answers model_not_found in OpenAI's envelope for a model no node serves", async () => {
    const err = await openai()
      .models.retrieve("nope")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).code).toBe("model_not_found");
  });
});

describe("Ollama model routes", () => {
  it("lists tags with the Ollama engine's size, digest, date and details; none invented", async () => {
    const { models } = await ollama().list();
    const llama = models.find((m) => m.name === "llama3.2:latest");
    expect(llama?.size).toBeGreaterThan(0);
    expect(llama?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(new Date(llama?.modified_at ?? 0).toISOString()).toBe("2025-01-01T00:00:00.000Z");
    expect(llama?.details).toMatchObject({ family: "emulated", format: "gguf", parameter_size: "1B" });
    const qwen = models.find((m) => m.name === "qwen-7b") as unknown as Record<string, unknown>;
    expect(qwen["size"]).toBeUndefined();
    expect(qwen["modified_at"]).toBeUndefined();
    expect(qwen["digest"]).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(qwen["details"] as object).sort()).toEqual(DETAIL_KEYS);
  });

  it("takes a model several engines serve from the first engine in config order", async () => {
    const { models } = await ollama().list();
    const shared = models.find((m) => m.name === "shared:latest");
    expect(shared?.details.family).toBe("emulated");
    expect(shared?.size).toBeGreaterThan(0);
  });

  it("shows an Ollama engine's capabilities, template, details and model_info", async () => {
    const shown = await ollama().show({ model: "llama3.2:latest" });
    expect(shown.capabilities).toEqual(["completion", "tools"]);
    expect(shown.template).toBe("{{ .System }}");
    expect(shown.details).toMatchObject({ family: "emulated", quantization_level: "Q4_0" });
    expect(shown.model_info).toMatchObject({ "general.architecture": "emulated" });
  });

  it("shows an OpenAI engine's model with its context window and every details key", async () => {
    const shown = await ollama().show({ model: "qwen-7b" });
    expect(shown.capabilities).toEqual(["completion"]);
    expect(Object.keys(shown.details).sort()).toEqual(DETAIL_KEYS);
    const info = shown.model_info as unknown as Record<string, unknown>;
    expect(info[`${String(info["general.architecture"])}.context_length`]).toBe(32_768);
    expect((shown as unknown as Record<string, unknown>)["modified_at"]).toBeUndefined();
  });

  it("answers 404 for a model no node serves", async () => {
    await expect(ollama().show({ model: "nope" })).rejects.toMatchObject({ status_code: 404 });
  });

  it("lists loaded models: the Ollama engine's own /api/ps and the OpenAI engine's served models", async () => {
    await ollama().chat({ model: "llama3.2:latest", messages: [{ role: "user", content: "hi" }] });
    const { models } = await ollama().ps();
    const rows = models.map((m) => m as unknown as Record<string, unknown>);
    const llama = rows.find((m) => m["name"] === "llama3.2:latest");
    expect(llama).toMatchObject({ node: "node-a", engine: "ollama-1" });
    expect(llama?.["size_vram"]).toBe(llama?.["size"]);
    expect(Date.parse(String(llama?.["expires_at"]))).toBeGreaterThan(Date.now());
    // Loaded only once used, as Ollama does.
    expect(rows.some((m) => m["engine"] === "ollama-1" && m["name"] === "shared:latest")).toBe(false);
    const qwen = rows.find((m) => m["name"] === "qwen-7b");
    expect(qwen).toMatchObject({ engine: "vllm-1", context_length: 32_768 });
    expect(qwen?.["size"]).toBeUndefined();
    expect(String(qwen?.["digest"]).length).toBeGreaterThanOrEqual(12);
    // Never unloaded while served: Ollama's own far-future instant, which its CLI shows as "Forever".
    expect(Date.parse(String(qwen?.["expires_at"])) - Date.now()).toBeGreaterThan(20 * 365 * 86_400_000);
  });
});

describe("Ollama's own CLI against PAIR (its decoding and table, ollama-cli.ts)", () => {
  it("`ollama ps` prints every loaded model: the Ollama engine's and the OpenAI engine's", async () => {
    await ollama().chat({ model: "llama3.2:latest", messages: [{ role: "user", content: "hi" }] });
    const rows = ollamaPs(await (await fetch(`${c.node.url}/api/ps`)).json());
    const llama = rows.find((r) => r.name === "llama3.2:latest");
    expect(llama).toMatchObject({ processor: "100% GPU" });
    expect(llama?.id).toMatch(/^[0-9a-f]{12}$/);
    expect(llama?.until).toMatch(/from now$/);
    // vLLM's size is unknown (never invented): 0 B on the CPU, as Ollama prints an unknown size.
    expect(rows.find((r) => r.name === "qwen-7b")).toMatchObject({
      size: "0 B",
      context: "32768",
      until: "Forever",
    });
  });

  it("`ollama ls` prints every model with its size and age, and never for an unknown date", async () => {
    const rows = ollamaLs(await (await fetch(`${c.node.url}/api/tags`)).json());
    expect(rows.map((r) => r.name).sort()).toEqual(["llama3.2:latest", "qwen-7b", "shared:latest"]);
    expect(rows.find((r) => r.name === "llama3.2:latest")?.modified).toMatch(/ago$/);
    expect(rows.find((r) => r.name === "qwen-7b")).toMatchObject({ modified: "Never", size: "0 B" });
  });
});

describe("Ollama answers translated from an OpenAI engine", () => {
  const TIMINGS = ["total_duration", "load_duration", "prompt_eval_duration", "eval_duration"] as const;
  const tokensPerSecond = (r: { eval_count: number; eval_duration: number }) =>
    r.eval_count / (r.eval_duration / 1e9);

  it("carries every timing field, not streamed and streamed (chat and generate)", async () => {
    const chat = await ollama().chat({ model: "qwen-7b", messages: [{ role: "user", content: "hi" }] });
    const generated = await ollama().generate({ model: "qwen-7b", prompt: "hi" });
    const stream = await ollama().chat({
      model: "qwen-7b",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    let last: Record<string, unknown> = {};
    for await (const part of stream) last = part as unknown as Record<string, unknown>;
    for (const reply of [chat, generated, last] as unknown as Record<string, number>[]) {
      for (const field of TIMINGS) expect(typeof reply[field], field).toBe("number");
      expect(reply["total_duration"]).toBeGreaterThanOrEqual(reply["eval_duration"]!);
      expect(Number.isFinite(tokensPerSecond(reply as never))).toBe(true);
    }
    expect(last["done"]).toBe(true);
  });
});
