import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DIALECT_ROUTES,
  dialectOf,
  isDialectRoute,
  validateOllamaChatRequest,
  validateOllamaGenerateRequest,
  validateOpenAIChatRequest,
  validateRequest,
  validationLimits,
  type DialectRoute,
} from "../src/index.js";

const minimal: { readonly [R in DialectRoute]: Record<string, unknown> } = {
  "/v1/chat/completions": { model: "m", messages: [{ role: "user", content: "hi" }] },
  "/v1/completions": { model: "m", prompt: "Once upon" },
  "/v1/embeddings": { model: "m", input: ["a", "b"] },
  "/api/chat": { model: "m", messages: [{ role: "user", content: "hi" }] },
  "/api/generate": { model: "m", prompt: "Why?" },
  "/api/embed": { model: "m", input: "a" },
  "/api/embeddings": { model: "m", prompt: "a" },
};

/** [route, body, path the error must name, words the message must hold]. */
const refusals: readonly [DialectRoute, unknown, string, string][] = [
  ["/v1/chat/completions", [], "", "request body: expected a JSON object, got an array"],
  ["/v1/chat/completions", { messages: [{ role: "user", content: "x" }] }, "model", "model: is required"],
  ["/v1/chat/completions", { model: 7, messages: [] }, "model", "model: expected a string, got an integer"],
  [
    "/v1/chat/completions",
    { model: "m", messages: [] },
    "messages",
    "messages: expected at least one message",
  ],
  ["/v1/chat/completions", { model: "m", messages: "hi" }, "messages", "expected an array"],
  [
    "/v1/chat/completions",
    {
      model: "m",
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "u" },
        { role: "user", content: 42 },
      ],
    },
    "messages[2].content",
    "messages[2].content: expected a string or an array of content parts",
  ],
  [
    "/v1/chat/completions",
    { model: "m", messages: [{ role: "wizard", content: "x" }] },
    "messages[0].role",
    "expected one of",
  ],
  ["/v1/chat/completions", { model: "m", messages: [{ content: "x" }] }, "messages[0].role", "is required"],
  [
    "/v1/chat/completions",
    {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "video", url: "x" },
          ],
        },
      ],
    },
    "messages[0].content[1].type",
    `expected one of "text", "image_url", "input_audio", "file"`,
  ],
  [
    "/v1/chat/completions",
    { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] },
    "messages[0].content[0].image_url.url",
    "is required",
  ],
  [
    "/v1/chat/completions",
    { model: "m", messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
    "messages[0].content[0].type",
    `expected one of "text"`,
  ],
  [
    "/v1/chat/completions",
    {
      model: "m",
      messages: [
        { role: "user", content: "x" },
        {
          role: "assistant",
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { a: 1 } } }],
        },
      ],
    },
    "messages[1].tool_calls[0].function.arguments",
    "expected a string, got an object",
  ],
  [
    "/v1/chat/completions",
    { model: "m", messages: [{ role: "tool", content: "r" }] },
    "messages[0].tool_call_id",
    "is required",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], stream: "yes" },
    "stream",
    "expected a boolean",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], max_tokens: 0 },
    "max_tokens",
    "expected an integer >= 1",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], max_tokens: 1.5 },
    "max_tokens",
    "expected an integer",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], temperature: "hot" },
    "temperature",
    "expected a number",
  ],
  ["/v1/chat/completions", { ...minimal["/v1/chat/completions"], stop: [1] }, "stop[0]", "expected a string"],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], stop: 3 },
    "stop",
    "a string or an array of strings",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], stream_options: { include_usage: "please" } },
    "stream_options.include_usage",
    "expected a boolean",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], response_format: { type: "yaml" } },
    "response_format.type",
    "expected one of",
  ],
  [
    "/v1/chat/completions",
    {
      ...minimal["/v1/chat/completions"],
      response_format: { type: "json_schema", json_schema: { schema: {} } },
    },
    "response_format.json_schema.name",
    "is required",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], tools: [{ type: "function", function: {} }] },
    "tools[0].function.name",
    "is required",
  ],
  [
    "/v1/chat/completions",
    { ...minimal["/v1/chat/completions"], tool_choice: "sometimes" },
    "tool_choice",
    "expected one of",
  ],
  ["/v1/completions", { model: "m" }, "prompt", "prompt: is required"],
  ["/v1/completions", { model: "m", prompt: [] }, "prompt", "not empty"],
  [
    "/v1/completions",
    {
      model: "m",
      prompt: [
        [1, 2],
        [3, "x"],
      ],
    },
    "prompt[1][1]",
    "expected an integer",
  ],
  ["/v1/completions", { model: "m", prompt: "p", logprobs: true }, "logprobs", "expected an integer"],
  ["/v1/embeddings", { model: "m" }, "input", "input: is required"],
  ["/v1/embeddings", { model: "m", input: ["a", 1] }, "input[1]", "expected a string"],
  [
    "/v1/embeddings",
    { model: "m", input: "a", encoding_format: "hex" },
    "encoding_format",
    "expected one of",
  ],
  ["/api/chat", { model: "m", messages: [] }, "messages", "expected at least one message"],
  [
    "/api/chat",
    { model: "m", messages: [{ role: "user", content: ["x"] }] },
    "messages[0].content",
    "expected a string, got an array",
  ],
  [
    "/api/chat",
    { model: "m", messages: [{ role: "user", content: "x", images: "abc" }] },
    "messages[0].images",
    "expected an array",
  ],
  [
    "/api/chat",
    {
      model: "m",
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "", tool_calls: [{ function: { name: "f", arguments: '{"a":1}' } }] },
      ],
    },
    "messages[1].tool_calls[0].function.arguments",
    "expected an object, got a string",
  ],
  [
    "/api/chat",
    { ...minimal["/api/chat"], format: "yaml" },
    "format",
    `expected "json" or a JSON schema object`,
  ],
  [
    "/api/chat",
    { ...minimal["/api/chat"], options: { num_predict: "100" } },
    "options.num_predict",
    "expected an integer, got a string",
  ],
  ["/api/chat", { ...minimal["/api/chat"], options: { stop: "\n" } }, "options.stop", "expected an array"],
  ["/api/chat", { ...minimal["/api/chat"], options: [] }, "options", "expected an object"],
  ["/api/chat", { ...minimal["/api/chat"], keep_alive: true }, "keep_alive", "duration string"],
  ["/api/chat", { ...minimal["/api/chat"], think: "max" }, "think", "expected one of"],
  [
    "/api/chat",
    { ...minimal["/api/chat"], tools: [{ type: "function" }] },
    "tools[0].function",
    "expected an object",
  ],
  ["/api/generate", { model: "m" }, "prompt", "prompt: is required"],
  ["/api/generate", { model: "m", prompt: "p", raw: "true" }, "raw", "expected a boolean"],
  ["/api/generate", { model: "m", prompt: "p", context: [1, "2"] }, "context[1]", "expected an integer"],
  ["/api/embed", { model: "m" }, "input", "input: is required"],
  ["/api/embed", { model: "m", input: [] }, "input", "expected at least one input"],
  ["/api/embed", { model: "m", input: [[1, 2]] }, "input[0]", "expected a string"],
  ["/api/embeddings", { model: "m", prompt: 5 }, "prompt", "expected a string"],
];

