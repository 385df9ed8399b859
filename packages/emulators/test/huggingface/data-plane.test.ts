// Each endpoint's data plane at status.url: access types, the engine answering (JSON and SSE),
// scaled-to-zero 503 or hold with X-Scale-Up-Timeout (released by the virtual clock), paused 503,
// idle scale-to-zero (never while a stream is open), and the Inference Providers router.
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, BOB, MINUTE, runningEndpoint, startHarness, testTls, type Harness } from "./hf-harness.js";

const open: Harness[] = [];
async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const h = await startHarness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const chat = {
  model: "Qwen/Qwen3-0.6B",
  messages: [{ role: "user", content: "hello there" }],
  max_tokens: 4,
};

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("access types", () => {
  it("private: 401 without a token and for another namespace; the owner's token is served", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    const none = await h.call("GET", `${url}/v1/models`);
    expect(none.status).toBe(401);
    expect(none.json.error).toBeTruthy();
    expect((await h.call("GET", `${url}/v1/models`, { token: BOB })).status).toBe(401);
    expect((await h.call("GET", `${url}/v1/models`, { token: "hf_made_up_token" })).status).toBe(401);
    const ok = await h.call("GET", `${url}/v1/models`, { token: ALICE });
    expect(ok.status).toBe(200);
    expect(ok.json["data"]).toEqual([expect.objectContaining({ id: "Qwen/Qwen3-0.6B" })]);
  });

  it("authenticated: any valid token; public: no token at all", async () => {
    const h = await harness();
    const auth = await runningEndpoint(h, "auth-ep", { type: "authenticated" });
    expect((await h.call("GET", `${auth.url}/v1/models`)).status).toBe(401);
    expect((await h.call("GET", `${auth.url}/v1/models`, { token: BOB })).status).toBe(200);
    const pub = await runningEndpoint(h, "pub-ep", { type: "public" });
    expect((await h.call("GET", `${pub.url}/v1/models`)).status).toBe(200);
    expect((await h.call("GET", `${pub.url}/health`)).status).toBe(200);
  });
});

