import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator } from "../src/index.js";
import { frozenClock, ndjson, postJson } from "./wire-readers.js";

let emu: EngineEmulator;

beforeAll(async () => {
  emu = await startEngineEmulator({
    api: "ollama",
    clock: frozenClock,
    ollamaVersion: "0.12.6",
    models: [
      { name: "llama3.2:1b", maxTokens: 5 },
      { name: "nomic-embed-text", embeddingDimensions: 6 },
    ],
  });
});
afterAll(() => emu.close());

const chat = (body: object): Promise<Response> =>
  postJson(`${emu.url}/api/chat`, {
    model: "llama3.2:1b",
    messages: [{ role: "user", content: "why is the sky blue" }],
    ...body,
  });

describe("Ollama dialect: listings", () => {
  it("answers / like Ollama, reports its version and lists tags", async () => {
    expect(await (await fetch(emu.url)).text()).toBe("Ollama is running");
    expect(await (await fetch(`${emu.url}/api/version`)).json()).toEqual({ version: "0.12.6" });
    const res = await fetch(`${emu.url}/api/tags`);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const tags = (await res.json()) as {
      models: { name: string; model: string; digest: string; details: { format: string } }[];
    };
    expect(tags.models.map((model) => model.name)).toEqual(["llama3.2:1b", "nomic-embed-text:latest"]);
    expect(tags.models[0]).toMatchObject({ model: "llama3.2:1b", details: { format: "gguf" } });
    expect(tags.models[0]!.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("does not serve the OpenAI routes in ollama mode", async () => {
    const res = await fetch(`${emu.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("404 page not found");
  });
});

describe("Ollama dialect: chat and generate", () => {
  it("streams NDJSON by default, ending with done: true and the statistics", async () => {
    const res = await chat({});
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = ndjson(await res.text());
    expect(lines).toHaveLength(6);
    for (const line of lines.slice(0, 5)) {
      expect(line).toEqual({
        model: "llama3.2:1b",
        created_at: "2026-01-01T00:00:00.000Z",
        message: { role: "assistant", content: expect.any(String) as unknown },
        done: false,
      });
    }
    expect(
      lines
        .slice(0, 5)
        .map((line) => (line["message"] as { content: string }).content)
        .join(""),
    ).toBe("why is the sky blue");
    expect(lines[5]).toEqual({
      model: "llama3.2:1b",
      created_at: "2026-01-01T00:00:00.000Z",
      message: { role: "assistant", content: "" },
      done_reason: "stop",
      done: true,
      total_duration: 0,
      load_duration: 0,
      prompt_eval_count: 11,
      prompt_eval_duration: 0,
      eval_count: 5,
      eval_duration: 0,
    });
  });

  it("answers one JSON object with stream: false, respecting options.num_predict", async () => {
    const res = await chat({ stream: false, options: { num_predict: 2 } });
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toMatchObject({
      message: { role: "assistant", content: "why is" },
      done: true,
      done_reason: "length",
      eval_count: 2,
    });
  });

  it("reports real durations in nanoseconds with the system clock", async () => {
    const real = await startEngineEmulator({
      api: "ollama",
      models: ["m"],
      tokenDelayMs: 2,
      firstTokenDelayMs: 5,
    });
    try {
      const body = (await (
        await postJson(`${real.url}/api/generate`, {
          model: "m",
          prompt: "hi",
          stream: false,
          options: { num_predict: 3 },
        })
      ).json()) as Record<string, number>;
      expect(body["prompt_eval_duration"]).toBeGreaterThanOrEqual(4_000_000);
      expect(body["total_duration"]).toBeGreaterThanOrEqual(
        body["prompt_eval_duration"]! + body["eval_duration"]!,
      );
      expect(Number.isInteger(body["total_duration"])).toBe(true);
    } finally {
      await real.close();
    }
  });

  it("generates, streaming and not, with a context array", async () => {
    const lines = ndjson(
      await (
        await postJson(`${emu.url}/api/generate`, {
          model: "llama3.2:1b",
          prompt: "tell me",
          options: { num_predict: 3 },
        })
      ).text(),
    );
    expect(lines.map((line) => line["response"])).toEqual(["tell", " me", expect.any(String), ""]);
    expect(lines[3]).toMatchObject({
      done: true,
      done_reason: "length",
      prompt_eval_count: 2,
      eval_count: 3,
    });
    expect(Array.isArray(lines[3]!["context"])).toBe(true);
    const whole = (await (
      await postJson(`${emu.url}/api/generate`, {
        model: "llama3.2:1b",
        prompt: "tell me",
        stream: false,
        raw: true,
      })
    ).json()) as Record<string, unknown>;
    expect(whole).toMatchObject({ done: true, done_reason: "stop", eval_count: 5 });
    expect(whole["context"]).toBeUndefined();
  });

  it("answers a chat without messages and a generate without prompt as a model load", async () => {
    expect(await (await chat({ messages: [] })).json()).toMatchObject({
      done: true,
      done_reason: "load",
      message: { content: "" },
    });
    expect(await (await postJson(`${emu.url}/api/generate`, { model: "llama3.2:1b" })).json()).toMatchObject({
      done: true,
      done_reason: "load",
      response: "",
    });
  });

  it("accepts a name without tag as :latest", async () => {
    const res = await postJson(`${emu.url}/api/generate`, {
      model: "nomic-embed-text:latest",
      prompt: "x",
      stream: false,
      options: { num_predict: 1 },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ model: "nomic-embed-text:latest" });
  });
});

describe("Ollama dialect: embeddings", () => {
  it("embeds with /api/embed and the legacy /api/embeddings", async () => {
    const embed = (await (
      await postJson(`${emu.url}/api/embed`, { model: "nomic-embed-text", input: ["a", "b c"] })
    ).json()) as { model: string; embeddings: number[][]; prompt_eval_count: number };
    expect(embed.model).toBe("nomic-embed-text");
    expect(embed.embeddings.map((vector) => vector.length)).toEqual([6, 6]);
    expect(embed.prompt_eval_count).toBe(3);
    const legacy = (await (
      await postJson(`${emu.url}/api/embeddings`, { model: "nomic-embed-text", prompt: "a" })
    ).json()) as { embedding: number[] };
    expect(legacy.embedding).toEqual(embed.embeddings[0]);
    expect(
      await (
        await postJson(`${emu.url}/api/embed`, { model: "nomic-embed-text", input: "a", dimensions: 2 })
      ).json(),
    ).toMatchObject({ embeddings: [[expect.any(Number), expect.any(Number)]] });
  });
});

describe("Ollama dialect: errors", () => {
  const error = async (res: Response): Promise<[number, unknown]> => [res.status, await res.json()];

  it("404s an unknown model the way Ollama words it", async () => {
    expect(await error(await chat({ model: "mistral" }))).toEqual([
      404,
      { error: 'model "mistral" not found, try pulling it first' },
    ]);
    expect(await error(await postJson(`${emu.url}/api/embed`, { model: "mistral", input: "x" }))).toEqual([
      404,
      { error: 'model "mistral" not found, try pulling it first' },
    ]);
  });

  it("400s a missing model, an empty body, bad JSON and mistyped fields", async () => {
    expect(await error(await postJson(`${emu.url}/api/chat`, { messages: [] }))).toEqual([
      400,
      { error: "model is required" },
    ]);
    expect(await error(await postJson(`${emu.url}/api/chat`, ""))).toEqual([
      400,
      { error: "missing request body" },
    ]);
    const [status, body] = await error(await postJson(`${emu.url}/api/chat`, "{oops"));
    expect(status).toBe(400);
    expect(typeof (body as { error: unknown }).error).toBe("string");
    expect(await error(await chat({ stream: "yes" }))).toEqual([
      400,
      { error: "invalid stream: expected a boolean, got a string" },
    ]);
    expect(await error(await chat({ messages: "hi" }))).toEqual([
      400,
      { error: "invalid messages: expected an array, got a string" },
    ]);
  });

  it("answers unknown paths with Ollama's plain 404", async () => {
    const res = await fetch(`${emu.url}/api/nothing`);
    expect([res.status, await res.text()]).toEqual([404, "404 page not found"]);
  });
});

describe("both dialects on one emulator (as Ollama serves /v1 too)", () => {
  it("serves /api and /v1 routes, with Ollama's name aliases on /v1", async () => {
    const both = await startEngineEmulator({ api: "both", models: ["qwen3"] });
    try {
      expect((await fetch(`${both.url}/api/tags`)).status).toBe(200);
      expect((await fetch(`${both.url}/v1/models`)).status).toBe(200);
      const res = await postJson(`${both.url}/v1/chat/completions`, {
        model: "qwen3:latest",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 1,
      });
      expect(res.status).toBe(200);
      expect((await fetch(`${both.url}/v1/nothing`)).headers.get("content-type")).toBe("application/json");
      expect(await (await fetch(`${both.url}/api/nothing`)).text()).toBe("404 page not found");
    } finally {
      await both.close();
    }
  });
});
