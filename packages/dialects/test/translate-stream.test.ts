import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NdjsonDecoder,
  OllamaToOpenAIChatStream,
  OllamaToOpenAICompletionStream,
  OpenAIToOllamaChatStream,
  OpenAIToOllamaGenerateStream,
  SSE_DONE,
  SseDecoder,
  encodeNdjson,
  encodeSseData,
  readOpenAIStreamEvent,
  type OllamaChatStreamItem,
  type OpenAIChatChunk,
  type OpenAIChatStreamItem,
} from "../src/index.js";
import {
  OLLAMA_CHAT_NDJSON,
  OLLAMA_GENERATE_NDJSON,
  OLLAMA_MID_STREAM_ERROR_NDJSON,
  OLLAMA_TOOL_CALL_NDJSON,
  VLLM_CHAT_SSE,
  VLLM_COMPLETION_SSE,
  VLLM_MID_STREAM_ERROR_SSE,
  VLLM_REASONING_SSE,
  VLLM_TOOL_CALL_SSE,
  encoder,
} from "./fixtures.js";

const START_MS = Date.UTC(2026, 10, 30, 9, 0, 0, 0);

/** The JSON items of an SSE body, as the router reads them (stopping at `[DONE]`), in chunks of 7 bytes. */
function sseItems(body: string): unknown[] {
  const bytes = encoder.encode(body);
  const decoder = new SseDecoder();
  const items: unknown[] = [];
  for (let at = 0; at <= bytes.length; at += 7) {
    const step = at < bytes.length ? decoder.push(bytes.slice(at, at + 7)) : decoder.end();
    if (!step.ok) throw new Error(step.error.message);
    for (const event of step.value) {
      const read = readOpenAIStreamEvent(event);
      if (read.kind === "done") return items;
      if (read.kind === "invalid") throw new Error(read.message);
      items.push(read.value);
    }
  }
  return items;
}

function ndjsonItems(body: string): unknown[] {
  const decoder = new NdjsonDecoder();
  const bytes = encoder.encode(body);
  const items: unknown[] = [];
  for (let at = 0; at <= bytes.length; at += 5) {
    const step = at < bytes.length ? decoder.push(bytes.slice(at, at + 5)) : decoder.end();
    if (!step.ok) throw new Error(step.error.message);
    items.push(...step.value);
  }
  return items;
}

/** Feeds items 100 ms apart, then finishes 100 ms after the last. */
function runOpenAIToOllama<T>(
  translator: { push(item: never, nowMs?: number): T[]; finish(nowMs?: number): T[] },
  items: readonly unknown[],
): T[] {
  const out: T[] = [];
  items.forEach((item, i) => out.push(...translator.push(item as never, START_MS + 100 * (i + 1))));
  out.push(...translator.finish(START_MS + 100 * (items.length + 1)));
  return out;
}

function runOllamaToOpenAI<T>(
  translator: { push(item: never): T[]; finish(): T[] },
  items: readonly unknown[],
): T[] {
  return [...items.flatMap((item) => translator.push(item as never)), ...translator.finish()];
}

