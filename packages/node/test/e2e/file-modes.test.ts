// The data dir is the owner's alone, whatever the umask and whatever an earlier run left: it is set
// to 0700 at every start (also when it exists with a looser mode), and every SQLite file — history,
// the ledger and hosting stores — and its -wal and -shm are 0600 after the node has served a request.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator } from "@pair/emulators";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { startNode } from "../../src/node.js";
import { cleanupAfterEach } from "../support/eventually.js";

const MODEL = "qwen:0.5b";
const defer = cleanupAfterEach();
let umask: number;

// A umask that would leave files readable by others, as most systems have.
beforeEach(() => void (umask = process.umask(0o022)));
afterEach(() => void process.umask(umask));

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Every SQLite file under `dir` (databases, WAL, SHM), recursively. */
function sqliteFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sqliteFiles(path);
    return /\.db(-wal|-shm)?$/.test(name) ? [path] : [];
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pair-modes-"));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("file modes", () => {
  it("a data dir left 0755 with a 0644 history is made 0700, its databases, WAL and SHM 0600", async () => {
    const dataDir = join(tempDir(), "data");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, "history.db-wal"), "", { mode: 0o644 });
    const engine = await startEngineEmulator({
      api: "ollama",
      name: "m",
      models: [{ name: MODEL, maxTokens: 2 }],
    });
    defer(() => engine.close());
    const yaml = [
      "node:",
      "  name: modes",
      `  data_dir: ${dataDir}`,
      "  discovery: { mdns: false }",
      "engines:",
      "  - name: m",
      "    api: ollama",
      `    base_url: ${engine.url}`,
      "    probe_interval_s: 0.2",
    ].join("\n");
    const config = parseConfig(yaml, "modes.yaml", { homeDir: dataDir, hostName: "modes" });
    const node = await startNode({ config, overrides: { port: 0, clusterPort: 0 } });
    defer(() => node.close(500));
    const res = await fetch(`${node.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, stream: false, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    node.history.flush();

    expect(modeOf(dataDir).toString(8)).toBe("700");
    const files = sqliteFiles(dataDir);
    expect(files.map((f) => f.slice(dataDir.length + 1))).toEqual(
      expect.arrayContaining(["history.db", "history.db-wal", "history.db-shm"]),
    );
    for (const file of files) expect(modeOf(file).toString(8), file).toBe("600");
  });

  it("the ledger and hosting stores are 0600 with their WAL and SHM, a 0644 leftover WAL included", () => {
    const dir = tempDir();
    const ledgerPath = join(dir, "ledger.db");
    writeFileSync(`${ledgerPath}-wal`, "", { mode: 0o644 });
    const ledger = new SqliteLedgerStore({ path: ledgerPath });
    const hosting = new SqliteHostingStore({ path: join(dir, "hosting.db") });
    try {
      const files = sqliteFiles(dir);
      expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual([
        "hosting.db",
        "hosting.db-shm",
        "hosting.db-wal",
        "ledger.db",
        "ledger.db-shm",
        "ledger.db-wal",
      ]);
      for (const file of files) expect(modeOf(file).toString(8), file).toBe("600");
    } finally {
      ledger.close();
      hosting.close();
    }
  });
});
