import { describe, expect, it } from "vitest";
import { countChatTokens, embedText, planReply, replyText, startEngineEmulator } from "../src/index.js";
import { frozenClock, postJson } from "./wire-readers.js";

const model = { name: "m", maxTokens: 12 };

describe("the token generator (pure core)", () => {
  it("gives the same tokens for the same model and prompt, every time", () => {
    const input = { promptText: "user: tell me a story", echoText: "tell me a story" };
    const a = [...planReply(model, input).tokens()];
    expect([...planReply(model, input).tokens()]).toEqual(a);
    expect(a).toHaveLength(12);
    expect(a.slice(0, 4)).toEqual(["tell", " me", " a", " story"]);
    expect(a.slice(1).every((token) => /^ \S+$/.test(token))).toBe(true);
  });

  it("continues differently for another model or another prompt", () => {
    const input = { promptText: "p", echoText: "" };
    const base = replyText(planReply(model, input));
    expect(replyText(planReply({ ...model, name: "other" }, input))).not.toBe(base);
    expect(replyText(planReply(model, { ...input, promptText: "q" }))).not.toBe(base);
  });

  it("makes exactly the requested number of tokens (length), else the model's default (stop)", () => {
    const limited = planReply(model, { promptText: "p", echoText: "p", maxTokens: 3 });
    expect([limited.completionTokens, limited.finishReason, [...limited.tokens()].length]).toEqual([
      3,
      "length",
      3,
    ]);
    const natural = planReply(model, { promptText: "p", echoText: "p" });
    expect([natural.completionTokens, natural.finishReason]).toEqual([12, "stop"]);
    expect([...planReply(model, { promptText: "p", echoText: "p", maxTokens: 0 }).tokens()]).toEqual([]);
  });

  it("counts chat prompt tokens as words plus a fixed overhead", () => {
    expect(
      countChatTokens([
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
      ]),
    ).toBe(3 + 2 + 3 + 1 + 3);
  });

  it("embeds deterministically, as unit vectors", () => {
    const embedder = { name: "e", embeddingDimensions: 32 };
    const vector = embedText(embedder, "hello");
    expect(embedText(embedder, "hello")).toEqual(vector);
    expect(embedText(embedder, "hellp")).not.toEqual(vector);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    expect(Math.hypot(...embedText(embedder, "hello", 4))).toBeCloseTo(1, 5);
  });
});

describe("the emulator with a frozen clock", () => {
  it("answers byte-identically across emulators for the same request sequence", async () => {
    const bodies = async (): Promise<string[]> => {
      const emu = await startEngineEmulator({ api: "both", models: ["m"], clock: frozenClock });
      try {
        const chat = { model: "m", messages: [{ role: "user", content: "same input" }], max_tokens: 6 };
        return [
          await (await postJson(`${emu.url}/v1/chat/completions`, chat)).text(),
          await (await postJson(`${emu.url}/v1/chat/completions`, { ...chat, stream: true })).text(),
          await (await postJson(`${emu.url}/api/chat`, chat)).text(),
          await (
            await postJson(`${emu.url}/api/generate`, { model: "m", prompt: "same input", stream: false })
          ).text(),
          await (await postJson(`${emu.url}/api/embed`, { model: "m", input: "same input" })).text(),
        ];
      } finally {
        await emu.close();
      }
    };
    const first = await bodies();
    expect(await bodies()).toEqual(first);
    expect(first[0]).toContain('"content":"same input');
  });
});
