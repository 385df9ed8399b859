import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  EmulatorOptionError,
  startEngineEmulator,
  type EngineEmulator,
  type EngineEmulatorOptions,
} from "../src/index.js";
import { postJson, rawPost, readChunks, waitFor } from "./wire-readers.js";

const open: EngineEmulator[] = [];
async function emulator(options: Partial<EngineEmulatorOptions>): Promise<EngineEmulator> {
  const emu = await startEngineEmulator({
    api: "both",
    models: [{ name: "m", contextTokens: 1 << 24 }],
    ...options,
  });
  open.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("client disconnect", () => {
  it("stops generating when the client leaves mid-stream and counts the cancellation", async () => {
    const emu = await emulator({ tokenDelayMs: 5 });
    const controller = new AbortController();
    const res = await postJson(
      `${emu.url}/v1/chat/completions`,
      { model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 1000, stream: true },
      { signal: controller.signal },
    );
    await readChunks(res, 3);
    controller.abort();
    await waitFor(() => emu.stats().cancelled === 1);
    const generated = emu.stats().tokensGenerated;
    await sleep(30);
    expect(emu.stats()).toMatchObject({ tokensGenerated: generated, inFlight: 0, completed: 0 });
    expect(generated).toBeLessThan(50);
  });

  it("does the same for an Ollama stream read through a raw socket", async () => {
    const emu = await emulator({ tokenDelayMs: 5 });
    const socket = await rawPost(emu.port, "/api/generate", {
      model: "m",
      prompt: "x",
      options: { num_predict: 1000 },
    });
    socket.once("data", () => socket.destroy());
    await waitFor(() => emu.stats().cancelled === 1);
    expect(emu.stats().tokensGenerated).toBeLessThan(50);
  });
});

describe("backpressure", () => {
  it("waits for 'drain' instead of buffering when the client does not read", async () => {
    const emu = await emulator({ tokenDelayMs: 0 });
    const socket = await rawPost(emu.port, "/v1/chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 5_000_000,
      stream: true,
    });
    // The socket is never read: the kernel buffers fill, res.write() returns false, generation waits.
    // Wait until the count holds still for 100 ms (it would keep growing without backpressure).
    let stalled = -1;
    for (let tries = 0; tries < 40 && emu.stats().tokensGenerated !== stalled; tries++) {
      stalled = emu.stats().tokensGenerated;
      await sleep(100);
    }
    expect(emu.stats().tokensGenerated).toBe(stalled);
    expect(stalled).toBeGreaterThan(0);
    expect(stalled).toBeLessThan(500_000);
    expect(emu.stats().inFlight).toBe(1);
    socket.destroy();
    await waitFor(() => emu.stats().cancelled === 1);
    expect(emu.stats().inFlight).toBe(0);
  });
});

describe("close()", () => {
  it("ends streams, queued requests and idle connections at once", async () => {
    const emu = await emulator({ tokenDelayMs: 20, maxConcurrent: 1 });
    const body = { model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 500, stream: true };
    const streaming = await postJson(`${emu.url}/v1/chat/completions`, body);
    const queued = postJson(`${emu.url}/v1/chat/completions`, body).then(
      () => "answered",
      () => "failed",
    );
    await waitFor(() => emu.stats().queued === 1);
    const started = performance.now();
    await emu.close();
    expect(performance.now() - started).toBeLessThan(200);
    expect(await queued).toBe("failed");
    await expect(streaming.text()).rejects.toThrow();
    expect(emu.stats()).toMatchObject({ inFlight: 0, queued: 0, cancelled: 2 });
    await emu.close(); // idempotent
  });
});

describe("options", () => {
  it("refuses bad options at start, naming the option", async () => {
    const bad: [Partial<EngineEmulatorOptions>, RegExp][] = [
      [{ models: [] }, /models/],
      [{ models: ["a", "a"] }, /models\[1\]\.name/],
      [{ models: [{ name: "a", maxTokens: -1 }] }, /models\[0\]\.maxTokens/],
      [{ tokenDelayMs: 1.5 }, /tokenDelayMs/],
      [{ maxConcurrent: 0 }, /maxConcurrent/],
      [{ host: "0.0.0.0" as "127.0.0.1" }, /loopback/],
      [{ faults: { cutMidStream: { afterTokens: -1 } } }, /afterTokens/],
    ];
    for (const [options, message] of bad) {
      const attempt = startEngineEmulator({ api: "openai", models: ["m"], ...options });
      await expect(attempt).rejects.toThrow(message);
      await expect(attempt).rejects.toBeInstanceOf(EmulatorOptionError);
    }
  });

  it("answers 413 to a body over maxBodyBytes, and keeps serving", async () => {
    const emu = await emulator({ maxBodyBytes: 1024 });
    const res = await postJson(`${emu.url}/api/chat`, {
      model: "m",
      messages: [{ role: "user", content: "x".repeat(4096) }],
    });
    expect([res.status, await res.json()]).toEqual([413, { error: "http: request body too large" }]);
    expect((await fetch(`${emu.url}/api/tags`)).status).toBe(200);
  });
});

function openssl(): string | undefined {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return "openssl";
  } catch {
    return undefined;
  }
}

describe("TLS", () => {
  it.skipIf(!openssl())(
    "serves HTTPS with the given key and certificate (skipped without openssl)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "emu-tls-"));
      try {
        execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
      ], { stdio: "ignore" }); // prettier-ignore
        const key = readFileSync(join(dir, "key.pem"), "utf8");
        const cert = readFileSync(join(dir, "cert.pem"), "utf8");
        const emu = await emulator({ api: "ollama", tls: { key, cert } });
        expect(emu.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const body = await new Promise<string>((resolve, reject) => {
          request(`${emu.url}/api/version`, { ca: cert }, (res) => {
            let text = "";
            res.on("data", (chunk: Buffer) => (text += chunk.toString()));
            res.on("end", () => resolve(text));
          })
            .on("error", reject)
            .end();
        });
        expect(JSON.parse(body)).toHaveProperty("version");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