describe("OpenAI stream → Ollama NDJSON objects", () => {
  it("turns a vLLM chat stream into content objects and a final object with counts and durations", () => {
    const out = runOpenAIToOllama(
      new OpenAIToOllamaChatStream({ model: "llama3.2", nowMs: START_MS }),
      sseItems(VLLM_CHAT_SSE),
    );
    const at = (ms: number) => new Date(START_MS + ms).toISOString();
    expect(out).toEqual([
      { model: "llama3.2", created_at: at(200), message: { role: "assistant", content: "The" }, done: false },
      {
        model: "llama3.2",
        created_at: at(300),
        message: { role: "assistant", content: " sky is" },
        done: false,
      },
      {
        model: "llama3.2",
        created_at: at(400),
        message: { role: "assistant", content: " blue." },
        done: false,
      },
      {
        model: "llama3.2",
        created_at: at(700),
        message: { role: "assistant", content: "" },
        done_reason: "stop",
        done: true,
        total_duration: 700_000_000,
        load_duration: 0,
        prompt_eval_duration: 200_000_000,
        eval_duration: 500_000_000,
        prompt_eval_count: 26,
        eval_count: 5,
      },
    ]);
  });

  it("gathers tool-call fragments and emits each call whole, arguments decoded, when the choice finishes", () => {
    const out = runOpenAIToOllama(
      new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS }),
      sseItems(VLLM_TOOL_CALL_SSE),
    );
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({
      message: {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "chatcmpl-tool-1", function: { name: "get_weather", arguments: { city: "Paris" } } },
          { id: "chatcmpl-tool-2", function: { name: "get_time", arguments: {} } },
        ],
      },
      done: false,
    });
    expect(out[1]).toMatchObject({ done: true, done_reason: "stop", prompt_eval_count: 120, eval_count: 30 });
  });

  it("carries reasoning as thinking and a length stop as done_reason length", () => {
    const out = runOpenAIToOllama(
      new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS }),
      sseItems(VLLM_REASONING_SSE),
    );
    expect(out.map((o) => ("message" in o ? o.message : o))).toEqual([
      { role: "assistant", content: "", thinking: "Rayleigh." },
      { role: "assistant", content: "Blue." },
      { role: "assistant", content: "" },
    ]);
    expect(out[2]).toMatchObject({ done_reason: "length", eval_count: 3 });
  });

  it("turns a mid-stream engine error into PAIR's Ollama error line, and ends there", () => {
    const translator = new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS, node: "gpu-1" });
    const out = runOpenAIToOllama<OllamaChatStreamItem>(translator, sseItems(VLLM_MID_STREAM_ERROR_SSE));
    expect(out).toEqual([
      expect.objectContaining({ message: { role: "assistant", content: "Once" }, done: false }),
      { error: "CUDA out of memory", code: "upstream_error", node: "gpu-1" },
    ]);
    expect(translator.push(JSON.parse('{"choices":[]}') as OpenAIChatChunk)).toEqual([]);
  });

  it("reports a stream cut off before its finish reason as an error, not as done", () => {
    const items = sseItems(VLLM_CHAT_SSE).slice(0, 3);
    const out = runOpenAIToOllama(new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS }), items);
    expect(out.at(-1)).toEqual({
      error: "the engine's stream ended before the answer was finished",
      code: "upstream_error",
    });
    expect(out.some((o) => "done" in o && o.done)).toBe(false);
  });

  it("answers a generate request from text-completion chunks or from chat chunks", () => {
    const raw = runOpenAIToOllama(
      new OpenAIToOllamaGenerateStream({ model: "m", nowMs: START_MS }),
      sseItems(VLLM_COMPLETION_SSE),
    );
    expect(raw.map((o) => ("response" in o ? o.response : o))).toEqual([" a", " b", ""]);
    expect(raw.at(-1)).toMatchObject({
      done: true,
      done_reason: "length",
      prompt_eval_count: 4,
      eval_count: 2,
    });
    const chat = runOpenAIToOllama(
      new OpenAIToOllamaGenerateStream({ model: "m", nowMs: START_MS }),
      sseItems(VLLM_CHAT_SSE),
    );
    expect(chat.map((o) => ("response" in o ? o.response : "")).join("")).toBe("The sky is blue.");
    expect(chat.at(-1)).toMatchObject({
      done: true,
      done_reason: "stop",
      prompt_eval_count: 26,
      eval_count: 5,
    });
  });

  it("writes NDJSON an Ollama client reads back whole", () => {
    const out = runOpenAIToOllama(
      new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS }),
      sseItems(VLLM_CHAT_SSE),
    );
    const back = ndjsonItems(out.map(encodeNdjson).join(""));
    expect(back).toEqual(out);
  });
});

