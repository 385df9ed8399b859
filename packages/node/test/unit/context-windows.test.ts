// Context windows as each engine kind states them, and each engine kind's refusal of a prompt too
// long for its window (the shapes of docs/context.md; wire texts as the engines answer them).
import { describe, expect, it } from "vitest";
import {
  configuredWindow,
  contextRefusalOf,
  llamaCppPropsWindow,
  lmStudioWindow,
  ollamaPsWindows,
  ollamaShowWindow,
  ollamaWindow,
  tgiInfoWindow,
} from "../../src/context/index.js";

describe("windows on the wire", () => {
  it("Ollama: the trained window by architecture, a Modelfile num_ctx, and /api/ps per loaded model", () => {
    const show = {
      parameters: 'num_ctx                        8192\nstop                           "<|eot_id|>"',
      model_info: { "general.architecture": "llama", "llama.context_length": 131072 },
    };
    expect(ollamaShowWindow(show)).toEqual({ trained: 131072, modelfileNumCtx: 8192 });
    expect(ollamaShowWindow({ parameters: "", model_info: { "general.architecture": "x" } })).toEqual({});
    const ps = {
      models: [
        { name: "llama3:8b", context_length: 4096 },
        { name: "bad", context_length: -1 },
      ],
    };
    expect([...ollamaPsWindows(ps)]).toEqual([["llama3:8b", 4096]]);
  });

  it("Ollama: PAIR may raise num_ctx up to the trained window (or context_tokens); off keeps what it runs with", () => {
    expect(ollamaWindow({ trained: 131072, raise: true })).toEqual({
      tokens: 131072,
      runningTokens: 4096,
      source: "ollama",
    });
    expect(ollamaWindow({ trained: 131072, modelfileNumCtx: 8192, raise: false })?.tokens).toBe(8192);
    expect(ollamaWindow({ trained: 131072, override: 32768, raise: true })).toMatchObject({
      tokens: 32768,
      source: "config",
    });
    // A loaded num_ctx above the default is another request's: the next one runs with the default.
    expect(ollamaWindow({ trained: 131072, loadedNumCtx: 16384, raise: false })?.tokens).toBe(4096);
    expect(ollamaWindow({ trained: 131072, loadedNumCtx: 2048, raise: false })?.tokens).toBe(2048);
    expect(ollamaWindow({ raise: true })).toBeUndefined();
  });

  it("llama.cpp /props, TGI /info (new and old), LM Studio's loaded window", () => {
    expect(llamaCppPropsWindow({ default_generation_settings: { n_ctx: 8192 }, total_slots: 1 })).toBe(8192);
    expect(llamaCppPropsWindow({ n_ctx: 4096 })).toBe(4096);
    expect(llamaCppPropsWindow({ detail: "Not Found" })).toBeUndefined();
    expect(tgiInfoWindow({ model_id: "m", max_input_tokens: 1023, max_total_tokens: 1024 })).toEqual({
      total: 1024,
      input: 1023,
    });
    expect(tgiInfoWindow({ model_id: "m", max_input_length: 999, max_total_tokens: 1024 })).toEqual({
      total: 1024,
      input: 999,
    });
    expect(tgiInfoWindow({ max_total_tokens: 1024 })).toBeUndefined();
    expect(lmStudioWindow({ max_context_length: 32768, loaded_context_length: 4096 })).toBe(4096);
  });

  it("context_tokens: one number, or by model with * for the rest", () => {
    expect(configuredWindow(8192, "any")).toBe(8192);
    expect(configuredWindow({ a: 1024, "*": 2048 }, "a")).toBe(1024);
    expect(configuredWindow({ a: 1024, "*": 2048 }, "b")).toBe(2048);
    expect(configuredWindow({ a: 1024 }, "b")).toBeUndefined();
    expect(configuredWindow(undefined, "a")).toBeUndefined();
  });
});

describe("context refusals", () => {
  const cases: [string, number, unknown, number | undefined][] = [
    [
      "vLLM (old)",
      400,
      {
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).",
          type: "BadRequestError",
          code: 400,
        },
      },
      8192,
    ],
    [
      "vLLM (2026)",
      400,
      {
        error: {
          message:
            "You passed 9000 input tokens and requested 10 output tokens. However, the model's context length is only 8192 tokens",
        },
      },
      8192,
    ],
    [
      "vLLM max_tokens",
      400,
      { error: { message: "max_tokens=9000 cannot be greater than max_model_len=8192" } },
      8192,
    ],
    [
      "llama.cpp",
      400,
      {
        error: {
          code: 400,
          message:
            "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 9000,
          n_ctx: 8192,
        },
      },
      8192,
    ],
    [
      "TGI total",
      422,
      {
        error:
          "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`",
        error_type: "validation",
      },
      4096,
    ],
    [
      "TGI input",
      422,
      {
        error: "Input validation error: `inputs` must have less than 4095 tokens. Given: 5000",
        error_type: "validation",
      },
      4095,
    ],
    ["Ollama truncate:false", 400, { error: "the input length exceeds the context length" }, undefined],
    [
      "OpenAI",
      400,
      {
        error: {
          message: "Your input exceeds the context window of this model.",
          code: "context_length_exceeded",
        },
      },
      undefined,
    ],
    ["a PAIR peer", 400, { error: { message: "…", code: "context_too_long" } }, undefined],
  ];
  for (const [what, status, body, window] of cases)
    it(`${what}: a context refusal${window === undefined ? "" : ` naming ${window}`}`, () => {
      const refusal = contextRefusalOf(status, body);
      expect(refusal).toBeDefined();
      expect(refusal?.windowTokens).toBe(window);
    });

  it("anything else is not one: another 400, a 5xx with the same words", () => {
    expect(contextRefusalOf(400, { error: { message: "temperature must be <= 2" } })).toBeUndefined();
    expect(contextRefusalOf(500, { error: "the input length exceeds the context length" })).toBeUndefined();
  });
});
