import { describe, expect, it } from "vitest";
import {
  ollamaChatToOpenAIChat,
  ollamaEmbedToOpenAIEmbedding,
  ollamaGenerateToOpenAICompletion,
  openAIChatToOllamaChat,
  openAIChatToOllamaGenerate,
  openAICompletionToOllamaGenerate,
  openAIEmbeddingToOllamaEmbed,
  openAIEmbeddingToOllamaEmbeddings,
  type OllamaChatResponse,
  type OpenAIChatCompletion,
  type OpenAIEmbeddingResponse,
} from "../src/index.js";

const NOW_MS = Date.UTC(2026, 10, 30, 9, 0, 0, 250);
const ollamaCtx = { model: "llama3.2:latest", nowMs: NOW_MS, startedMs: NOW_MS - 1_500 };
const openaiCtx = { id: "chatcmpl-pair-1", model: "llama3.2:latest", created: 1_764_493_200 };

/** vLLM's non-streamed chat answer (runpod-api.md §8.5). */
const vllmChat: OpenAIChatCompletion = {
  id: "chatcmpl-abc",
  object: "chat.completion",
  created: 1_733_000_000,
  model: "meta-llama/Llama-3.2-3B",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "The sky is blue.", reasoning_content: null, tool_calls: [] },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 26, total_tokens: 31, completion_tokens: 5, prompt_tokens_details: null },
};

