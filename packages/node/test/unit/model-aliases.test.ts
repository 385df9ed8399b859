// Model aliases at run time and in the exchange plan (issue 8): which names stand for one model, the
// engine sent its own name, the client's replies keeping the name it asked for.
import { describe, expect, it } from "vitest";
import { type DialectRequests, type DialectRoute, planExchange, type TokenCounts } from "@pair/dialects";
import { ModelAliases } from "../../src/server/model-aliases.js";

const GROUP = { name: "llama3-8b", models: ["llama3:8b", "meta-llama/Meta-Llama-3-8B-Instruct"] };
const REPO = "meta-llama/Meta-Llama-3-8B-Instruct";

describe("ModelAliases", () => {
  const aliases = new ModelAliases([GROUP]);

  it("every name of a group stands for the group, the asked-for name first; others only for themselves", () => {
    expect(aliases.namesOf("llama3-8b")).toEqual(["llama3-8b", "llama3:8b", REPO]);
    expect(aliases.namesOf(REPO)).toEqual([REPO, "llama3-8b", "llama3:8b"]);
    expect(aliases.namesOf("mistral")).toEqual(["mistral"]);
    expect(aliases.aliasOf("llama3:8b")).toBe("llama3-8b");
    expect(aliases.aliasOf("mistral")).toBeUndefined();
  });

  it("lists the alias of any served name, next to the names served", () => {
    expect([...aliases.withAliases(["llama3:8b", "mistral"])].sort()).toEqual([
      "llama3-8b",
      "llama3:8b",
      "mistral",
    ]);
  });
});

function plan(
  route: DialectRoute,
  engineApi: "openai" | "ollama",
  body: Record<string, unknown>,
  upstreamModel?: string,
) {
  const p = planExchange({
    route,
    request: body as unknown as DialectRequests[DialectRoute],
    raw: Buffer.from(JSON.stringify(body)),
    engineApi,
    id: "id-1",
    startedMs: 0,
    node: "node-a",
    ...(upstreamModel === undefined ? {} : { upstreamModel }),
  });
  if (!p.ok) throw new Error(p.error.message);
  return p.value;
}

const chat = (stream: boolean) => ({
  model: "llama3-8b",
  stream,
  messages: [{ role: "user", content: "hi" }],
  temperature: 0.5,
});

describe("an exchange with an engine that advertises the model under another name", () => {
  it("same dialect: the body carries the engine's name, everything else unchanged; the reply the client's", () => {
    const p = plan("/v1/chat/completions", "openai", chat(false), REPO);
    expect(p.passthrough).toBe(false);
    expect(JSON.parse(p.body.toString())).toEqual({ ...chat(false), model: REPO });
    expect(p.translateJson({ id: "x", model: REPO, choices: [] }, 0)).toEqual({
      id: "x",
      model: "llama3-8b",
      choices: [],
    });
  });

  it("same dialect, streamed: every event carries the client's name, usage still counted", () => {
    const p = plan("/v1/chat/completions", "openai", chat(true), REPO);
    const counts: TokenCounts = {};
    const relay = p.relay(0, counts);
    const events = [
      { id: "x", model: REPO, choices: [{ index: 0, delta: { content: "he" } }] },
      { id: "x", model: REPO, choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } },
    ];
    const out =
      relay.push(
        Buffer.from(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n"),
      ) + relay.end();
    expect(out).not.toContain(REPO);
    const data = out
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)) as { model: string });
    expect(data.map((d) => d.model)).toEqual(["llama3-8b", "llama3-8b"]);
    expect(out.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(counts).toEqual({ tokensIn: 3, tokensOut: 2 });
  });

  it("Ollama on both sides, streamed: NDJSON lines renamed", () => {
    const p = plan("/api/chat", "ollama", { ...chat(true), model: "llama3-8b" }, "llama3:8b");
    expect((JSON.parse(p.body.toString()) as { model: string }).model).toBe("llama3:8b");
    const relay = p.relay(0, {});
    const out =
      relay.push(
        Buffer.from(
          `${JSON.stringify({ model: "llama3:8b", done: false })}\n${JSON.stringify({ model: "llama3:8b", done: true, eval_count: 1 })}\n`,
        ),
      ) + relay.end();
    expect(
      out
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { model: string }).model),
    ).toEqual(["llama3-8b", "llama3-8b"]);
  });

  it("across dialects: the translated request names the engine's model, the translated reply the client's", () => {
    const p = plan("/v1/chat/completions", "ollama", chat(false), "llama3:8b");
    expect((JSON.parse(p.body.toString()) as { model: string }).model).toBe("llama3:8b");
    const reply = p.translateJson(
      {
        model: "llama3:8b",
        message: { role: "assistant", content: "hey" },
        done: true,
        prompt_eval_count: 1,
        eval_count: 1,
      },
      0,
    ) as { model: string };
    expect(reply.model).toBe("llama3-8b");
  });

  it("the same name: a pass-through, bytes untouched", () => {
    const p = plan("/v1/chat/completions", "openai", chat(false), "llama3-8b");
    expect(p.passthrough).toBe(true);
  });
});