describe("Ollama NDJSON → OpenAI stream", () => {
  const ctx = { id: "chatcmpl-pair-7", model: "llama3.2", created: 1_764_493_200, includeUsage: true };

  it("sends the role chunk first, then content, then finish_reason, then the usage chunk", () => {
    const out = runOllamaToOpenAI(new OllamaToOpenAIChatStream(ctx), ndjsonItems(OLLAMA_CHAT_NDJSON));
    const base = {
      id: "chatcmpl-pair-7",
      object: "chat.completion.chunk",
      created: 1_764_493_200,
      model: "llama3.2",
    };
    const choice = (delta: object, finish_reason: string | null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
      usage: null,
    });
    expect(out).toEqual([
      choice({ role: "assistant", content: "" }, null),
      choice({ content: "The" }, null),
      choice({ content: " sky" }, null),
      choice({ content: " is blue." }, null),
      choice({}, "stop"),
      { ...base, choices: [], usage: { prompt_tokens: 26, completion_tokens: 282, total_tokens: 308 } },
    ]);
  });

  it("sends no usage chunk (and no usage field) when the client did not ask", () => {
    const out = runOllamaToOpenAI(
      new OllamaToOpenAIChatStream({ ...ctx, includeUsage: false }),
      ndjsonItems(OLLAMA_CHAT_NDJSON),
    );
    expect(out).toHaveLength(5);
    expect(out.every((chunk) => !("usage" in chunk))).toBe(true);
  });

  it("streams thinking as reasoning_content and a tool call as one whole delta, finishing with tool_calls", () => {
    const out = runOllamaToOpenAI(new OllamaToOpenAIChatStream(ctx), ndjsonItems(OLLAMA_TOOL_CALL_NDJSON));
    const deltas = out.map((c) => ("choices" in c ? c.choices[0] : undefined));
    expect(deltas.map((c) => c?.delta)).toEqual([
      { role: "assistant", content: "" },
      { reasoning_content: "Need weather." },
      {
        tool_calls: [
          {
            index: 0,
            id: "call_chatcmpl-pair-7_0",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
          },
        ],
      },
      {},
      undefined,
    ]);
    expect(deltas[3]?.finish_reason).toBe("tool_calls");
  });

  it("streams a generate answer as text-completion chunks", () => {
    const out = runOllamaToOpenAI(
      new OllamaToOpenAICompletionStream({ ...ctx, id: "cmpl-3" }),
      ndjsonItems(OLLAMA_GENERATE_NDJSON),
    );
    expect(out.map((c) => ("choices" in c ? c.choices.map((x) => [x.text, x.finish_reason]) : c))).toEqual([
      [["Why", null]],
      [[" not", null]],
      [["", "length"]],
      [],
    ]);
    expect(out.at(-1)).toMatchObject({
      object: "text_completion",
      usage: { prompt_tokens: 26, completion_tokens: 2, total_tokens: 28 },
    });
  });

  it("turns an Ollama error line into PAIR's OpenAI error item, and ends there", () => {
    const translator = new OllamaToOpenAIChatStream({ ...ctx, node: "node-b" });
    const out = runOllamaToOpenAI<OpenAIChatStreamItem>(
      translator,
      ndjsonItems(OLLAMA_MID_STREAM_ERROR_NDJSON),
    );
    expect(out.at(-1)).toEqual({
      error: {
        message: "llama runner process has terminated: exit status 2",
        type: "server_error",
        param: null,
        code: "upstream_error",
        node: "node-b",
      },
    });
    expect(out).toHaveLength(3);
  });

  it("reports a body that ends before done as an error item", () => {
    const items = ndjsonItems(OLLAMA_CHAT_NDJSON).slice(0, 2);
    const out = runOllamaToOpenAI(new OllamaToOpenAIChatStream(ctx), items);
    expect(out.at(-1)).toMatchObject({ error: { code: "upstream_error" } });
  });

  it("writes SSE an OpenAI client reads back whole", () => {
    const out = runOllamaToOpenAI(new OllamaToOpenAIChatStream(ctx), ndjsonItems(OLLAMA_CHAT_NDJSON));
    expect(sseItems(out.map(encodeSseData).join("") + SSE_DONE)).toEqual(out);
  });
});

describe("stream round trip", () => {
  it("OpenAI chunks → Ollama objects → OpenAI chunks keep the text, the finish reason and the usage", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 8 }), { maxLength: 12 }),
        fc.constantFrom("stop" as const, "length" as const),
        fc.nat({ max: 10_000 }),
        fc.nat({ max: 10_000 }),
        (pieces, finish, promptTokens, completionTokens) => {
          const head = { id: "x", object: "chat.completion.chunk" as const, created: 1, model: "m" };
          const engine: OpenAIChatChunk[] = [
            {
              ...head,
              choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
            },
            ...pieces.map((content) => ({
              ...head,
              choices: [{ index: 0, delta: { content }, finish_reason: null }],
            })),
            { ...head, choices: [{ index: 0, delta: {}, finish_reason: finish }] },
            {
              ...head,
              choices: [],
              usage: {
                prompt_tokens: promptTokens,
                completion_tokens: completionTokens,
                total_tokens: promptTokens + completionTokens,
              },
            },
          ];
          const ollama = runOpenAIToOllama(
            new OpenAIToOllamaChatStream({ model: "m", nowMs: START_MS }),
            engine,
          );
          const client = runOllamaToOpenAI(
            new OllamaToOpenAIChatStream({ id: "y", model: "m", created: 2, includeUsage: true }),
            ndjsonItems(ollama.map(encodeNdjson).join("")),
          );
          const chunks = client.filter((c): c is OpenAIChatChunk => "choices" in c);
          expect(chunks.length).toBe(client.length);
          expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(pieces.join(""));
          expect(
            chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter((r) => r !== null),
          ).toEqual([finish]);
          expect(chunks.at(-1)?.usage).toEqual({
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
