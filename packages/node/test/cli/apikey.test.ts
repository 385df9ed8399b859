// `pair apikey create|list|revoke` in-process: --json shapes, the key shown once and never stored,
// usage errors (exit 2), refusals (exit 1), and a running node seeing each change without a restart.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseApiKey, type LoopbackPolicy } from "../../src/auth/index.js";
import { startCluster } from "../e2e/node-harness.js";
import { runCli, startCli, manualSignals, writeConfig } from "./cli-harness.js";

let config: ReturnType<typeof writeConfig>;
let dataDir: string;
beforeEach(() => {
  config = writeConfig((dir) => `node:\n  data_dir: ${dir}/data\n  listen: 127.0.0.1:11434\n`);
  dataDir = join(config.dir, "data");
});
afterEach(() => config.cleanup());

const cli = (...argv: string[]) => runCli(["apikey", ...argv, "--config", config.file]);
const json = <T>(text: string) => JSON.parse(text) as T;

describe("create", () => {
  it("--json prints {id, key, created_at} once; the data dir never holds the key", async () => {
    const r = await cli("create", "laptop", "--json");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const created = json<{ id: string; key: string; created_at: string }>(r.stdout);
    expect(created).toEqual({
      id: "laptop",
      key: expect.stringMatching(/^pair_laptop_[A-Za-z0-9_-]{43}$/) as string,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
    });
    const secret = parseApiKey(created.key)!.secret;
    for (const name of readdirSync(dataDir))
      expect(readFileSync(join(dataDir, name), "utf8")).not.toContain(secret);
  });

  it("prints the key for a person, how to send it, and that a loopback node needs node.listen", async () => {
    const r = await cli("create", "ci_bot");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^API key "ci_bot" created\. It is shown only now/);
    expect(r.stdout).toMatch(/^ {2}pair_ci_bot_[A-Za-z0-9_-]{43}$/m);
    expect(r.stdout).toContain('"Authorization: Bearer <key>"');
    expect(r.stdout).toContain("This node listens on 127.0.0.1:11434");
  });

  it("refuses a taken id (exit 1, what to do)", async () => {
    await cli("create", "laptop");
    const r = await cli("create", "laptop");
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(/^pair apikey: api_key_exists: the id "laptop" is taken; ids are never reused/);
  });
});

describe("list and revoke", () => {
  it("list --json shows ids and times, never a hash; revoke --json marks one revoked", async () => {
    expect(json((await cli("list", "--json")).stdout)).toEqual([]);
    await cli("create", "a");
    await cli("create", "b");
    const revoked = await cli("revoke", "a", "--json");
    expect(revoked).toMatchObject({ code: 0, stderr: "" });
    const { revoked_at } = json<{ id: string; revoked_at: string }>(revoked.stdout);
    expect(json(revoked.stdout)).toEqual({ id: "a", revoked_at });
    const list = await cli("list", "--json");
    expect(json(list.stdout)).toEqual([
      { id: "a", created_at: expect.any(String) as string, revoked_at, active: false },
      { id: "b", created_at: expect.any(String) as string, revoked_at: null, active: true },
    ]);
    expect(list.stdout).not.toMatch(/hash|salt|pair_/);
  });

  it("prints a table for a person; revoking twice says so and succeeds", async () => {
    expect((await cli("list")).stdout).toBe("no API keys yet (pair apikey create ID makes one)\n");
    await cli("create", "laptop");
    expect((await cli("revoke", "laptop")).stdout).toMatch(
      /revoked: the node refuses it from its next request on/,
    );
    expect((await cli("revoke", "laptop")).stdout).toMatch(/was already revoked/);
    const table = (await cli("list")).stdout.split("\n");
    expect(table[0]).toMatch(/^ID +STATE +CREATED +REVOKED$/);
    expect(table[1]).toMatch(/^laptop +revoked +\S+Z +\S+Z$/);
  });

  it("refuses to revoke an unknown id", async () => {
    const r = await cli("revoke", "ghost");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/api_key_not_found: no API key with id "ghost"/);
  });
});

describe("usage errors exit 2", () => {
  it.each([
    [[], /expected one of: create, list, revoke/],
    [["frob"], /unknown subcommand "frob"/],
    [["create"], /missing ID/],
    [["create", "a", "b"], /Unexpected argument 'b'/],
    [["list", "extra"], /Unexpected argument 'extra'/],
    [["create", "local"], /"local" is reserved/],
    [["create", "-x"], /Unknown option '-x'/],
    [["revoke", "no/slash"], /ID: an API key id is 1 to 63 letters/],
  ])("pair apikey %j", async (argv, message) => {
    const r = await runCli(["apikey", ...argv, "--config", config.file]);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/Usage: pair apikey create ID/);
  });
});

describe("with a node running", () => {
  const remote: LoopbackPolicy = { isLoopbackHost: () => false, isLoopbackPeer: () => false };

  it("a key made by the CLI works at once; a revoke by the CLI counts from the next request", async () => {
    let first = "";
    const c = await startCluster(
      [{ name: "o", api: "ollama", models: ["m:latest"] }],
      { seams: { loopback: remote } },
      {
        beforeStart: async (dir) => {
          const node = writeConfig(`node:\n  data_dir: ${dir}\n`);
          try {
            first = json<{ key: string }>(
              (await runCli(["apikey", "create", "first", "--json", "--config", node.file])).stdout,
            ).key;
          } finally {
            node.cleanup();
          }
        },
      },
    );
    const node = writeConfig(`node:\n  data_dir: ${c.dataDir}\n`);
    try {
      const tags = (key: string) =>
        fetch(`${c.node.url}/api/tags`, { headers: { authorization: `Bearer ${key}` } });
      expect((await tags(first)).status).toBe(200);
      const second = json<{ key: string }>(
        (await runCli(["apikey", "create", "second", "--json", "--config", node.file])).stdout,
      ).key;
      expect((await tags(second)).status).toBe(200);
      expect((await runCli(["apikey", "revoke", "first", "--config", node.file])).code).toBe(0);
      expect((await tags(first)).status).toBe(401);
      expect((await tags(second)).status).toBe(200);
    } finally {
      node.cleanup();
      await c.close();
    }
  });

  it("pair serve beyond loopback without a key exits 1 and says to run pair apikey create", async () => {
    const c = writeConfig((dir) => `node:\n  data_dir: ${dir}/data\n  listen: 0.0.0.0:18997\nengines: []\n`);
    try {
      const serve = startCli(["serve", "--config", c.file], { signals: manualSignals() });
      const r = await serve.done;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /pair serve: node\.listen 0\.0\.0\.0: auth_required: .*`pair apikey create ID`/,
      );
    } finally {
      c.cleanup();
    }
  });
});
