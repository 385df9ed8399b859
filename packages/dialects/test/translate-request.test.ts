import { describe, expect, it } from "vitest";
import {
  ollamaChatToOpenAI,
  ollamaEmbeddingsToOpenAI,
  ollamaEmbedToOpenAI,
  ollamaGenerateToOpenAI,
  openAIChatToOllama,
  openAICompletionToOllama,
  openAIEmbeddingToOllama,
  type OllamaChatRequest,
  type OpenAIChatRequest,
} from "../src/index.js";
import { JPEG, PNG, ok } from "./fixtures.js";

describe("Ollama requests → OpenAI", () => {
  const chat: OllamaChatRequest = {
    model: "llama3.2",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is this?", images: [PNG, JPEG] },
      {
        role: "assistant",
        content: "",
        thinking: "look it up",
        tool_calls: [
          { function: { name: "lookup", arguments: { q: "png" } } },
          { function: { name: "weather", arguments: { city: "Paris" } } },
        ],
      },
      { role: "tool", content: "sunny", tool_name: "weather" },
      { role: "tool", content: "an image format" },
    ],
    options: {
      num_predict: 128,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      seed: 7,
      stop: ["\n\n"],
      num_ctx: 8192,
    },
    format: "json",
    think: "high",
    tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
  };

  it("maps a streamed chat: stream made explicit, usage asked for, options, images, tools paired by name", () => {
    const upstream = ok(ollamaChatToOpenAI(chat));
    expect(upstream.path).toBe("/v1/chat/completions");
    expect(upstream.stream).toBe(true);
    expect(upstream.body).toEqual({
      model: "llama3.2",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
          ],
        },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_2_0", type: "function", function: { name: "lookup", arguments: '{"q":"png"}' } },
            {
              id: "call_2_1",
              type: "function",
              function: { name: "weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", content: "sunny", tool_call_id: "call_2_1" },
        { role: "tool", content: "an image format", tool_call_id: "call_2_0" },
      ],
      max_tokens: 128,
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      stop: ["\n\n"],
      response_format: { type: "json_object" },
      reasoning_effort: "high",
      tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("sends top_k and min_p only when the engine takes sampling extensions", () => {
    const withExtensions = ok(
      ollamaChatToOpenAI({ ...chat, options: { top_k: 40, min_p: 0.05 } }, { samplingExtensions: true }),
    );
    expect(withExtensions.body).toMatchObject({ top_k: 40, min_p: 0.05 });
    const plain = ok(ollamaChatToOpenAI({ ...chat, options: { top_k: 40, min_p: 0.05 } }));
    expect(plain.body).not.toHaveProperty("top_k");
    expect(plain.body).not.toHaveProperty("min_p");
  });

  it("does not stream when stream is false, and then sends no stream_options (vLLM refuses them)", () => {
    const upstream = ok(
      ollamaChatToOpenAI({ model: "m", messages: [{ role: "user", content: "hi" }], stream: false }),
    );
    expect(upstream.stream).toBe(false);
    expect(upstream.body.stream).toBe(false);
    expect(upstream.body).not.toHaveProperty("stream_options");
  });

  it("drops unbounded num_predict and maps a JSON-schema format to json_schema", () => {
    const schema = { type: "object", properties: { age: { type: "integer" } }, required: ["age"] };
    const upstream = ok(
      ollamaChatToOpenAI({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        options: { num_predict: -1 },
        format: schema,
      }),
    );
    expect(upstream.body).not.toHaveProperty("max_tokens");
    expect(upstream.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", schema },
    });
  });

  it("refuses images on a non-user message instead of dropping them", () => {
    const result = ollamaChatToOpenAI({
      model: "m",
      messages: [{ role: "assistant", content: "x", images: [PNG] }],
    });
    expect(result).toMatchObject({
      ok: false,
      error: { code: "invalid_request", path: "messages[0].images" },
    });
  });

  it("serves /api/generate by chat: system message, then the prompt (and images) as the user message", () => {
    const upstream = ok(
      ollamaGenerateToOpenAI({
        model: "m",
        prompt: "Describe",
        system: "You are terse.",
        images: [PNG],
        template: "{{ .Prompt }}",
        context: [1, 2],
        keep_alive: "5m",
        options: { num_predict: 10 },
        stream: false,
      }),
    );
    expect(upstream).toEqual({
      path: "/v1/chat/completions",
      stream: false,
      body: {
        model: "m",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "Describe" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
        ],
        max_tokens: 10,
        stream: false,
      },
    });
  });

  it("serves raw and suffix generate requests by /v1/completions, and refuses images there", () => {
    const raw = ok(
      ollamaGenerateToOpenAI({ model: "m", prompt: "[INST] hi [/INST]", raw: true, system: "ignored" }),
    );
    expect(raw).toEqual({
      path: "/v1/completions",
      stream: true,
      body: {
        model: "m",
        prompt: "[INST] hi [/INST]",
        stream: true,
        stream_options: { include_usage: true },
      },
    });
    const fim = ok(
      ollamaGenerateToOpenAI({ model: "m", prompt: "def f(", suffix: "return x", stream: false }),
    );
    expect(fim).toMatchObject({ path: "/v1/completions", body: { prompt: "def f(", suffix: "return x" } });
    expect(ollamaGenerateToOpenAI({ model: "m", prompt: "p", raw: true, images: [PNG] })).toMatchObject({
      ok: false,
      error: { path: "images" },
    });
  });

  it("maps embed and legacy embeddings to /v1/embeddings with float encoding", () => {
    expect(
      ok(ollamaEmbedToOpenAI({ model: "e", input: ["a", "b"], truncate: false, dimensions: 64 })),
    ).toEqual({
      path: "/v1/embeddings",
      stream: false,
      body: { model: "e", input: ["a", "b"], dimensions: 64, encoding_format: "float" },
    });
    expect(ok(ollamaEmbeddingsToOpenAI({ model: "e", prompt: "a" })).body).toEqual({
      model: "e",
      input: "a",
      encoding_format: "float",
    });
  });

  it("sends another upstream model name when the router asks", () => {
    expect(ok(ollamaChatToOpenAI(chat, { model: "meta-llama/Llama-3.2-3B" })).body.model).toBe(
      "meta-llama/Llama-3.2-3B",
    );
  });
});

