// `pair demo --basic` in-process: the single-node sandbox comes up on its own ports, serves both dialects, shows up in
// `pair history`, and on a signal closes the node and the emulators and removes its temp folder.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoJson } from "@pair/demo";
import { DEMO_ENGINES, DEMO_SHARED_MODEL, startDemoSandbox } from "@pair/demo";
import { manualSignals, portClosed, runCli, startCli } from "../../node/test/cli/cli-harness.js";

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "pair-demo-test-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const portOf = (url: string) => Number(new URL(url).port);

describe("pair demo --basic --json", () => {
  it("starts a sandbox, prints one JSON line, and cleans everything up on SIGTERM", async () => {
    const signals = manualSignals();
    const demo = startCli(["demo", "--basic", "--json"], { signals, tmpDir: tmp });
    const line = await demo.waitFor("stdout", /\n/);
    expect(line.split("\n")).toHaveLength(2);
    const info = JSON.parse(line) as DemoJson;
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(portOf(info.url)).not.toBe(11434);
    expect(info.config_file.startsWith(join(tmp, "pair-demo-"))).toBe(true);
    expect(info.data_dir.startsWith(join(tmp, "pair-demo-"))).toBe(true);
    expect(info.models).toEqual(["Qwen/Qwen2.5-7B-Instruct", "llama3.2:1b", "qwen2.5:0.5b"]);
    expect(info.engines.map((e) => e.api)).toEqual(["ollama", "openai"]);
    // The config file names the port the node really got, so `pair jobs` finds it.
    expect(readFileSync(info.config_file, "utf8")).toContain(`listen: 127.0.0.1:${portOf(info.url)}`);

    const res = await fetch(`${info.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify({
        model: "Qwen/Qwen2.5-7B-Instruct",
        messages: [{ role: "user", content: "hi" }],
        stream: false,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-pair-served-by")).toBe("demo");
    await res.text();
    const history = await runCli(["history", "--json"], { env: { PAIR_CONFIG: info.config_file } });
    expect(history.code).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual([
      expect.objectContaining({ model: "Qwen/Qwen2.5-7B-Instruct", engine: "vllm", status: "completed" }),
    ]);

    signals.send("SIGTERM");
    const result = await demo.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/SIGTERM: stopping the demo/);
    expect(existsSync(info.config_file)).toBe(false);
    for (const url of [info.url, ...info.engines.map((e) => e.base_url)])
      expect(await portClosed(portOf(url)), url).toBe(true);
    expect(signals.listeners).toBe(0);
  });
});

describe("pair demo --basic", () => {
  it("prints what to try: curl in both dialects, the openai client, the ollama CLI, pair jobs/history", async () => {
    const signals = manualSignals();
    const demo = startCli(["demo", "--basic", "--port", "0"], { signals, tmpDir: tmp });
    const guide = await demo.waitFor("stdout", /Ctrl-C stops the demo/);
    const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(guide)?.[1] ?? "";
    const configFile = /PAIR_CONFIG=(\S+) npx pair jobs/.exec(guide)?.[1] ?? "";
    expect(guide).toContain(`curl -s ${url}/v1/chat/completions`);
    expect(guide).toContain(`curl -sN ${url}/v1/chat/completions`);
    expect(guide).toContain(`curl -sN ${url}/api/chat`);
    expect(guide).toContain(`curl -s ${url}/api/generate`);
    expect(guide).toContain(`client = OpenAI(base_url="${url}/v1", api_key="unused")`);
    expect(guide).toContain(`OLLAMA_HOST=${url.slice("http://".length)} ollama run llama3.2:1b`);
    expect(guide).toContain(`PAIR_CONFIG=${configFile} npx pair history`);
    expect(guide).toContain(`${DEMO_SHARED_MODEL} is on every engine`);
    expect(existsSync(configFile)).toBe(true);
    signals.send("SIGINT");
    expect((await demo.done).code).toBe(0);
    expect(existsSync(configFile)).toBe(false);
  });

  describe("ports", () => {
    let holder: Server;
    let taken: number;
    beforeAll(async () => {
      holder = createServer();
      await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
      taken = (holder.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => holder.close(() => r())));

    it("falls back to any free port when the preferred one is taken", async () => {
      const sandbox = await startDemoSandbox({ tmpDir: tmp, preferredPort: taken, engines: DEMO_ENGINES });
      try {
        expect(sandbox.port).not.toBe(taken);
        expect(readFileSync(sandbox.configFile, "utf8")).toContain(`listen: 127.0.0.1:${sandbox.port}`);
      } finally {
        await sandbox.close();
      }
      expect(existsSync(sandbox.dir)).toBe(false);
      for (const e of sandbox.engines) expect(await portClosed(e.port)).toBe(true);
    });

    it("an explicit --port that is taken: exit 1, nothing left behind", async () => {
      const r = await runCli(["demo", "--basic", "--port", String(taken)], { tmpDir: tmp });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`pair demo: port ${taken} is in use — pick another with --port N`);
      expect(r.stdout).toBe("");
      expect(readdirSync(tmp)).toEqual([]);
    });
  });
});