describe("serving", () => {
  it("answers chat and text completions, and streams SSE", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    const whole = await h.call("POST", `${url}/v1/chat/completions`, { token: ALICE, body: chat });
    expect(whole.status).toBe(200);
    expect(whole.json).toMatchObject({ object: "chat.completion", usage: { completion_tokens: 4 } });
    const text = await h.call("POST", `${url}/v1/completions`, {
      token: ALICE,
      body: { model: chat.model, prompt: "hi", max_tokens: 2 },
    });
    expect(text.json).toMatchObject({ object: "text_completion" });
    const stream = await h.call("POST", `${url}/v1/chat/completions`, {
      token: ALICE,
      body: { ...chat, stream: true },
    });
    expect(stream.headers["content-type"]).toContain("text/event-stream");
    expect(stream.text.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("serves /v1 only for OpenAI engines: HF's default image is the Inference Toolkit", async () => {
    const h = await harness();
    const model = (image?: unknown) => ({
      model: {
        repository: "Qwen/Qwen3-0.6B",
        framework: image === undefined ? "pytorch" : "custom",
        task: "text-generation",
        ...(image === undefined ? {} : { image }),
      },
    });
    const toolkit = await runningEndpoint(h, "toolkit", model());
    expect((await h.call("GET", `${toolkit.url}/v1/models`, { token: ALICE })).status).toBe(404);
    expect((await h.call("GET", `${toolkit.url}/health`, { token: ALICE })).status).toBe(200);
    const predicted = await h.call("POST", `${toolkit.url}/predict`, {
      token: ALICE,
      body: { inputs: "hi" },
    });
    expect(predicted.status).toBe(200);
    expect(predicted.json).toEqual([{ generated_text: "hi (Qwen/Qwen3-0.6B)" }]);
    const served = async (name: string, image: unknown) =>
      (
        await h.call("GET", `${(await runningEndpoint(h, name, model(image))).url}/v1/models`, {
          token: ALICE,
        })
      ).status;
    expect(await served("tgi", { tgi: { url: "ghcr.io/huggingface/text-generation-inference:3.3.4" } })).toBe(
      200,
    );
    expect(await served("llama", { llamacpp: { url: "ghcr.io/ggml-org/llama.cpp:server" } })).toBe(200);
    expect(await served("custom-port", { custom: { url: "my/engine:1", port: 8080 } })).toBe(200);
    expect(await served("custom-bare", { custom: { url: "my/engine:1" } })).toBe(404);
  });
});

describe("scale to zero, holding, pause", () => {
  it("answers 503 at once when scaled to zero, and the request starts a replica (billing again)", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/scale-to-zero`, { token: ALICE });
    const cold = await h.call("POST", `${url}/v1/chat/completions`, { token: ALICE, body: chat });
    expect(cold.status).toBe(503);
    expect(cold.json.error).toContain("503 Service Unavailable");
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("initializing");
    h.emu.advance(60_000);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    expect((await h.call("POST", `${url}/v1/chat/completions`, { token: ALICE, body: chat })).status).toBe(
      200,
    );
  });

  it("holds a request carrying X-Scale-Up-Timeout until the replica is ready, released by the clock", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/scale-to-zero`, { token: ALICE });
    const pending = h.call("POST", `${url}/v1/chat/completions`, {
      token: ALICE,
      body: chat,
      headers: { "x-scale-up-timeout": "600" },
    });
    await waitFor(() => h.emu.endpoints.heldRequests("alice", "ep") === 1, "the request to be held");
    expect(h.emu.endpoints.get("alice", "ep")).toMatchObject({ state: "initializing", heldRequests: 1 });
    h.emu.advance(59_999);
    expect(h.emu.endpoints.heldRequests()).toBe(1);
    h.emu.advance(1);
    const served = await pending;
    expect(served.status).toBe(200);
    expect(served.json).toMatchObject({ object: "chat.completion" });
    expect(h.emu.endpoints.heldRequests()).toBe(0);
  });

  it("answers 503 to a held request when the timeout passes first", async () => {
    const h = await harness({ timings: { scaleUpMs: 10 * MINUTE } });
    const { url } = await runningEndpoint(h, "ep");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/scale-to-zero`, { token: ALICE });
    const pending = h.call("POST", `${url}/v1/chat/completions`, {
      token: ALICE,
      body: chat,
      headers: { "x-scale-up-timeout": "30" },
    });
    await waitFor(() => h.emu.endpoints.heldRequests() === 1, "the request to be held");
    h.emu.advance(30_000);
    const expired = await pending;
    expect(expired.status).toBe(503);
    expect(expired.json.error).toContain("X-Scale-Up-Timeout (30 s)");
  });

  it("answers 503 while paused (no wake, even with X-Scale-Up-Timeout) until resumed", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/pause`, { token: ALICE });
    const refused = await h.call("POST", `${url}/v1/chat/completions`, {
      token: ALICE,
      body: chat,
      headers: { "x-scale-up-timeout": "600" },
    });
    expect(refused.status).toBe(503);
    expect(refused.json.error).toContain("paused");
    h.emu.advance(60 * MINUTE);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("paused");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/resume`, { token: ALICE });
    h.emu.advance(150_000);
    expect((await h.call("POST", `${url}/v1/chat/completions`, { token: ALICE, body: chat })).status).toBe(
      200,
    );
  });

  it("scales to zero after scaleToZeroTimeout idle minutes, counted from the last request", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep");
    h.emu.advance(10 * MINUTE);
    await h.call("POST", `${url}/v1/chat/completions`, { token: ALICE, body: chat });
    h.emu.advance(15 * MINUTE - 1);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    h.emu.advance(1);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("scaledToZero");
    expect(h.emu.endpoints.get("alice", "ep")?.message).toContain("idle");
  });

  it("never scales to zero while a stream is open", async () => {
    const h = await harness({ engine: { tokenDelayMs: 20 } });
    const { url } = await runningEndpoint(h, "ep");
    const agent = new Agent({ connect: { ca: (await testTls()).caPem } });
    const res = await request(`${url}/v1/chat/completions`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
      body: JSON.stringify({ ...chat, stream: true, max_tokens: 1000 }),
    });
    expect(res.statusCode).toBe(200);
    await waitFor(() => h.emu.endpoints.get("alice", "ep")?.inFlight === 1, "the stream to be in flight");
    h.emu.advance(60 * MINUTE);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    res.body.destroy();
    await waitFor(() => h.emu.endpoints.get("alice", "ep")?.inFlight === 0, "the stream to end");
    h.emu.advance(15 * MINUTE);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("scaledToZero");
    await agent.close();
  });
});

describe("Inference Providers router", () => {
  it("needs a valid token, lists models with prices, answers with usage and charges per token", async () => {
    const h = await harness();
    const body = {
      model: "openai/gpt-oss-120b",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 10,
    };
    expect((await h.call("POST", `${h.emu.routerUrl}/chat/completions`, { body })).status).toBe(401);
    const models = await h.call("GET", `${h.emu.routerUrl}/models`, { token: BOB });
    expect(models.json["data"]).toContainEqual(
      expect.objectContaining({
        id: "openai/gpt-oss-120b",
        providers: [expect.objectContaining({ pricing: { input: 0.15, output: 0.6 } })],
      }),
    );
    const answer = await h.call("POST", `${h.emu.routerUrl}/chat/completions`, { token: BOB, body });
    expect(answer.status).toBe(200);
    const usage = answer.json["usage"] as { prompt_tokens: number; completion_tokens: number };
    expect(usage.completion_tokens).toBe(10);
    expect(h.emu.meter.routerMicroUsd("bob")).toBeCloseTo(usage.prompt_tokens * 0.15 + 10 * 0.6, 6);
    expect(h.emu.meter.routerMicroUsd("alice")).toBe(0);
  });
});
