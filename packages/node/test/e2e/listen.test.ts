import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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

  it("refuses to listen beyond loopback without authentication", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-listen-"));
    try {
      const err = await startNode({ config: config("0.0.0.0:18999", dir, true) }).catch((e: unknown) => e);
      expect((err as ListenError).code).toBe("auth_required");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