describe("OpenAI answers → Ollama", () => {
  it("maps a chat completion: content, done_reason, counts, created_at and total_duration from the caller", () => {
    expect(openAIChatToOllamaChat(vllmChat, ollamaCtx)).toEqual({
      model: "llama3.2:latest",
      created_at: "2026-11-30T09:00:00.250Z",
      message: { role: "assistant", content: "The sky is blue." },
      done_reason: "stop",
      done: true,
      total_duration: 1_500_000_000,
      // Unstreamed: no first token seen, all the time counts as evaluation (a tokens/s is a number).
      load_duration: 0,
      prompt_eval_duration: 0,
      eval_duration: 1_500_000_000,
      prompt_eval_count: 26,
      eval_count: 5,
    });
  });

  it("maps tool calls (arguments decoded; not an object → {}), reasoning, and finish reasons", () => {
    const answer: OpenAIChatCompletion = {
      ...vllmChat,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            reasoning_content: "Need the weather.",
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
              { id: "call_2", type: "function", function: { name: "broken", arguments: "{not json" } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    };
    expect(openAIChatToOllamaChat(answer, { model: "m", nowMs: NOW_MS })).toEqual({
      model: "m",
      created_at: "2026-11-30T09:00:00.250Z",
      message: {
        role: "assistant",
        content: "",
        thinking: "Need the weather.",
        tool_calls: [
          { id: "call_1", function: { name: "get_weather", arguments: { city: "Paris" } } },
          { id: "call_2", function: { name: "broken", arguments: {} } },
        ],
      },
      done_reason: "stop",
      done: true,
      prompt_eval_count: 26,
      eval_count: 5,
    });
    const reasons = (["length", "content_filter", null] as const).map(
      (finish_reason) =>
        openAIChatToOllamaChat(
          { ...vllmChat, choices: [{ ...vllmChat.choices[0]!, finish_reason }] },
          ollamaCtx,
        ).done_reason,
    );
    expect(reasons).toEqual(["length", "content_filter", "stop"]);
  });

  it("answers a generate served by chat, and one served by text completion", () => {
    expect(openAIChatToOllamaGenerate(vllmChat, ollamaCtx)).toEqual({
      model: "llama3.2:latest",
      created_at: "2026-11-30T09:00:00.250Z",
      response: "The sky is blue.",
      done: true,
      done_reason: "stop",
      total_duration: 1_500_000_000,
      // Unstreamed: no first token seen, all the time counts as evaluation (a tokens/s is a number).
      load_duration: 0,
      prompt_eval_duration: 0,
      eval_duration: 1_500_000_000,
      prompt_eval_count: 26,
      eval_count: 5,
    });
    const completion = openAICompletionToOllamaGenerate(
      {
        id: "cmpl-1",
        object: "text_completion",
        created: 1,
        model: "x",
        choices: [{ index: 0, text: " upon a time", logprobs: null, finish_reason: "length" }],
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
      },
      { model: "m", nowMs: NOW_MS },
    );
    expect(completion).toMatchObject({
      response: " upon a time",
      done_reason: "length",
      prompt_eval_count: 2,
      eval_count: 3,
    });
    expect(completion).not.toHaveProperty("total_duration");
  });

  it("maps embeddings in index order, decoding base64 floats, and the legacy single vector", () => {
    const base64 = Buffer.from(new Float32Array([0.5, -1.25]).buffer).toString("base64");
    const answer: OpenAIEmbeddingResponse = {
      object: "list",
      model: "e",
      data: [
        { object: "embedding", index: 1, embedding: base64 },
        { object: "embedding", index: 0, embedding: [0.25, 2] },
      ],
      usage: { prompt_tokens: 8, total_tokens: 8 },
    };
    expect(openAIEmbeddingToOllamaEmbed(answer, ollamaCtx)).toEqual({
      model: "llama3.2:latest",
      embeddings: [
        [0.25, 2],
        [0.5, -1.25],
      ],
      total_duration: 1_500_000_000,
      prompt_eval_count: 8,
    });
    expect(openAIEmbeddingToOllamaEmbeddings(answer)).toEqual({ embedding: [0.25, 2] });
  });
});

/** Ollama's non-streamed chat answer (docs/api.md). */
const ollamaChat: OllamaChatResponse = {
  model: "llama3.2",
  created_at: "2023-12-12T14:13:43.416799Z",
  message: { role: "assistant", content: "Hello! How are you today?" },
  done_reason: "stop",
  done: true,
  total_duration: 5191566416,
  load_duration: 2154458,
  prompt_eval_count: 26,
  prompt_eval_duration: 383809000,
  eval_count: 298,
  eval_duration: 4799921000,
};

describe("Ollama answers → OpenAI", () => {
  it("maps a chat answer with the caller's id, created and model, and usage from the counts", () => {
    expect(ollamaChatToOpenAIChat(ollamaChat, openaiCtx)).toEqual({
      id: "chatcmpl-pair-1",
      object: "chat.completion",
      created: 1_764_493_200,
      model: "llama3.2:latest",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello! How are you today?", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 26, completion_tokens: 298, total_tokens: 324 },
    });
  });

  it("maps tool calls (arguments encoded, ids derived), thinking, length, and a cached prompt's missing count", () => {
    const answer = ollamaChatToOpenAIChat(
      {
        model: "qwen3",
        created_at: "2024-07-22T20:33:28.123648Z",
        message: {
          role: "assistant",
          content: "",
          thinking: "Paris?",
          tool_calls: [
            {
              function: {
                name: "get_current_weather",
                arguments: { format: "celsius", location: "Paris, FR" },
              },
            },
          ],
        },
        done_reason: "stop",
        done: true,
        eval_count: 33,
      },
      openaiCtx,
    );
    expect(answer.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        reasoning_content: "Paris?",
        tool_calls: [
          {
            id: "call_chatcmpl-pair-1_0",
            type: "function",
            function: {
              name: "get_current_weather",
              arguments: '{"format":"celsius","location":"Paris, FR"}',
            },
          },
        ],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    });
    expect(answer.usage).toEqual({ prompt_tokens: 0, completion_tokens: 33, total_tokens: 33 });
    expect(
      ollamaChatToOpenAIChat({ ...ollamaChat, done_reason: "length" }, openaiCtx).choices[0]?.finish_reason,
    ).toBe("length");
    expect(
      ollamaChatToOpenAIChat({ ...ollamaChat, done_reason: "unload" }, openaiCtx).choices[0]?.finish_reason,
    ).toBe("stop");
  });

  it("maps a generate answer to a text completion", () => {
    expect(
      ollamaGenerateToOpenAICompletion(
        {
          model: "m",
          created_at: "x",
          response: "Rayleigh.",
          done: true,
          done_reason: "stop",
          context: [1],
          prompt_eval_count: 4,
          eval_count: 2,
        },
        { ...openaiCtx, id: "cmpl-9" },
      ),
    ).toEqual({
      id: "cmpl-9",
      object: "text_completion",
      created: 1_764_493_200,
      model: "llama3.2:latest",
      choices: [{ index: 0, text: "Rayleigh.", logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
    });
  });

  it("maps embeddings as floats, or as base64 float32 that decodes to the same vector", () => {
    const vectors = [
      [0.010071029, -0.0017594862],
      [0.5, 3],
    ];
    const floats = ollamaEmbedToOpenAIEmbedding(
      { model: "all-minilm", embeddings: vectors, prompt_eval_count: 8 },
      { model: "e" },
    );
    expect(floats).toEqual({
      object: "list",
      model: "e",
      data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
      usage: { prompt_tokens: 8, total_tokens: 8 },
    });
    const encoded = ollamaEmbedToOpenAIEmbedding(
      { model: "all-minilm", embeddings: vectors },
      { model: "e", encodingFormat: "base64" },
    );
    const decoded = encoded.data.map((item) => {
      const bytes = Buffer.from(item.embedding as string, "base64");
      return [...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)];
    });
    expect(decoded).toEqual(vectors.map((v) => [...Float32Array.from(v)]));
  });
});

describe("round trip of answers", () => {
  it("Ollama → OpenAI → Ollama keeps content, counts, reason and tool calls", () => {
    const original: OllamaChatResponse = {
      ...ollamaChat,
      message: {
        role: "assistant",
        content: "Checking.",
        tool_calls: [{ function: { name: "f", arguments: { a: [1, 2], b: { c: "d" } } } }],
      },
    };
    const openai = ollamaChatToOpenAIChat(original, openaiCtx);
    const back = openAIChatToOllamaChat(openai, { model: original.model, nowMs: NOW_MS });
    expect(back.message.content).toBe("Checking.");
    expect(back.message.tool_calls?.map((c) => c.function)).toEqual(
      original.message.tool_calls?.map((c) => c.function),
    );
    expect([back.done_reason, back.prompt_eval_count, back.eval_count]).toEqual(["stop", 26, 298]);
  });
});
