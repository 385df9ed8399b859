import { afterEach, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator, type EngineEmulatorOptions } from "../src/index.js";
import { SlotLimiter } from "../src/engine/slot-limiter.js";
import { postJson, waitFor } from "./wire-readers.js";

const open: EngineEmulator[] = [];
async function emulator(options: Partial<EngineEmulatorOptions>): Promise<EngineEmulator> {
  const emu = await startEngineEmulator({ api: "openai", models: ["m"], ...options });
  open.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

const chat = (emu: EngineEmulator, body: object = {}, init: RequestInit = {}): Promise<Response> =>
  postJson(
    `${emu.url}/v1/chat/completions`,
    { model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 3, ...body },
    init,
  );

describe("concurrency limit", () => {
  it("queues beyond maxConcurrent, never exceeding it", async () => {
    const emu = await emulator({ maxConcurrent: 2, whenFull: "queue", tokenDelayMs: 10 });
    // Each takes ~100 ms, far longer than the five take to arrive: they overlap.
    const requests = [0, 1, 2, 3, 4].map(() =>
      chat(emu, { max_tokens: 10 }).then(async (res) => (await res.text(), res.status)),
    );
    expect(await Promise.all(requests)).toEqual([200, 200, 200, 200, 200]);
    const stats = emu.stats();
    expect(stats).toMatchObject({
      requests: 5,
      completed: 5,
      maxInFlightSeen: 2,
      inFlight: 0,
      queued: 0,
      rejected503: 0,
    });
    expect(stats.maxQueuedSeen).toBeGreaterThanOrEqual(1);
  });

  it("grants freed slots in arrival order, and never to a waiter that left", async () => {
    const limiter = new SlotLimiter(1, "queue", 10);
    const never = new AbortController().signal;
    expect(await limiter.acquire(never)).toBe("granted");
    const granted: string[] = [];
    const leaving = new AbortController();
    const waits = ["a", "b", "c"].map((name) =>
      limiter
        .acquire(name === "b" ? leaving.signal : never)
        .then((result) => granted.push(`${name}:${result}`)),
    );
    leaving.abort();
    limiter.release();
    limiter.release();
    await Promise.all(waits);
    expect(granted).toEqual(["b:aborted", "a:granted", "c:granted"]);
    expect([limiter.active, limiter.queued, limiter.maxActiveSeen, limiter.maxQueuedSeen]).toEqual([
      1, 0, 1, 3,
    ]);
  });

  it('answers 503 at once with whenFull "503", in each dialect\'s shape', async () => {
    const emu = await emulator({ api: "both", maxConcurrent: 1, whenFull: "503", tokenDelayMs: 20 });
    const holder = await chat(emu, { stream: true, max_tokens: 500 });
    expect(holder.status).toBe(200);
    const openAi = await chat(emu);
    expect(openAi.status).toBe(503);
    expect(await openAi.json()).toEqual({
      error: {
        message: "The engine is currently overloaded, please try again later.",
        type: "server_error",
        param: null,
        code: null,
      },
    });
    const ollama = await postJson(`${emu.url}/api/generate`, { model: "m", prompt: "x" });
    expect(ollama.status).toBe(503);
    expect(await ollama.json()).toEqual({
      error: "server busy, please try again.  maximum pending requests exceeded",
    });
    expect((await fetch(`${emu.url}/v1/models`)).status).toBe(200); // listings never wait for a slot
    expect(emu.stats()).toMatchObject({ rejected503: 2, inFlight: 1 });
    await holder.body?.cancel();
  });

  it("refuses with 503 once the bounded queue is full", async () => {
    const emu = await emulator({ maxConcurrent: 1, whenFull: "queue", maxQueued: 1, tokenDelayMs: 10 });
    const holder = await chat(emu, { stream: true, max_tokens: 500 });
    const second = chat(emu);
    await waitFor(() => emu.stats().queued === 1);
    const third = await chat(emu);
    expect(third.status).toBe(503);
    await holder.body?.cancel();
    expect((await second).status).toBe(200);
    expect(emu.stats()).toMatchObject({ completed: 1, cancelled: 1, rejected503: 1 });
  });

  it("counts a client that leaves the queue as cancelled and frees its place", async () => {
    const emu = await emulator({ maxConcurrent: 1, tokenDelayMs: 10 });
    const holder = await chat(emu, { stream: true, max_tokens: 500 });
    const controller = new AbortController();
    const waiting = chat(emu, {}, { signal: controller.signal });
    await waitFor(() => emu.stats().queued === 1);
    controller.abort();
    await expect(waiting).rejects.toThrow();
    await waitFor(() => emu.stats().cancelled === 1);
    expect(emu.stats().queued).toBe(0);
    await holder.body?.cancel();
  });
});
