import { describe, expect, it } from "vitest";
import type { DialectRequests, DialectRoute } from "../src/index.js";
import { planExchange, type TokenCounts } from "../src/exchange-plan.js";

function passthroughCounts(
  route: DialectRoute,
  engineApi: "openai" | "ollama",
  chunks: readonly (string | Buffer)[],
) {
  const request = { model: "m", messages: [{ role: "user", content: "hi" }], stream: true };
  const plan = planExchange({
    route,
    request: request as unknown as DialectRequests[DialectRoute],
    raw: Buffer.from(JSON.stringify(request)),
    engineApi,
    id: "id-1",
    startedMs: 0,
    node: "node-a",
  });
  if (!plan.ok) throw new Error(plan.error.message);
  expect(plan.value.passthrough).toBe(true);
  const counts: TokenCounts = {};
  const relay = plan.value.relay(0, counts);
  const out =
    chunks.map((c) => relay.push(typeof c === "string" ? Buffer.from(c) : c)).join("") + relay.end();
  return { counts, out };
}

/** `text` cut into `parts` pieces at byte offsets, some of them inside multi-byte characters. */
function cut(text: string, parts: number): Buffer[] {
  const bytes = Buffer.from(text);
  const size = Math.ceil(bytes.length / parts);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  return pieces;
}

const sse = (...values: unknown[]) =>
  values.map((v) => `data: ${typeof v === "string" ? v : JSON.stringify(v)}\n\n`).join("");
const content = (text: string) => ({
  object: "chat.completion.chunk",
  choices: [{ delta: { content: text } }],
  usage: null,
});
const usage = {
  object: "chat.completion.chunk",
  choices: [],
  usage: { prompt_tokens: 7, completion_tokens: 3 },
};

describe("pass-through token counts", () => {
  it("reads the usage of the last OpenAI event before [DONE], however the stream was cut", () => {
    const stream = sse(content("data: ünïcödé 🙂"), content(" more"), usage, "[DONE]");
    for (const parts of [1, 2, 3, 4, 7]) {
      const r = passthroughCounts("/v1/chat/completions", "openai", cut(stream, parts));
      expect(r.counts, `${parts} chunks`).toEqual({ tokensIn: 7, tokensOut: 3 });
      expect(r.out).toBe("");
    }
  });

  it("finds no counts when the engine sent no usage, even with `data:` and `usage` in the text", () => {
    const stream = sse(content('"usage":{ data: x'), { choices: [], usage: null }, "[DONE]");
    expect(passthroughCounts("/v1/chat/completions", "openai", [stream]).counts).toEqual({});
  });

  it("reads the final usage without [DONE] (a stream that ended without it) and with CRLF lines", () => {
    const stream = `data: ${JSON.stringify(content("a"))}\r\n\r\ndata: ${JSON.stringify(usage)}\r\n\r\n`;
    expect(passthroughCounts("/v1/completions", "openai", [stream]).counts).toEqual({
      tokensIn: 7,
      tokensOut: 3,
    });
  });

  it("reads an Ollama stream's last line, the done object, with its big context array", () => {
    const lines = [
      { model: "m", message: { content: "hé" }, done: false },
      {
        model: "m",
        done: true,
        prompt_eval_count: 11,
        eval_count: 5,
        context: Array.from({ length: 2000 }, (_, i) => i),
      },
    ];
    const stream = lines.map((l) => `${JSON.stringify(l)}\n`).join("");
    expect(passthroughCounts("/api/chat", "ollama", cut(stream, 4)).counts).toEqual({
      tokensIn: 11,
      tokensOut: 5,
    });
    expect(
      passthroughCounts("/api/chat", "ollama", [stream.replace('"done":true', '"done":false')]).counts,
    ).toEqual({});
  });
});
