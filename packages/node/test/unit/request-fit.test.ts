// Fitting one request to candidates' windows: the free bound, the estimate near a window, the
// tokenizer's exact count, the skipped windows behind context_too_long, and Ollama's num_ctx plan.
import { describe, expect, it } from "vitest";
import {
  BYTES_PER_TOKEN,
  estimatePromptTokens,
  IMAGE_TOKENS,
  plannedNumCtx,
  RequestFit,
  requestedOutputTokens,
  TEMPLATE_MARGIN_TOKENS,
  withNumCtx,
  type ModelWindow,
} from "../../src/context/index.js";
import type { DialectRequests } from "@pair/dialects";

type Chat = DialectRequests["/v1/chat/completions"];
const chat = (content: string, max?: number): Chat => ({
  model: "m",
  messages: [{ role: "user", content }],
  ...(max === undefined ? {} : { max_tokens: max }),
});
const fitOf = (req: Chat) =>
  new RequestFit("/v1/chat/completions", req, Buffer.byteLength(JSON.stringify(req)), 512);

describe("prompt size", () => {
  it("estimates text at 3 bytes a token, plus per message and the template margin; images at a fixed cost", () => {
    const text = "x".repeat(3_000);
    // The text and the role's 4 bytes; 8 for the message.
    expect(estimatePromptTokens("/v1/chat/completions", chat(text))).toBe(
      Math.ceil(3_004 / BYTES_PER_TOKEN) + 8 + TEMPLATE_MARGIN_TOKENS,
    );
    const withImage: Chat = {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "abc" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(1_000_000)}` } },
          ],
        },
      ],
    };
    expect(estimatePromptTokens("/v1/chat/completions", withImage)).toBeLessThan(IMAGE_TOKENS + 200);
  });

  it("embeddings are fitted by their largest input, not their sum", () => {
    const input = Array.from({ length: 100 }, () => "y".repeat(3 * BYTES_PER_TOKEN * 100));
    const est = estimatePromptTokens("/v1/embeddings", { model: "m", input });
    expect(est).toBeLessThan(400);
  });

  it("requested output: max_completion_tokens, max_tokens, num_predict; none for unlimited; 0 for embeddings", () => {
    expect(
      requestedOutputTokens("/v1/chat/completions", { ...chat("a", 10), max_completion_tokens: 20 }),
    ).toBe(20);
    expect(requestedOutputTokens("/v1/chat/completions", chat("a", 10))).toBe(10);
    expect(
      requestedOutputTokens("/api/chat", { model: "m", messages: [], options: { num_predict: -1 } }),
    ).toBe(undefined);
    expect(
      requestedOutputTokens("/api/generate", { model: "m", prompt: "p", options: { num_predict: 7 } }),
    ).toBe(7);
    expect(requestedOutputTokens("/api/embed", { model: "m", input: "x" })).toBe(0);
  });
});

describe("RequestFit", () => {
  it("a short prompt fits on its bound alone: the estimate is never made", () => {
    const fit = fitOf(chat("hello", 16));
    expect(fit.holds(8192, "a", "engine a")).toBe(true);
    expect(fit.holds(undefined, "b", "engine b")).toBe(true);
    expect(fit.estimated).toBeUndefined();
    expect(fit.skippedAny).toBe(false);
  });

  it("a long prompt is estimated once, skipped where it cannot fit, and remembered for the refusal", () => {
    const fit = fitOf(chat("word ".repeat(6_000), 100));
    expect(fit.holds(4096, "small", "engine small")).toBe(false);
    expect(fit.holds(32768, "rented:big", "rented node big")).toBe(true);
    expect(fit.estimated).toBeGreaterThan(9_000);
    expect(fit.decided).toBe(true);
    expect(fit.holds(8192, "rented:mid", "rented node mid")).toBe(false);
    const error = fit.tooLong("m", "me");
    expect(error.code).toBe("context_too_long");
    expect(error.message).toContain("8192 tokens (rented node mid)");
    expect(error.message).toContain(`about ${fit.estimated} tokens`);
  });

  it("only a skipped LAN candidate (or a refusal) counts as windows deciding the route", () => {
    const fit = fitOf(chat("word ".repeat(6_000)));
    expect(fit.holds(4096, "rented:small", "rented node small")).toBe(false);
    expect(fit.decided).toBe(false);
    fit.refused("rented:x", "rented node x", 16384);
    expect(fit.decided).toBe(true);
    expect(fit.largestSkipped()).toEqual({ label: "rented node x", tokens: 16384, rerouted: true });
  });

  it("the output reserved counts: the requested one, else the default", () => {
    const prompt = "z".repeat(2_700);
    expect(fitOf(chat(prompt, 10)).holds(1_200, "a", "a")).toBe(true);
    expect(fitOf(chat(prompt)).holds(1_200, "a", "a")).toBe(false);
  });

  it("TGI's input cap applies to the prompt alone", () => {
    const fit = fitOf(chat("q".repeat(3_000), 10));
    const tgi: ModelWindow = { tokens: 100_000, maxInputTokens: 500, source: "tgi_info", tokenizer: "tgi" };
    expect(fit.holds(tgi, "tgi", "engine tgi")).toBe(false);
  });

  it("an exact count replaces the estimate for its engine only; counting is worth it only near a window", () => {
    const fit = fitOf(chat("hello there ".repeat(2_200), 100));
    const window: ModelWindow = { tokens: 8192, source: "max_model_len", tokenizer: "vllm" };
    expect(fit.worthCounting(window)).toBe(true);
    expect(fit.worthCounting({ ...window, tokens: 1_000 })).toBe(false);
    expect(fit.worthCounting({ ...window, tokens: 1_000_000 })).toBe(false);
    expect(fit.holds(window, "v", "engine v")).toBe(false);
    fit.setExact("v2", 4_000);
    expect(fit.holds(window, "v2", "engine v2")).toBe(true);
    expect(fit.holds(window, "other", "engine other")).toBe(false);
  });
});

describe("Ollama num_ctx", () => {
  const w: ModelWindow = { tokens: 32768, runningTokens: 4096, source: "ollama" };
  it("leaves a request that fits as the model runs alone", () => {
    expect(plannedNumCtx(w, 4000, undefined)).toBeUndefined();
    expect(plannedNumCtx(w, 9000, 16384)).toBeUndefined();
  });
  it("raises to the next power of two, at most the window, never below what the client asked", () => {
    expect(plannedNumCtx(w, 5000, undefined)).toBe(8192);
    expect(plannedNumCtx(w, 20000, undefined)).toBe(32768);
    expect(plannedNumCtx(w, 40000, undefined)).toBe(32768);
    expect(plannedNumCtx(w, 5000, 2048)).toBe(8192);
  });
  it("rewrites only options.num_ctx in the body", () => {
    const body = JSON.stringify({ model: "m", prompt: "p", options: { temperature: 0.5 } });
    expect(JSON.parse(withNumCtx(body, 8192))).toEqual({
      model: "m",
      prompt: "p",
      options: { temperature: 0.5, num_ctx: 8192 },
    });
  });
});
