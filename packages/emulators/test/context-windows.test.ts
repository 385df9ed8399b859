// Context windows in the engine emulator: each OpenAI flavor states its window where the real
// server does, counts tokens on its tokenizer route, and refuses a prompt too long in its own
// words; Ollama reports num_ctx and cuts a prompt over it without an error, and the reply shows it.
import { afterEach, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator, type OpenAiFlavor } from "../src/index.js";
import { postJson } from "./wire-readers.js";

const open: EngineEmulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

async function engine(flavor: OpenAiFlavor): Promise<EngineEmulator> {
  const e = await startEngineEmulator({
    api: "openai",
    flavor,
    models: [{ name: "m", contextTokens: 100, maxTokens: 3 }],
  });
  open.push(e);
  return e;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
const chat = (e: EngineEmulator, n: number, max = 5) =>
  postJson(`${e.url}/v1/chat/completions`, {
    model: "m",
    max_tokens: max,
    messages: [{ role: "user", content: words(n) }],
  });

describe("OpenAI flavors", () => {
  it("vLLM: max_model_len in /v1/models, /tokenize counts the chat, a long prompt is a 400 naming the window", async () => {
    const e = await engine("vllm");
    const models = (await (await fetch(`${e.url}/v1/models`)).json()) as {
      data: { max_model_len: number }[];
    };
    expect(models.data[0]?.max_model_len).toBe(100);
    expect((await fetch(`${e.url}/props`)).status).toBe(404);
    const count = (await (
      await postJson(`${e.url}/tokenize`, { model: "m", messages: [{ role: "user", content: words(10) }] })
    ).json()) as { count: number; max_model_len: number };
    // 10 words, 3 for the message, 3 priming the reply (the emulator's tokenizer).
    expect(count).toMatchObject({ count: 16, max_model_len: 100 });
    expect((await chat(e, 50)).status).toBe(200);
    const refused = await chat(e, 95);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe("BadRequestError");
    expect(body.error.message).toContain("maximum context length is 100 tokens");
  });

  it("llama.cpp: n_ctx in /props, /tokenize lists tokens, a prompt at the window is exceed_context_size_error", async () => {
    const e = await engine("llamacpp");
    const props = (await (await fetch(`${e.url}/props`)).json()) as {
      default_generation_settings: { n_ctx: number };
    };
    expect(props.default_generation_settings.n_ctx).toBe(100);
    const models = (await (await fetch(`${e.url}/v1/models`)).json()) as { data: Record<string, unknown>[] };
    expect(models.data[0]?.["max_model_len"]).toBeUndefined();
    const tokens = (await (await postJson(`${e.url}/tokenize`, { content: words(7) })).json()) as {
      tokens: number[];
    };
    expect(tokens.tokens).toHaveLength(7);
    // llama.cpp checks the prompt alone: max_tokens past the window is no refusal.
    expect((await chat(e, 50, 90)).status).toBe(200);
    const refused = await chat(e, 100);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { type: "exceed_context_size_error", n_ctx: 100, n_prompt_tokens: 106 },
    });
  });

  it("TGI: max_input_tokens and max_total_tokens in /info, /tokenize, a 422 for input and for input + output", async () => {
    const e = await engine("tgi");
    expect(await (await fetch(`${e.url}/info`)).json()).toMatchObject({
      model_id: "m",
      max_input_tokens: 99,
      max_total_tokens: 100,
    });
    const tokens = (await (await postJson(`${e.url}/tokenize`, { inputs: words(4) })).json()) as unknown[];
    expect(tokens).toHaveLength(4);
    const total = await chat(e, 80, 30);
    expect(total.status).toBe(422);
    expect(((await total.json()) as { error: string }).error).toContain("must be <= 100");
    const input = await chat(e, 120);
    expect(input.status).toBe(422);
    expect(((await input.json()) as { error: string }).error).toContain("must have less than 99 tokens");
  });
});

describe("Ollama", () => {
  async function ollama(): Promise<EngineEmulator> {
    const e = await startEngineEmulator({
      api: "ollama",
      models: [{ name: "long:1b", contextTokens: 1000, numCtx: 64, maxTokens: 4 }],
    });
    open.push(e);
    return e;
  }
  const generate = (e: EngineEmulator, prompt: string, extra: object = {}) =>
    postJson(`${e.url}/api/generate`, { model: "long:1b", prompt, stream: false, ...extra });

  it("states the trained window and the Modelfile's num_ctx; /api/ps the window it runs with", async () => {
    const e = await ollama();
    const show = (await (await postJson(`${e.url}/api/show`, { model: "long:1b" })).json()) as {
      parameters: string;
      model_info: Record<string, unknown>;
    };
    expect(show.model_info["emulated.context_length"]).toBe(1000);
    expect(show.parameters).toMatch(/^num_ctx\s+64$/);
    await generate(e, "hi", { options: { num_ctx: 512 } });
    const ps = (await (await fetch(`${e.url}/api/ps`)).json()) as { models: { context_length: number }[] };
    expect(ps.models[0]?.context_length).toBe(512);
  });

  it("cuts a prompt over num_ctx without an error: the reply echoes the cut text, prompt_eval_count is num_ctx", async () => {
    const e = await ollama();
    const cut = (await (await generate(e, words(100))).json()) as {
      response: string;
      prompt_eval_count: number;
    };
    expect(cut.prompt_eval_count).toBe(64);
    // The first 36 words were dropped: the model answers about w36…, not w0….
    expect(cut.response.startsWith("w36 w37")).toBe(true);
    const whole = (await (await generate(e, words(100), { options: { num_ctx: 128 } })).json()) as {
      response: string;
      prompt_eval_count: number;
    };
    expect(whole.prompt_eval_count).toBe(100);
    expect(whole.response.startsWith("w0 w1")).toBe(true);
  });

  it("with truncate: false refuses it as Ollama does", async () => {
    const e = await ollama();
    const res = await generate(e, words(100), { truncate: false });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "the input length exceeds the context length" });
  });
});
