// Context windows through a running node (docs/context.md): each engine kind's context refusal
// fails over before the first byte; a prompt no window holds is refused with context_too_long in
// both dialects; a local Ollama is sent the num_ctx the prompt needs instead of cutting it; an
// engine's tokenizer keeps a prompt near its window local. The emulator counts one token a word.
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { startCluster, type Cluster, type EngineDecl } from "./node-harness.js";

const defer = cleanupAfterEach();
const MODEL = "m:1b";

const words = (n: number, word = "w") => Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");

async function cluster(decls: readonly EngineDecl[]): Promise<Cluster> {
  const c = await startCluster(decls);
  defer(() => c.close());
  // Every engine up, its window read.
  await until(async () => {
    const rows = (await admin(c, "/pair/v1/models")) as {
      model: string;
      context_tokens: Record<string, number>;
    }[];
    return rows.some((r) => r.model === MODEL && r.context_tokens["node-a"] !== undefined);
  });
  await until(() => c.node.inventory.engines.every((e) => e.healthy && e.windows?.has(MODEL) === true));
  return c;
}

async function admin(c: Cluster, path: string): Promise<unknown> {
  const res = await fetch(`${c.node.url}${path}`, {
    headers: { authorization: `Bearer ${c.node.adminToken}` },
  });
  return res.json();
}

async function lastWorkload(c: Cluster): Promise<WorkloadJson> {
  const rows = (await admin(c, "/pair/v1/history")) as WorkloadJson[];
  return rows[0]!;
}

async function post(c: Cluster, path: string, body: object) {
  const res = await request(`${c.node.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: (await res.body.json()) as Record<string, unknown>,
  };
}

const chat = (c: Cluster, content: string, max = 4) =>
  post(c, "/v1/chat/completions", { model: MODEL, max_tokens: max, messages: [{ role: "user", content }] });

describe("context windows through a node", () => {
  it("each engine kind's context refusal (vLLM, llama.cpp, TGI) fails over before the first byte", async () => {
    // The three small engines claim a large window (context_tokens), so PAIR sends them the prompt.
    const small = (name: string, flavor: "vllm" | "llamacpp" | "tgi"): EngineDecl => ({
      name,
      api: "openai",
      flavor,
      models: [{ name: MODEL, contextTokens: 200 }],
      yaml: ["    context_tokens: 100000"],
    });
    const c = await cluster([
      small("small-vllm", "vllm"),
      small("small-llamacpp", "llamacpp"),
      small("small-tgi", "tgi"),
      { name: "big", api: "openai", models: [{ name: MODEL, contextTokens: 100000 }] },
    ]);
    const short = await chat(c, "hello there");
    expect(short.status).toBe(200);
    expect(short.headers["x-pair-route-reason"]).toBeUndefined();
    expect((await lastWorkload(c)).attempts).toEqual([{ target: "engine small-vllm" }]);

    const long = await chat(c, words(500));
    expect(long.status).toBe(200);
    expect(long.headers["x-pair-route-reason"]).toBe("context");
    const w = await lastWorkload(c);
    expect(w.attempts).toEqual([
      { target: "engine small-vllm", error: "context_too_long" },
      { target: "engine small-llamacpp", error: "context_too_long" },
      { target: "engine small-tgi", error: "context_too_long" },
      { target: "engine big" },
    ]);
    expect(w).toMatchObject({ status: "completed", engine: "big", route_reason: "context" });
  });

  it("refuses a prompt no window holds with context_too_long, naming the largest window and the prompt's size, in both dialects", async () => {
    const c = await cluster([
      { name: "vllm", api: "openai", models: [{ name: MODEL, contextTokens: 2000 }] },
      { name: "ollama", api: "ollama", models: [{ name: MODEL, contextTokens: 3000, numCtx: 1024 }] },
    ]);
    const openai = await chat(c, words(4000));
    expect(openai.status).toBe(400);
    const error = openai.body["error"] as { code: string; message: string; type: string };
    expect(error.code).toBe("context_too_long");
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain("3000 tokens (engine ollama)");
    const w = await lastWorkload(c);
    expect(w).toMatchObject({ status: "failed", error_code: "context_too_long", attempts: [] });
    expect(error.message).toContain(`about ${w.est_prompt_tokens} tokens`);
    expect(w.est_prompt_tokens).toBeGreaterThan(4000);

    const ollama = await post(c, "/api/generate", { model: MODEL, prompt: words(4000), stream: false });
    expect(ollama.status).toBe(400);
    expect(ollama.body).toMatchObject({ code: "context_too_long", node: "node-a" });
    expect(typeof ollama.body["error"]).toBe("string");
  });

  it("sends a local Ollama the num_ctx the prompt needs, so it is not cut; with num_ctx: off the window is what it runs with", async () => {
    const decl = (yaml: string[] = []): EngineDecl => ({
      name: "ollama",
      api: "ollama",
      models: [{ name: MODEL, contextTokens: 100000, numCtx: 256 }],
      yaml,
    });
    const c = await cluster([decl()]);
    const generated = await post(c, "/api/generate", {
      model: MODEL,
      prompt: words(600),
      stream: false,
      options: { num_predict: 3 },
    });
    expect(generated.status).toBe(200);
    // Not cut: Ollama saw all 600 words, and the reply starts where the prompt starts.
    expect(generated.body["prompt_eval_count"]).toBe(600);
    expect(String(generated.body["response"]).startsWith("w0 w1")).toBe(true);
    const translated = await chat(c, words(600), 3);
    const content = (translated.body["choices"] as { message: { content: string } }[])[0]!.message.content;
    expect(content.startsWith("w0 w1")).toBe(true);
    const ps = (await (await fetch(`${c.engines.get("ollama")!.url}/api/ps`)).json()) as {
      models: { context_length: number }[];
    };
    expect(ps.models[0]!.context_length).toBeGreaterThan(600);
    // A short prompt that fits as the model runs is left alone (no reload).
    await post(c, "/api/generate", {
      model: MODEL,
      prompt: "hi",
      stream: false,
      options: { num_predict: 3 },
    });
    const after = (await (await fetch(`${c.engines.get("ollama")!.url}/api/ps`)).json()) as {
      models: { context_length: number }[];
    };
    expect(after.models[0]!.context_length).toBe(256);

    const off = await cluster([decl(["    num_ctx: off"])]);
    const refused = await post(off, "/api/generate", { model: MODEL, prompt: words(600), stream: false });
    expect(refused.status).toBe(400);
    expect(refused.body["code"]).toBe("context_too_long");
  });

  it("asks the engine's tokenizer when the estimate is near its window: a prompt that fits stays", async () => {
    const c = await cluster([
      { name: "vllm", api: "openai", models: [{ name: MODEL, contextTokens: 1000 }] },
    ]);
    // 400 long words: about 1,900 tokens by the estimate, 406 by the engine's tokenizer.
    const res = await chat(c, words(400, "wordnumber"), 10);
    expect(res.status).toBe(200);
    const w = await lastWorkload(c);
    expect(w.est_prompt_tokens).toBe(406);
    expect(w.route_reason).toBeNull();
  });
});
