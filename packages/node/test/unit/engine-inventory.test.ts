// EngineInventory without sockets: a fake dispatcher answers the model-list probes.
import { clockAt, SYSTEM_TIMERS } from "@pair/cluster";
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { describe, expect, it } from "vitest";
import { EngineInventory, engineTarget, type EngineSpec } from "../../src/engines/engine-inventory.js";

const spec = (name: string): EngineSpec => ({
  name,
  api: "openai",
  baseUrl: `http://127.0.0.1:1/${name}/v1`,
  maxConcurrent: 4,
  probeIntervalMs: 1_000,
  firstByteTimeoutMs: 1_000,
});

function inventory(models: Map<string, string[] | "down">) {
  const dispatcher = {
    request: (options: { path: string }) => {
      const name = options.path.split("/")[1] ?? "";
      const answer = models.get(name);
      if (answer === undefined || answer === "down") return Promise.reject(new Error("ECONNREFUSED"));
      const text = JSON.stringify({ data: answer.map((id) => ({ id })) });
      return Promise.resolve({ statusCode: 200, body: Readable.from([Buffer.from(text)]) });
    },
  } as unknown as Dispatcher;
  return new EngineInventory({
    engines: [spec("a"), spec("b")],
    dispatcher,
    runtime: { clock: clockAt(() => 0), timers: SYSTEM_TIMERS },
  });
}

describe("EngineInventory.serving", () => {
  it("answers the healthy engines serving a model, in config order, as probes and failures change them", async () => {
    const models = new Map<string, string[] | "down">([
      ["a", ["m", "only-a", "m"]],
      ["b", ["m"]],
    ]);
    const inv = inventory(models);
    await inv.probeOnce();
    const names = (model: string) => inv.serving(model).map((e) => e.spec.name);
    expect(names("m")).toEqual(["a", "b"]);
    expect(names("only-a")).toEqual(["a"]);
    expect(names("nobody")).toEqual([]);
    inv.markDown("a", "refused");
    expect(names("m")).toEqual(["b"]);
    expect(names("only-a")).toEqual([]);
    await inv.probeOnce();
    expect(names("m")).toEqual(["a", "b"]);
    models.set("b", "down");
    await inv.probeOnce();
    expect(names("m")).toEqual(["a"]);
    expect(inv.serving("m")[0]?.healthy).toBe(true);
  });
});

describe("engineTarget", () => {
  it("splits an engine route into origin and path, as engineUrl does", () => {
    expect(engineTarget("http://127.0.0.1:8000/v1", "/chat/completions")).toEqual({
      origin: "http://127.0.0.1:8000",
      path: "/v1/chat/completions",
    });
    expect(engineTarget("http://127.0.0.1:11435/", "/api/chat")).toEqual({
      origin: "http://127.0.0.1:11435",
      path: "/api/chat",
    });
    expect(engineTarget("https://[::1]:9/pair/v1/peer/route/v1", "/chat/completions")).toEqual({
      origin: "https://[::1]:9",
      path: "/pair/v1/peer/route/v1/chat/completions",
    });
  });
});

describe("EngineInventory probes", () => {
  it("stops reading a model list past the cap: the engine is down, and the rest is never read", async () => {
    let sent = 0;
    const huge = Readable.from(
      (function* () {
        for (let i = 0; i < 400; i++) {
          sent += 1;
          yield Buffer.alloc(1024 * 1024, 0x20);
        }
      })(),
    );
    const dispatcher = {
      request: () => Promise.resolve({ statusCode: 200, body: huge }),
    } as unknown as Dispatcher;
    const inv = new EngineInventory({
      engines: [spec("a")],
      dispatcher,
      runtime: { clock: clockAt(() => 0), timers: SYSTEM_TIMERS },
    });
    await inv.probeOnce();
    const state = inv.engines[0]!;
    expect(state.healthy).toBe(false);
    expect(state.lastError).toMatch(/larger than 16 MiB/);
    expect(sent).toBeLessThan(20);
  });
});