describe("OpenAI requests → Ollama", () => {
  it("maps chat: stream written out (Ollama streams by default), developer is system, parts joined, images inlined", () => {
    const upstream = ok(
      openAIChatToOllama({
        model: "m",
        messages: [
          {
            role: "developer",
            content: [
              { type: "text", text: "Rule one." },
              { type: "text", text: "Rule two." },
            ],
          },
          {
            role: "user",
            content: [
              { type: "text", text: "What is" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "low" } },
              { type: "text", text: "this?" },
            ],
          },
          {
            role: "assistant",
            tool_calls: [
              { id: "call_x", type: "function", function: { name: "lookup", arguments: '{"q":1}' } },
            ],
            reasoning_content: "hmm",
          },
          { role: "tool", tool_call_id: "call_x", content: "found" },
        ],
        max_completion_tokens: 50,
        max_tokens: 999,
        stop: "END",
        top_k: 20,
        response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
        reasoning_effort: "low",
        logprobs: true,
        user: "u1",
      }),
    );
    expect(upstream).toEqual({
      path: "/api/chat",
      stream: false,
      body: {
        model: "m",
        stream: false,
        messages: [
          { role: "system", content: "Rule one.\nRule two." },
          { role: "user", content: "What is\nthis?", images: [PNG] },
          {
            role: "assistant",
            content: "",
            thinking: "hmm",
            tool_calls: [{ function: { name: "lookup", arguments: { q: 1 } } }],
          },
          { role: "tool", content: "found", tool_name: "lookup" },
        ],
        options: { num_predict: 50, stop: ["END"], top_k: 20 },
        format: { type: "object" },
        think: "low",
      },
    });
  });

  it("refuses what an Ollama engine cannot honour, naming the field", () => {
    const base: OpenAIChatRequest = { model: "m", messages: [{ role: "user", content: "x" }] };
    const cases: [OpenAIChatRequest, string][] = [
      [{ ...base, n: 2 }, "n"],
      [
        {
          ...base,
          messages: [
            { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/cat.png" } }] },
          ],
        },
        "messages[0].content[0].image_url.url",
      ],
      [
        {
          ...base,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "a" },
                { type: "input_audio", input_audio: { data: "AA", format: "wav" } },
              ],
            },
          ],
        },
        "messages[0].content[1]",
      ],
      [
        {
          ...base,
          messages: [
            {
              role: "assistant",
              tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "[1]" } }],
            },
          ],
        },
        "messages[0].tool_calls[0].function.arguments",
      ],
    ];
    for (const [req, path] of cases) {
      expect(openAIChatToOllama(req)).toMatchObject({ ok: false, error: { code: "invalid_request", path } });
    }
  });

  it("sends no tools when tool_choice is none", () => {
    const tools = [{ type: "function" as const, function: { name: "f" } }];
    const none = ok(
      openAIChatToOllama({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        tools,
        tool_choice: "none",
      }),
    );
    expect(none.body).not.toHaveProperty("tools");
    const auto = ok(
      openAIChatToOllama({ model: "m", messages: [{ role: "user", content: "x" }], tools, stream: true }),
    );
    expect(auto).toMatchObject({ stream: true, body: { stream: true, tools } });
  });

  it("maps a text completion to a raw generate, or a templated one when there is a suffix", () => {
    expect(
      ok(openAICompletionToOllama({ model: "m", prompt: ["Once"], max_tokens: 16, stream: true })),
    ).toEqual({
      path: "/api/generate",
      stream: true,
      body: { model: "m", prompt: "Once", stream: true, raw: true, options: { num_predict: 16 } },
    });
    expect(ok(openAICompletionToOllama({ model: "m", prompt: "def f(", suffix: "  return x" })).body).toEqual(
      {
        model: "m",
        prompt: "def f(",
        stream: false,
        suffix: "  return x",
      },
    );
    expect(openAICompletionToOllama({ model: "m", prompt: ["a", "b"] })).toMatchObject({
      ok: false,
      error: { path: "prompt" },
    });
    expect(openAICompletionToOllama({ model: "m", prompt: [1, 2] })).toMatchObject({
      ok: false,
      error: { path: "prompt" },
    });
    expect(openAICompletionToOllama({ model: "m", prompt: "a", echo: true })).toMatchObject({
      ok: false,
      error: { path: "echo" },
    });
    expect(openAICompletionToOllama({ model: "m", prompt: "a", best_of: 3 })).toMatchObject({
      ok: false,
      error: { path: "best_of" },
    });
  });

  it("maps embeddings, refusing token ids", () => {
    expect(
      ok(openAIEmbeddingToOllama({ model: "e", input: ["a"], dimensions: 8, encoding_format: "base64" })),
    ).toEqual({
      path: "/api/embed",
      stream: false,
      body: { model: "e", input: ["a"], dimensions: 8 },
    });
    expect(openAIEmbeddingToOllama({ model: "e", input: [[1, 2]] })).toMatchObject({
      ok: false,
      error: { path: "input" },
    });
  });
});
