import { afterEach, describe, expect, it } from "vitest";
import { EmulatorOptionError, startEngineEmulator, type EngineEmulator } from "../src/index.js";
import { postJson } from "./wire-readers.js";

const open: EngineEmulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

async function guarded(apiKey: string | readonly string[]): Promise<EngineEmulator> {
  const emu = await startEngineEmulator({ api: "both", models: ["m"], apiKey });
  open.push(emu);
  return emu;
}

const chat = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 2 };

describe("apiKey (vLLM --api-key)", () => {
  it("refuses /v1 requests without the key, with vLLM's 401 body and no WWW-Authenticate", async () => {
    const emu = await guarded("sk-right");
    for (const headers of [{}, { authorization: "Bearer sk-wrong" }, { authorization: "Basic sk-right" }]) {
      const res = await postJson(`${emu.url}/v1/chat/completions`, chat, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBeNull();
      expect(await res.json()).toEqual({ error: "Unauthorized" });
    }
    const models = await fetch(`${emu.url}/v1/models`);
    expect(models.status).toBe(401);
    await models.body?.cancel();
    expect(emu.stats().requests).toBe(0);
  });

  it("accepts the key with any capitalisation of the scheme, and one of several keys", async () => {
    const emu = await guarded(["sk-a", "sk-b"]);
    const res = await postJson(`${emu.url}/v1/chat/completions`, chat, {
      headers: { authorization: "bEaReR sk-b" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: "chat.completion" });
  });

  it("refuses a stream before any SSE byte", async () => {
    const emu = await guarded("sk-right");
    const res = await postJson(
      `${emu.url}/v1/chat/completions`,
      { ...chat, stream: true },
      {
        headers: { authorization: "Bearer sk-wrong" },
      },
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/json");
    await res.body?.cancel();
  });

  it("leaves /health and the Ollama routes open", async () => {
    const emu = await guarded("sk-right");
    const health = await fetch(`${emu.url}/health`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
    const tags = await fetch(`${emu.url}/api/tags`);
    expect(tags.status).toBe(200);
    await tags.body?.cancel();
  });

  it("rejects an empty key at start", async () => {
    await expect(startEngineEmulator({ api: "openai", models: ["m"], apiKey: "" })).rejects.toThrow(
      EmulatorOptionError,
    );
    await expect(startEngineEmulator({ api: "openai", models: ["m"], apiKey: [] })).rejects.toThrow(/apiKey/);
  });
});
