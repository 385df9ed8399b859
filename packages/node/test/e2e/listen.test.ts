import { HOLDING_RUNTIME } from "@pair/cluster";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey, type LoopbackPolicy } from "../../src/auth/index.js";
import { parseConfig } from "../../src/config/index.js";
import { ListenError, startNode } from "../../src/node.js";

function config(listen: string, dataDir: string, keys = false) {
  const yaml = [
    "node:",
    `  data_dir: ${dataDir}`,
    `  listen: ${listen}`,
    ...(keys
      ? ["  api_keys:", "    - id: app", "      key_credential: os-credential-store:pair/app-key"]
      : []),
    "engines: []",
  ].join("\n");
  return parseConfig(yaml, "t.yaml", { homeDir: dataDir, hostName: "t" });
}

describe("listening", () => {
  it("says how to move Ollama when the client port is taken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-listen-"));
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const err = await startNode({ config: config(`127.0.0.1:${port}`, dir) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ListenError);
      expect((err as ListenError).code).toBe("port_in_use");
      expect((err as Error).message).toMatch(/OLLAMA_HOST=127\.0\.0\.1:11435 ollama serve/);
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to listen beyond loopback without an API key in the data dir (config api_keys count for nothing)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-listen-"));
    try {
      const err = await startNode({ config: config("0.0.0.0:18999", dir, true) }).catch((e: unknown) => e);
      expect((err as ListenError).code).toBe("auth_required");
      expect((err as Error).message).toContain("node.listen 0.0.0.0: auth_required:");
      expect((err as Error).message).toContain("`pair apikey create ID`");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Tests bind loopback only: the policy pretends 127.0.0.1 is beyond it.
  const beyond: LoopbackPolicy = { isLoopbackHost: () => false, isLoopbackPeer: () => false };

  it("refuses while every key is revoked, and starts once one is active", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-listen-"));
    const deps = { runtime: HOLDING_RUNTIME, randomBytes: (n: number) => randomBytes(n) };
    const lines: string[] = [];
    try {
      await createApiKey(dir, "old", deps);
      await revokeApiKey(dir, "old", deps);
      const options = {
        config: config("127.0.0.1:1", dir),
        overrides: { port: 0 },
        seams: { loopback: beyond },
      };
      const err = await startNode(options).catch((e: unknown) => e);
      expect((err as ListenError).code).toBe("auth_required");
      await createApiKey(dir, "new", deps);
      const node = await startNode({
        ...options,
        seams: { ...options.seams, log: (line) => lines.push(line) },
      });
      await node.close(0);
      expect(lines.join("\n")).toContain("callers from other machines need an API key (1 active");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says that node.api_keys in the config is not used", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-listen-"));
    const lines: string[] = [];
    try {
      const node = await startNode({
        config: config("127.0.0.1:1", dir, true),
        overrides: { port: 0 },
        seams: { log: (l) => lines.push(l) },
      });
      await node.close(0);
      expect(lines.join("\n")).toMatch(/node\.api_keys in the config is not used.*pair apikey create ID/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