describe("request validation", () => {
  it.each(DIALECT_ROUTES)("accepts a minimal %s body as it is", (route) => {
    expect(validateRequest(route, minimal[route])).toEqual({ ok: true, value: minimal[route] });
  });

  it.each(refusals)("%s: refuses %j, naming %s", (route, body, path, words) => {
    const result = validateRequest(route, body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("invalid_request");
    expect(result.error.path).toBe(path);
    expect(result.error.message.startsWith(`${path === "" ? "request body" : path}: `)).toBe(true);
    expect(result.error.message).toContain(words);
  });

  it("passes unknown fields through untouched, at the top and nested", () => {
    const body = {
      model: "m",
      messages: [{ role: "user", content: "hi", x_note: { keep: true } }],
      options: { mirostat: 2, num_predict: 5 },
      x_future_field: [1, 2],
    };
    const result = validateOllamaChatRequest(body);
    expect(result).toEqual({ ok: true, value: body });
    const openai = { ...minimal["/v1/chat/completions"], service_tier: "flex", metadata: { a: "b" } };
    expect(validateOpenAIChatRequest(openai)).toEqual({ ok: true, value: openai });
  });

  it("treats known optional fields sent as null as absent, and an empty Ollama format as none", () => {
    const result = validateOpenAIChatRequest({
      ...minimal["/v1/chat/completions"],
      stop: null,
      max_tokens: null,
      tools: null,
    });
    expect(result).toEqual({ ok: true, value: minimal["/v1/chat/completions"] });
    const generate = validateOllamaGenerateRequest({ model: "m", prompt: "", format: "", images: null });
    expect(generate).toEqual({ ok: true, value: { model: "m", prompt: "" } });
  });

  it("gives an Ollama message without content an empty content, as Ollama's decoder does", () => {
    const result = validateOllamaChatRequest({
      model: "m",
      messages: [{ role: "assistant", tool_calls: [{ function: { name: "f", arguments: {} } }] }],
    });
    expect(result.ok && result.value.messages[0]?.content).toBe("");
  });

  it("names the limit that refused a request", () => {
    const limits = validationLimits({
      maxMessages: 2,
      maxStopSequences: 1,
      maxEmbeddingInputs: 2,
      maxImagesPerMessage: 1,
    });
    const three = [1, 2, 3].map(() => ({ role: "user", content: "x" }));
    const cases: [DialectRoute, unknown, string][] = [
      [
        "/v1/chat/completions",
        { model: "m", messages: three },
        "messages: at most 2 messages allowed (limit maxMessages), got 3",
      ],
      ["/api/chat", { model: "m", messages: three }, "limit maxMessages"],
      [
        "/v1/chat/completions",
        { ...minimal["/v1/chat/completions"], stop: ["a", "b"] },
        "stop: at most 1 stop sequences",
      ],
      [
        "/api/generate",
        { model: "m", prompt: "p", options: { stop: ["a", "b"] } },
        "options.stop: at most 1",
      ],
      ["/v1/embeddings", { model: "m", input: ["a", "b", "c"] }, "limit maxEmbeddingInputs"],
      ["/api/embed", { model: "m", input: ["a", "b", "c"] }, "limit maxEmbeddingInputs"],
      ["/api/generate", { model: "m", prompt: "p", images: ["a", "b"] }, "images: at most 1 images"],
    ];
    for (const [route, body, words] of cases) {
      const result = validateRequest(route, body, limits);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toContain(words);
    }
    expect(validateRequest("/api/chat", { model: "m", messages: three.slice(0, 2) }, limits).ok).toBe(true);
  });

  it("refuses limits that are not positive integers when they are built", () => {
    expect(() => validationLimits({ maxMessages: 0 })).toThrow(/maxMessages/);
    expect(() => validationLimits({ maxTools: 2.5 })).toThrow(RangeError);
    expect(validationLimits().maxMessages).toBeGreaterThan(0);
  });

  it("names the path of any wrongly typed message field, wherever it sits", () => {
    const wrong = fc.constantFrom<unknown>(17, true, { a: 1 }, [1]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        wrong,
        (size, at, value) => {
          const messages: Record<string, unknown>[] = Array.from({ length: size + 1 }, () => ({
            role: "user",
            content: "x",
          }));
          const index = at % messages.length;
          messages[index] = { role: "user", content: value };
          const result = validateOllamaChatRequest({ model: "m", messages });
          expect(result.ok).toBe(false);
          if (!result.ok) expect(result.error.path).toBe(`messages[${index}].content`);
        },
      ),
    );
  });

  it("knows which dialect each route speaks", () => {
    expect(DIALECT_ROUTES.map(dialectOf)).toEqual([
      "openai",
      "openai",
      "openai",
      "ollama",
      "ollama",
      "ollama",
      "ollama",
    ]);
    expect(isDialectRoute("/api/chat")).toBe(true);
    expect(isDialectRoute("/api/tags")).toBe(false);
  });
});
