import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ollamaChatToOpenAI,
  openAIChatToOllama,
  validateOllamaChatRequest,
  validateOpenAIChatRequest,
  type OpenAIChatRequest,
  type OpenAIMessage,
} from "../src/index.js";
import { JPEG, PNG, ok } from "./fixtures.js";

/** What a chat request asks for, independent of how either dialect spells it. */
function meaning(req: OpenAIChatRequest): unknown {
  const callNames = new Map<string, string>();
  const text = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content
            .flatMap((p: { type: string; text?: string }) => (p.type === "text" ? [p.text ?? ""] : []))
            .join("\n")
        : "";
  const images = (content: unknown): string[] =>
    Array.isArray(content)
      ? content.flatMap((p: { type: string; image_url?: { url: string } }) =>
          p.type === "image_url" ? [p.image_url?.url.replace(/^data:[^,]*,/, "") ?? ""] : [],
        )
      : [];
  const messages = req.messages.map((m: OpenAIMessage) => {
    switch (m.role) {
      case "assistant":
        for (const call of m.tool_calls ?? []) callNames.set(call.id, call.function.name);
        return {
          role: "assistant",
          text: text(m.content),
          calls: (m.tool_calls ?? []).map((c) => ({
            name: c.function.name,
            args: JSON.parse(c.function.arguments) as unknown,
          })),
        };
      case "tool":
        return { role: "tool", text: text(m.content), answers: callNames.get(m.tool_call_id) };
      case "user":
        return { role: "user", text: text(m.content), images: images(m.content) };
      default:
        return { role: "system", text: text(m.content) };
    }
  });
  const format = req.response_format;
  const stop = req.stop === undefined ? [] : typeof req.stop === "string" ? [req.stop] : [...req.stop];
  // Through JSON, as on the wire (-0 is 0 there).
  return JSON.parse(
    JSON.stringify({
      model: req.model,
      messages,
      maxTokens: req.max_completion_tokens ?? req.max_tokens,
      sampling: [
        req.temperature,
        req.top_p,
        req.seed,
        req.frequency_penalty,
        req.presence_penalty,
        req.top_k,
        req.min_p,
      ],
      stop,
      format:
        format === undefined || format.type === "text"
          ? undefined
          : format.type === "json_schema" && format.json_schema.schema !== undefined
            ? format.json_schema.schema
            : "json",
      tools: req.tool_choice === "none" ? [] : (req.tools ?? []).map((t) => t.function),
      effort: ["low", "medium", "high"].includes(req.reasoning_effort ?? "")
        ? req.reasoning_effort
        : undefined,
      stream: req.stream === true,
    }),
  ) as unknown;
}

const words = fc.string({ maxLength: 12 });
const jsonArgs = fc.dictionary(
  fc.string({ maxLength: 5 }),
  fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.boolean()),
  {
    maxKeys: 3,
  },
);

/** A user turn, or an assistant turn whose tool calls are each answered by a tool message. */
const turn: fc.Arbitrary<Record<string, unknown>[]> = fc.oneof(
  fc.record({ role: fc.constantFrom("system", "developer"), content: words }).map((m) => [m]),
  words.map((content) => [{ role: "user", content }]),
  fc
    .array(
      fc.oneof(
        words.map((text) => ({ type: "text", text })),
        fc
          .constantFrom(PNG, JPEG)
          .map((b64) => ({ type: "image_url", image_url: { url: `data:image/x;base64,${b64}` } })),
      ),
      { maxLength: 4 },
    )
    .map((content) => [{ role: "user", content }]),
  fc
    .tuple(
      fc.option(words, { nil: undefined }),
      fc.array(fc.tuple(fc.constantFrom("f", "g", "h"), jsonArgs), { maxLength: 3 }),
    )
    .chain(([content, calls]) =>
      fc
        .tuple(
          fc.nat(),
          fc.shuffledSubarray([...calls.keys()], { minLength: calls.length, maxLength: calls.length }),
        )
        .map(([salt, order]) => {
          const ids = calls.map((_, k) => `id_${salt}_${k}`);
          return [
            {
              role: "assistant",
              ...(content !== undefined ? { content } : {}),
              ...(calls.length > 0
                ? {
                    tool_calls: calls.map(([name, args], k) => ({
                      id: ids[k],
                      type: "function",
                      function: { name, arguments: JSON.stringify(args) },
                    })),
                  }
                : {}),
            },
            // Results may come back in any order: each names the call it answers by id.
            ...order.map((k) => ({
              role: "tool",
              tool_call_id: ids[k],
              content: `result of ${calls[k]?.[0]}`,
            })),
          ];
        }),
    ),
);

const chatRequest = fc
  .record(
    {
      messages: fc.array(turn, { minLength: 1, maxLength: 5 }).map((turns) => turns.flat()),
      max_tokens: fc.integer({ min: 1, max: 4096 }),
      max_completion_tokens: fc.integer({ min: 1, max: 4096 }),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      seed: fc.integer(),
      frequency_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
      presence_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
      top_k: fc.integer({ min: 1, max: 100 }),
      min_p: fc.double({ min: 0, max: 1, noNaN: true }),
      stop: fc.oneof(words, fc.array(words, { maxLength: 3 })),
      n: fc.constant(1),
      stream: fc.boolean(),
      response_format: fc.oneof(
        fc.constant({ type: "text" }),
        fc.constant({ type: "json_object" }),
        fc.constant({ type: "json_schema", json_schema: { name: "n", schema: { type: "object" } } }),
        fc.constant({ type: "json_schema", json_schema: { name: "n" } }),
      ),
      tools: fc.array(
        fc
          .constantFrom("f", "g")
          .map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } })),
        { maxLength: 2 },
      ),
      tool_choice: fc.constantFrom("none", "auto", "required"),
      reasoning_effort: fc.constantFrom("low", "medium", "high", "minimal"),
    },
    { requiredKeys: ["messages"] },
  )
  .map((fields) => ({ model: "m", ...fields }));

describe("round trip", () => {
  it("OpenAI → Ollama → OpenAI keeps the meaning of any chat request", () => {
    fc.assert(
      fc.property(chatRequest, (raw) => {
        const original = ok(validateOpenAIChatRequest(raw));
        const ollama = ok(openAIChatToOllama(original));
        // What reaches the Ollama engine is itself a valid Ollama request.
        const valid = ok(validateOllamaChatRequest(JSON.parse(JSON.stringify(ollama.body))));
        const back = ok(
          ollamaChatToOpenAI({ ...valid, stream: ollama.stream }, { samplingExtensions: true }),
        );
        expect(back.stream).toBe(original.stream === true);
        expect(meaning(back.body)).toEqual(meaning(original));
      }),
      { numRuns: 300 },
    );
  });
});
