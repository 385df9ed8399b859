import { Ollama } from "ollama";
import OpenAI, { APIConnectionError, NotFoundError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator } from "../src/index.js";

let emu: EngineEmulator;
let openai: OpenAI;
let ollama: Ollama;

beforeAll(async () => {
  emu = await startEngineEmulator({
    api: "both",
    models: [
      { name: "llama3.2:1b", maxTokens: 6 },
      { name: "embed:v1", embeddingDimensions: 12 },
    ],
    tokenDelayMs: 1,
  });
  openai = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
  ollama = new Ollama({ host: emu.url });
});
afterAll(() => emu.close());

const messages = [{ role: "user" as const, content: "ping the emulator" }];

describe("the official openai client", () => {
  it("lists models and completes a chat", async () => {
    const models = [];
    for await (const model of openai.models.list()) models.push(model.id);
    expect(models).toEqual(["llama3.2:1b", "embed:v1"]);
    const completion = await openai.chat.completions.create({
      model: "llama3.2:1b",
      messages,
      max_tokens: 3,
    });
    expect(completion.choices[0]?.message.content).toBe("ping the emulator");
    expect(completion.choices[0]?.finish_reason).toBe("length");
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  it("streams a chat, with the usage chunk", async () => {
    const stream = await openai.chat.completions.create({
      model: "llama3.2:1b",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      usage = chunk.usage ?? usage;
    }
    expect(text.startsWith("ping the emulator ")).toBe(true);
    expect(text.split(" ")).toHaveLength(6);
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBe(6);
  });

  it("streams a legacy completion and embeds (base64 by default, decoded by the client)", async () => {
    const stream = await openai.completions.create({
      model: "llama3.2:1b",
      prompt: "one two three",
      max_tokens: 2,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    expect(text).toBe("one two");
    const embedding = await openai.embeddings.create({ model: "embed:v1", input: ["a", "b"] });
    expect(embedding.data.map((item) => item.embedding.length)).toEqual([12, 12]);
    const floats = await openai.embeddings.create({
      model: "embed:v1",
      input: "a",
      encoding_format: "float",
    });
    expect(floats.data[0]?.embedding).toEqual(embedding.data[0]?.embedding);
  });

  it("raises the client's typed errors", async () => {
    const missing = openai.chat.completions.create({ model: "nope", messages });
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    await expect(missing).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    await emu.setFaults({ cutMidStream: { afterTokens: 2 } });
    try {
      const stream = await openai.chat.completions.create({ model: "llama3.2:1b", messages, stream: true });
      const read = async (): Promise<void> => {
        for await (const _chunk of stream) {
          // drain until the cut
        }
      };
      await expect(read()).rejects.toThrow();
      await emu.setFaults({ refuseConnections: true });
      await expect(openai.models.list()).rejects.toBeInstanceOf(APIConnectionError);
    } finally {
      await emu.setFaults({});
    }
  });
});

describe("the official ollama client", () => {
  it("lists, reports the version, and chats without streaming", async () => {
    expect((await ollama.list()).models.map((model) => model.name)).toEqual(["llama3.2:1b", "embed:v1"]);
    expect((await ollama.version()).version).toBe("0.12.6");
    const reply = await ollama.chat({ model: "llama3.2:1b", messages, options: { num_predict: 3 } });
    expect(reply.message.content).toBe("ping the emulator");
    expect(reply).toMatchObject({ done: true, done_reason: "length", eval_count: 3, prompt_eval_count: 9 });
  });

  it("streams chat and generate", async () => {
    let text = "";
    let last: { done: boolean; eval_count: number } | undefined;
    for await (const part of await ollama.chat({ model: "llama3.2:1b", messages, stream: true })) {
      text += part.message.content;
      last = part;
    }
    expect(text.startsWith("ping the emulator ")).toBe(true);
    expect(last).toMatchObject({ done: true, eval_count: 6 });
    let generated = "";
    for await (const part of await ollama.generate({
      model: "llama3.2:1b",
      prompt: "a b",
      stream: true,
      options: { num_predict: 2 },
    })) {
      generated += part.response;
    }
    expect(generated).toBe("a b");
  });

  it("embeds, and raises ResponseError for an unknown model", async () => {
    const embedded = await ollama.embed({ model: "embed:v1", input: ["x", "y"] });
    expect(embedded.embeddings.map((vector) => vector.length)).toEqual([12, 12]);
    await expect(ollama.chat({ model: "mistral", messages })).rejects.toMatchObject({
      name: "ResponseError",
      status_code: 404,
      error: 'model "mistral" not found, try pulling it first',
    });
  });
});
