// `pair serve` in-process: start from a config file, log events, answer the CLI, stop gracefully on a signal.
import { createServer } from "node:net";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, manualSignals, portClosed, runCli, startCli, writeConfig } from "./cli-harness.js";

let engine: EngineEmulator;
beforeAll(async () => {
  engine = await startEngineEmulator({
    api: "ollama",
    name: "ollama",
    models: [{ name: "llama3.2:1b", maxTokens: 10 }],
    tokenDelayMs: 30,
  });
});
afterAll(() => engine.close());

function nodeConfig(port: number, dataDir: string, clusterPort: number): string {
  return [
    "node:",
    "  name: serve-test",
    `  data_dir: ${dataDir}`,
    `  listen: 127.0.0.1:${port}`,
    `  cluster_listen: 127.0.0.1:${clusterPort}`,
    "engines:",
    "  - name: ollama",
    "    api: ollama",
    `    base_url: ${engine.url}`,
    "    probe_interval_s: 0.2",
  ].join("\n");
}

describe("pair serve", () => {
  it("runs until SIGINT, lets a stream in flight finish, then exits 0", async () => {
    const port = await freePort();
    const clusterPort = await freePort();
    const c = writeConfig((dir) => nodeConfig(port, `${dir}/data`, clusterPort));
    const signals = manualSignals();
    try {
      const serve = startCli(["serve", "--config", c.file], { signals });
      const log = await serve.waitFor("stderr", /listening on/);
      expect(log).toContain(`config: ${c.file}`);
      expect(log).toMatch(/^\S+Z engine ollama: up, 1 model\(s\)$/m);
      expect(log).toContain(`node serve-test listening on http://127.0.0.1:${port}`);
      expect(serve.stdout()).toBe("");

      const status = await runCli(["status", "--json", "--config", c.file]);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ node: "serve-test", config_file: c.file });

      // A stream in flight when the stop is asked for still completes.
      const res = await fetch(`http://127.0.0.1:${port}/api/generate`, {
        method: "POST",
        body: JSON.stringify({ model: "llama3.2:1b", prompt: "hello" }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      signals.send("SIGINT");
      let text = "";
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += Buffer.from(r.value).toString();
      expect(text).toMatch(/"done":true/);

      const result = await serve.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /SIGINT: stopping — no new requests; 1 in flight get up to 10 s to finish/,
      );
      expect(result.stderr).toMatch(/ stopped\n$/);
      expect(await portClosed(port)).toBe(true);
      expect(signals.listeners).toBe(0);
      // Repeated probes of an unchanged engine are not logged again.
      expect(result.stderr.match(/engine ollama: up/g)).toHaveLength(1);
    } finally {
      c.cleanup();
    }
  });

  it("a taken port: exit 1 with the message on how to move Ollama", async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const port = (holder.address() as { port: number }).port;
    const clusterPort = await freePort();
    const c = writeConfig((dir) => nodeConfig(port, `${dir}/data`, clusterPort));
    const signals = manualSignals();
    try {
      const r = await runCli(["serve", "--config", c.file], { signals });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`pair serve: 127.0.0.1:${port} is already in use`);
      expect(r.stderr).toContain("OLLAMA_HOST=127.0.0.1:11435 ollama serve");
      expect(signals.listeners).toBe(0);
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
      c.cleanup();
    }
  });

  it("a data dir it cannot write: exit 1 naming it", async () => {
    const c = writeConfig(
      (dir) => `node:\n  data_dir: ${dir}/pair.yaml/data\n  listen: 127.0.0.1:1\nengines: []\n`,
    );
    try {
      const r = await runCli(["serve", "--config", c.file], { signals: manualSignals() });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`pair serve: cannot use the data dir ${c.dir}/pair.yaml/data`);
    } finally {
      c.cleanup();
    }
  });

  it("a config from $PAIR_CONFIG with a bad key: exit 1 naming the key path and code", async () => {
    const c = writeConfig(
      "node:\n  name: x\nengines:\n  - name: e\n    api: ollama\n    base_url: http://example.com:11434\n",
    );
    try {
      const r = await runCli(["serve"], { env: { PAIR_CONFIG: c.file } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/engines\[0\]\.base_url: insecure_url: /);
    } finally {
      c.cleanup();
    }
  });
});
