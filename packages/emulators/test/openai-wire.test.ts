import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator } from "../src/index.js";
import { frozenClock, postJson, sseData } from "./wire-readers.js";

let emu: EngineEmulator;
let v1: string;

beforeAll(async () => {
  emu = await startEngineEmulator({
    api: "openai",
    name: "vllm-emu",
    clock: frozenClock,
    models: ["tiny-chat", { name: "embedder", embeddingDimensions: 8, maxTokens: 4, contextTokens: 100 }],
  });
  v1 = `${emu.url}/v1`;
});
afterAll(() => emu.close());

const chat = (body: object): Promise<Response> =>
  postJson(`${v1}/chat/completions`, {
    model: "tiny-chat",
    messages: [{ role: "user", content: "hello there" }],
    ...body,
  });

describe("OpenAI dialect: listings", () => {
  it("lists the models and names itself in the server header", async () => {
    const res = await fetch(`${v1}/models`);
    expect(res.status).toBe(200);
    expect(res.headers.get("server")).toBe("vllm-emu");
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as {
      object: string;
      data: { id: string; object: string; owned_by: string }[];
    };
    expect(body.object).toBe("list");
    expect(body.data.map((model) => model.id)).toEqual(["tiny-chat", "embedder"]);
    expect(body.data[0]).toMatchObject({ object: "model", owned_by: "pair-emulator" });
  });

  it("retrieves one model, and 404s an unknown one with the error envelope", async () => {
    expect(await (await fetch(`${v1}/models/tiny-chat`)).json()).toMatchObject({
      id: "tiny-chat",
      object: "model",
    });
    const res = await fetch(`${v1}/models/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
  });
});

describe("OpenAI dialect: chat completions", () => {
  it("answers a non-streaming chat with the full object and usage", async () => {
    const res = await chat({});
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_emu\d+$/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: "chat.completion",
      created: Date.UTC(2026, 0, 1) / 1000,
      model: "tiny-chat",
      choices: [{ index: 0, message: { role: "assistant" }, logprobs: null, finish_reason: "stop" }],
      // 2 words + 3 per message + 3 priming; the default reply is 16 tokens.
      usage: { prompt_tokens: 8, completion_tokens: 16, total_tokens: 24 },
    });
    expect(body["id"]).toMatch(/^chatcmpl-/);
    const content = (body["choices"] as { message: { content: string } }[])[0]!.message.content;
    expect(content.startsWith("hello there ")).toBe(true);
    expect(content.split(" ")).toHaveLength(16);
  });

  it("respects max_tokens and max_completion_tokens, reporting finish_reason length", async () => {
    const a = (await (await chat({ max_tokens: 3 })).json()) as {
      choices: { finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    expect(a.usage.completion_tokens).toBe(3);
    expect(a.choices[0]!.finish_reason).toBe("length");
    const b = (await (await chat({ max_completion_tokens: 5 })).json()) as {
      usage: { completion_tokens: number };
    };
    expect(b.usage.completion_tokens).toBe(5);
  });

  it("streams SSE exactly as OpenAI: role delta, content deltas, finish chunk, [DONE]", async () => {
    const res = await chat({ stream: true, max_tokens: 4 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = sseData(await res.text());
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map(
      (data) =>
        JSON.parse(data) as {
          object: string;
          id: string;
          choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
        },
    );
    expect(chunks).toHaveLength(6);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "", refusal: null });
    const text = chunks
      .slice(1, 5)
      .map((chunk) => chunk.choices[0]!.delta["content"])
      .join("");
    expect(text).toMatch(/^hello there \S+ \S+$/);
    expect(chunks[5]!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "length" });
    expect(chunks.some((chunk) => "usage" in chunk)).toBe(false);
  });

  it("adds usage: null to each chunk and a final usage chunk with stream_options.include_usage", async () => {
    const events = sseData(
      await (await chat({ stream: true, max_tokens: 2, stream_options: { include_usage: true } })).text(),
    );
    const chunks = events
      .slice(0, -1)
      .map((data) => JSON.parse(data) as { choices: unknown[]; usage: unknown });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
    });
  });

  it("accepts content as an array of parts", async () => {
    const res = await postJson(`${v1}/chat/completions`, {
      model: "tiny-chat",
      max_tokens: 2,
      messages: [{ role: "user", content: [{ type: "text", text: "parts work" }] }],
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content).toBe("parts work");
  });
});

describe("OpenAI dialect: text completions and embeddings", () => {
  it("answers and streams legacy completions", async () => {
    const whole = (await (
      await postJson(`${v1}/completions`, { model: "tiny-chat", prompt: "one two", max_tokens: 2 })
    ).json()) as Record<string, unknown>;
    expect(whole).toMatchObject({
      object: "text_completion",
      choices: [{ text: "one two", index: 0, logprobs: null, finish_reason: "length" }],
      usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
    });
    const res = await postJson(`${v1}/completions`, {
      model: "tiny-chat",
      prompt: "one two",
      max_tokens: 2,
      stream: true,
    });
    const events = sseData(await res.text());
    expect(events).toHaveLength(4);
    const texts = events
      .slice(0, 3)
      .map(
        (data) =>
          (JSON.parse(data) as { choices: { text: string; finish_reason: string | null }[] }).choices[0],
      );
    expect(texts).toEqual([
      { text: "one", index: 0, logprobs: null, finish_reason: null },
      { text: " two", index: 0, logprobs: null, finish_reason: null },
      { text: "", index: 0, logprobs: null, finish_reason: "length" },
    ]);
  });

  it("embeds as floats and as base64 float32, the same numbers", async () => {
    const floats = (await (
      await postJson(`${v1}/embeddings`, { model: "embedder", input: ["a b", "c"] })
    ).json()) as {
      data: { object: string; index: number; embedding: number[] }[];
      usage: { prompt_tokens: number; total_tokens: number };
    };
    expect(floats.data.map((item) => [item.object, item.index, item.embedding.length])).toEqual([
      ["embedding", 0, 8],
      ["embedding", 1, 8],
    ]);
    expect(floats.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const norm = Math.hypot(...floats.data[0]!.embedding);
    expect(norm).toBeCloseTo(1, 5);
    const b64 = (await (
      await postJson(`${v1}/embeddings`, { model: "embedder", input: "a b", encoding_format: "base64" })
    ).json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(b64.data[0]!.embedding, "base64");
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(floats.data[0]!.embedding);
    const short = (await (
      await postJson(`${v1}/embeddings`, { model: "embedder", input: "a b", dimensions: 3 })
    ).json()) as { data: { embedding: number[] }[] };
    expect(short.data[0]!.embedding).toHaveLength(3);
  });
});

describe("OpenAI dialect: errors", () => {
  const error = async (res: Response): Promise<{ status: number; error: Record<string, unknown> }> => ({
    status: res.status,
    error: ((await res.json()) as { error: Record<string, unknown> }).error,
  });

  it("404s an unknown model with model_not_found", async () => {
    expect(await error(await chat({ model: "gpt-9" }))).toEqual({
      status: 404,
      error: {
        message: "The model `gpt-9` does not exist or you do not have access to it.",
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      },
    });
  });

  it("400s bad JSON, a missing model, missing messages and mistyped fields", async () => {
    const badJson = await error(await postJson(`${v1}/chat/completions`, "{not json"));
    expect(badJson).toMatchObject({
      status: 400,
      error: { type: "invalid_request_error", param: null, code: null },
    });
    expect(String(badJson.error["message"])).toContain("could not parse the JSON body");
    expect(await error(await postJson(`${v1}/chat/completions`, { messages: [] }))).toMatchObject({
      status: 400,
      error: { message: "you must provide a model parameter" },
    });
    expect(await error(await postJson(`${v1}/chat/completions`, { model: "tiny-chat" }))).toMatchObject({
      status: 400,
      error: {
        message: "Missing required parameter: 'messages'.",
        param: "messages",
        code: "missing_required_parameter",
      },
    });
    expect(await error(await chat({ max_tokens: "3" }))).toMatchObject({
      status: 400,
      error: { param: "max_tokens", code: "invalid_type" },
    });
    expect(await error(await chat({ max_tokens: 0 }))).toMatchObject({
      status: 400,
      error: { param: "max_tokens", code: "invalid_value" },
    });
    expect(await error(await chat({ model: "embedder", max_tokens: 101 }))).toMatchObject({
      status: 400,
      error: { param: "max_tokens" },
    });
    expect(await error(await chat({ stream_options: { include_usage: true } }))).toMatchObject({
      status: 400,
      error: { param: "stream_options" },
    });
    expect(
      await error(
        await postJson(`${v1}/chat/completions`, { model: "tiny-chat", messages: [{ content: "x" }] }),
      ),
    ).toMatchObject({
      status: 400,
      error: { param: "messages[0].role" },
    });
  });

  it("answers unknown URLs and wrong methods with the envelope", async () => {
    expect(await error(await fetch(`${v1}/nothing`))).toMatchObject({
      status: 404,
      error: { message: "Invalid URL (GET /v1/nothing)" },
    });
    expect(await error(await fetch(`${v1}/chat/completions`))).toMatchObject({ status: 405 });
  });

  it("counts every inference request with exactly one outcome", async () => {
    // Its own requests, so the counts do not rest on what the tests before it sent.
    const before = emu.stats();
    await (await chat({})).text();
    await (await postJson(`${v1}/chat/completions`, "{not json")).text();
    await (await chat({ max_tokens: 0 })).text();
    const s = emu.stats();
    expect(s.requests).toBe(
      s.completed + s.cancelled + s.rejected503 + s.faulted + s.invalid + s.inFlight + s.queued,
    );
    expect({
      requests: s.requests - before.requests,
      completed: s.completed - before.completed,
      invalid: s.invalid - before.invalid,
    }).toEqual({ requests: 3, completed: 1, invalid: 2 });
  });
});
