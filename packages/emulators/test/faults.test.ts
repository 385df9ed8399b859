import { afterEach, describe, expect, it } from "vitest";
import { startEngineEmulator, type EngineEmulator, type EngineEmulatorOptions } from "../src/index.js";
import { FaultInjector } from "../src/engine/faults.js";
import { failureOf, ndjson, postJson, waitFor } from "./wire-readers.js";

const open: EngineEmulator[] = [];
async function emulator(options: Partial<EngineEmulatorOptions>): Promise<EngineEmulator> {
  const emu = await startEngineEmulator({ api: "both", models: ["m"], ...options });
  open.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

const chat = (emu: EngineEmulator, body: object = {}, init: RequestInit = {}): Promise<Response> =>
  postJson(
    `${emu.url}/v1/chat/completions`,
    { model: "m", messages: [{ role: "user", content: "a b c d e" }], max_tokens: 5, ...body },
    init,
  );

/** Reads a body until it ends or breaks; returns what arrived and how it ended. */
async function readUntilBroken(res: Response): Promise<{ text: string; ended: "complete" | "broken" }> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>)
      text += decoder.decode(chunk, { stream: true });
    return { text, ended: "complete" };
  } catch {
    return { text, ended: "broken" };
  }
}

describe("refuseConnections", () => {
  it("refuses from the start, then serves on the same port once cleared", async () => {
    const emu = await emulator({ faults: { refuseConnections: true } });
    expect(await failureOf(fetch(`${emu.url}/v1/models`))).toBe("ECONNREFUSED");
    await emu.setFaults({});
    expect((await fetch(`${emu.url}/v1/models`)).status).toBe(200);
  });

  it("at run time, drops open streams and refuses new connections", async () => {
    const emu = await emulator({ tokenDelayMs: 10 });
    const streaming = await chat(emu, { stream: true, max_tokens: 50 });
    await emu.setFaults({ refuseConnections: true });
    expect((await readUntilBroken(streaming)).ended).toBe("broken");
    expect(await failureOf(chat(emu))).toBe("ECONNREFUSED");
    await emu.setFaults({ refuseConnections: false });
    expect((await chat(emu)).status).toBe(200);
  });
});

describe("failBeforeFirstByte", () => {
  it("answers the status with each dialect's error body", async () => {
    const emu = await emulator({ faults: { failBeforeFirstByte: { status: 500 } } });
    const openAi = await chat(emu, { stream: true });
    expect(openAi.status).toBe(500);
    expect(await openAi.json()).toMatchObject({
      error: { type: "server_error", message: expect.stringContaining("error while processing") as unknown },
    });
    const ollama = await postJson(`${emu.url}/api/chat`, {
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect([ollama.status, await ollama.json()]).toEqual([
      500,
      { error: "llama runner process has terminated: exit status 2" },
    ]);
    await emu.setFaults({ failBeforeFirstByte: { status: 502 } });
    expect((await chat(emu)).status).toBe(502);
    expect(emu.stats()).toMatchObject({ faulted: 3, completed: 0 });
  });
});

describe("cutMidStream", () => {
  it("destroys an SSE stream after n tokens: role chunk, n deltas, no [DONE]", async () => {
    const emu = await emulator({ faults: { cutMidStream: { afterTokens: 2 } } });
    const res = await chat(emu, { stream: true });
    expect(res.status).toBe(200);
    const { text, ended } = await readUntilBroken(res);
    expect(ended).toBe("broken");
    const events = text.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(3);
    expect(text).not.toContain("[DONE]");
    expect(emu.stats()).toMatchObject({ faulted: 1, tokensGenerated: 2 });
  });

  it("cuts an NDJSON stream after 0 tokens, with the headers already sent", async () => {
    const emu = await emulator({ faults: { cutMidStream: { afterTokens: 0 } } });
    const res = await postJson(`${emu.url}/api/generate`, { model: "m", prompt: "x" });
    expect(res.status).toBe(200);
    expect(await readUntilBroken(res)).toEqual({ text: "", ended: "broken" });
  });

  it("cuts before the final object when n reaches the reply's length", async () => {
    const emu = await emulator({ faults: { cutMidStream: { afterTokens: 99 } } });
    const res = await postJson(`${emu.url}/api/generate`, {
      model: "m",
      prompt: "x",
      options: { num_predict: 2 },
    });
    const { text, ended } = await readUntilBroken(res);
    expect(ended).toBe("broken");
    expect(ndjson(text).map((line) => line["done"])).toEqual([false, false]);
  });

  it("drops a non-streaming request without an answer", async () => {
    const emu = await emulator({ faults: { cutMidStream: { afterTokens: 1 } } });
    expect(await failureOf(chat(emu).then((res) => res.text()))).not.toBe("no failure");
    expect(emu.stats().faulted).toBe(1);
  });
});

describe("hangBeforeFirstByte", () => {
  it("holds the request until the client gives up, then counts it cancelled", async () => {
    const emu = await emulator({ faults: { hangBeforeFirstByte: true } });
    expect(await failureOf(chat(emu, {}, { signal: AbortSignal.timeout(50) }))).toMatch(/abort|timeout/i);
    await waitFor(() => emu.stats().cancelled === 1);
    expect(emu.stats()).toMatchObject({ inFlight: 0, completed: 0 });
  });

  it("ends hung requests promptly on close()", async () => {
    const emu = await emulator({ faults: { hangBeforeFirstByte: {} } });
    const hung = failureOf(chat(emu));
    await waitFor(() => emu.stats().inFlight === 1);
    const started = performance.now();
    await emu.close();
    expect(await hung).not.toBe("no failure");
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("seeded probability", () => {
  async function pattern(emu: EngineEmulator, seed: number): Promise<number[]> {
    await emu.setFaults({ failBeforeFirstByte: { status: 500, probability: 0.3 }, seed });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await chat(emu, { max_tokens: 1 });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return statuses;
  }

  it("replays the same failures from the same seed, and other ones from another", async () => {
    const emu = await emulator({});
    const first = await pattern(emu, 42);
    const failures = first.filter((status) => status === 500).length;
    expect(failures).toBeGreaterThan(3);
    expect(failures).toBeLessThan(25);
    expect(await pattern(emu, 42)).toEqual(first);
    expect(await pattern(emu, 43)).not.toEqual(first);
    expect(emu.stats().faultSeed).toBe(43);
  });

  it("decides per request from (seed, index) alone, with hang before fail before cut", () => {
    const all = new FaultInjector({
      hangBeforeFirstByte: true,
      failBeforeFirstByte: { status: 500 },
      cutMidStream: { afterTokens: 1 },
    });
    expect(all.decide()).toEqual({ kind: "hang" });
    const mixed = {
      failBeforeFirstByte: { status: 503, probability: 0.5 },
      cutMidStream: { afterTokens: 4, probability: 0.5 },
      seed: 9,
    };
    const a = new FaultInjector(mixed);
    const b = new FaultInjector(mixed);
    const runA = Array.from({ length: 50 }, () => a.decide().kind);
    expect(Array.from({ length: 50 }, () => b.decide().kind)).toEqual(runA);
    expect(new Set(runA)).toEqual(new Set(["fail", "cut", "none"]));
  });

  it("refuses bad fault settings, naming the field", async () => {
    const emu = await emulator({});
    await expect(emu.setFaults({ failBeforeFirstByte: { status: 200 } })).rejects.toThrow(
      /faults.failBeforeFirstByte.status/,
    );
    await expect(emu.setFaults({ cutMidStream: { afterTokens: 1, probability: 2 } })).rejects.toThrow(
      /probability/,
    );
  });
});
