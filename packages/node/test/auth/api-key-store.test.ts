// The key store in the data dir: create / list / revoke, hashes only (never the key), 0600 files,
// atomic replacement under a lock, and strict reading of what is on disk.
import { randomBytes } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  activeApiKeyIds,
  ApiKeyError,
  apiKeysPath,
  apiKeysPepperPath,
  createApiKey,
  hashApiKeySecret,
  listApiKeys,
  parseApiKey,
  readApiKeyFiles,
  revokeApiKey,
  STALE_LOCK_MS,
} from "../../src/auth/index.js";
import { HOLDING_RUNTIME } from "@pair/cluster";
import { makeKey, runtimeAt, storeDeps, T0, tempDataDir } from "./auth-fixtures.js";

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => (dir = tempDataDir()));
afterEach(() => dir.cleanup());

const mode = (path: string) => statSync(path).mode & 0o777;

/** The ApiKeyError a call or a promise ends with. */
async function refusal(work: Promise<unknown> | (() => unknown)): Promise<ApiKeyError> {
  const error = await Promise.resolve()
    .then(typeof work === "function" ? work : () => work)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(ApiKeyError);
  return error as ApiKeyError;
}

describe("create", () => {
  it("returns the key once and records only its hash", async () => {
    const created = await createApiKey(dir.dataDir, "laptop", storeDeps());
    expect(created).toEqual({
      id: "laptop",
      key: expect.stringMatching(/^pair_laptop_[A-Za-z0-9_-]{43}$/) as string,
      created_at: new Date(T0 + 1_000).toISOString(),
    });
    const secret = parseApiKey(created.key)!.secret;
    const raw = Buffer.from(secret, "base64url");
    const onDisk = readdirSync(dir.dataDir)
      .map((name) => readFileSync(join(dir.dataDir, name), "utf8"))
      .join("\n");
    for (const form of [
      created.key,
      secret,
      raw.toString("hex"),
      raw.toString("base64"),
      raw.toString("latin1"),
    ])
      expect(onDisk).not.toContain(form);

    const { keys, pepper } = readApiKeyFiles(dir.dataDir);
    expect(keys).toEqual([
      {
        id: "laptop",
        hash: expect.any(String) as string,
        salt: expect.any(String) as string,
        created_at: created.created_at,
      },
    ]);
    const [record] = keys;
    const expected = hashApiKeySecret(pepper!, Buffer.from(record!.salt, "base64url"), "laptop", secret);
    expect(record!.hash).toBe(expected.toString("base64url"));
  });

  it("writes the files 0600 in a 0700 data dir, leaving no temp or lock file", async () => {
    await makeKey(dir.dataDir, "a");
    await makeKey(dir.dataDir, "b");
    expect(mode(dir.dataDir)).toBe(0o700);
    expect(mode(apiKeysPath(dir.dataDir))).toBe(0o600);
    expect(mode(apiKeysPepperPath(dir.dataDir))).toBe(0o600);
    expect(readdirSync(dir.dataDir).sort()).toEqual(["api-keys.json", "api-keys.pepper"]);
    expect(JSON.parse(readFileSync(apiKeysPath(dir.dataDir), "utf8"))).toMatchObject({
      version: 1,
      algorithm: "hmac-sha256",
      keys: [{ id: "a" }, { id: "b" }],
    });
  });

  it("gives every key its own salt and secret, and keeps one pepper", async () => {
    const pepperBefore =
      (await makeKey(dir.dataDir, "a"), readFileSync(apiKeysPepperPath(dir.dataDir), "utf8"));
    const b = await makeKey(dir.dataDir, "b");
    expect(readFileSync(apiKeysPepperPath(dir.dataDir), "utf8")).toBe(pepperBefore);
    const [ka, kb] = readApiKeyFiles(dir.dataDir).keys;
    expect(ka!.salt).not.toBe(kb!.salt);
    expect(ka!.hash).not.toBe(kb!.hash);
    expect(parseApiKey(b.key)?.id).toBe("b");
  });

  it("refuses an id that is taken, revoked ids included", async () => {
    await makeKey(dir.dataDir, "laptop");
    expect((await refusal(makeKey(dir.dataDir, "laptop"))).code).toBe("api_key_exists");
    await revokeApiKey(dir.dataDir, "laptop", storeDeps());
    const again = await refusal(makeKey(dir.dataDir, "laptop"));
    expect(again.code).toBe("api_key_exists");
    expect(again.message).toMatch(/never reused.*laptop-2/);
    expect(listApiKeys(dir.dataDir)).toHaveLength(1);
  });

  it.each(["local", "", "no/slash"])("refuses the id %j before touching the data dir", async (id) => {
    expect((await refusal(makeKey(dir.dataDir, id))).code).toBe("invalid_api_key_id");
    expect(() => statSync(dir.dataDir)).toThrow(/ENOENT/);
  });
});

describe("list and revoke", () => {
  it("lists ids and times, never a hash or a salt", async () => {
    expect(listApiKeys(dir.dataDir)).toEqual([]);
    await makeKey(dir.dataDir, "a");
    const list = listApiKeys(dir.dataDir);
    expect(list).toEqual([
      { id: "a", created_at: expect.any(String) as string, revoked_at: null, active: true },
    ]);
    expect(Object.keys(list[0]!)).toEqual(["id", "created_at", "revoked_at", "active"]);
  });

  it("revokes once; revoking again changes nothing", async () => {
    await makeKey(dir.dataDir, "a");
    await makeKey(dir.dataDir, "b");
    const deps = storeDeps({ runtime: runtimeAt(() => T0 + 60_000) });
    const first = await revokeApiKey(dir.dataDir, "a", deps);
    expect(first).toEqual({ id: "a", revoked_at: new Date(T0 + 60_000).toISOString(), already: false });
    const second = await revokeApiKey(
      dir.dataDir,
      "a",
      storeDeps({ runtime: runtimeAt(() => T0 + 120_000) }),
    );
    expect(second).toEqual({ ...first, already: true });
    expect(listApiKeys(dir.dataDir).map((k) => [k.id, k.active, k.revoked_at])).toEqual([
      ["a", false, first.revoked_at],
      ["b", true, null],
    ]);
    expect(activeApiKeyIds(dir.dataDir)).toEqual(["b"]);
  });

  it("refuses to revoke an unknown id, with or without a data dir", async () => {
    expect((await refusal(revokeApiKey(dir.dataDir, "ghost", storeDeps()))).message).toMatch(
      /there are none/,
    );
    await makeKey(dir.dataDir, "a");
    expect((await refusal(revokeApiKey(dir.dataDir, "ghost", storeDeps()))).code).toBe("api_key_not_found");
  });
});

describe("one writer at a time", () => {
  it("waits for another command's lock, then gives up with api_keys_busy", async () => {
    await makeKey(dir.dataDir, "a");
    const lock = join(dir.dataDir, "api-keys.lock");
    writeFileSync(lock, "12345\n");
    const busy = await refusal(
      createApiKey(
        dir.dataDir,
        "b",
        storeDeps({ runtime: runtimeAt(() => statSync(lock).mtimeMs), lockWaitMs: 60 }),
      ),
    );
    expect(busy.code).toBe("api_keys_busy");
    expect(busy.retryable).toBe(true);
    expect(activeApiKeyIds(dir.dataDir)).toEqual(["a"]);
  });

  it("takes over a lock left by a command that died", async () => {
    await makeKey(dir.dataDir, "a");
    const lock = join(dir.dataDir, "api-keys.lock");
    writeFileSync(lock, "12345\n");
    const old = (Date.now() - STALE_LOCK_MS - 1_000) / 1000;
    utimesSync(lock, old, old);
    await createApiKey(dir.dataDir, "b", storeDeps({ runtime: HOLDING_RUNTIME }));
    expect(activeApiKeyIds(dir.dataDir)).toEqual(["a", "b"]);
    expect(readdirSync(dir.dataDir)).not.toContain("api-keys.lock");
  });

  it("loses no key when many commands create at once", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `k${i}`);
    await Promise.all(ids.map((id) => makeKey(dir.dataDir, id)));
    expect([...activeApiKeyIds(dir.dataDir)].sort()).toEqual([...ids].sort());
  });
});

describe("reading what is on disk", () => {
  const write = (text: string) => writeFileSync(apiKeysPath(dir.dataDir), text, { mode: 0o600 });
  const record = {
    id: "a",
    hash: randomBytes(32).toString("base64url"),
    salt: randomBytes(16).toString("base64url"),
    created_at: "2025-06-01T12:00:00.000Z",
  };
  const file = (keys: unknown) => JSON.stringify({ version: 1, algorithm: "hmac-sha256", keys });

  beforeEach(async () => {
    await makeKey(dir.dataDir, "seed"); // makes the data dir and the pepper
  });

  it.each([
    ["not JSON", "{"],
    ["another version", JSON.stringify({ version: 2, algorithm: "hmac-sha256", keys: [] })],
    ["another algorithm", JSON.stringify({ version: 1, algorithm: "scrypt", keys: [] })],
    ["a short hash", file([{ ...record, hash: "AAAA" }])],
    ["a salt of the wrong size", file([{ ...record, salt: randomBytes(8).toString("base64url") }])],
    ["a bad id", file([{ ...record, id: "local" }])],
    ["a bad time", file([{ ...record, created_at: "yesterday" }])],
    ["a bad revocation time", file([{ ...record, revoked_at: 5 }])],
    ["an id twice", file([record, record])],
  ])("refuses %s as api_keys_file_invalid", async (_label, text) => {
    write(text);
    const error = await refusal(() => readApiKeyFiles(dir.dataDir));
    expect(error.code).toBe("api_keys_file_invalid");
    expect(error.message).not.toContain(record.hash);
  });

  it("refuses keys without their pepper", async () => {
    writeFileSync(apiKeysPepperPath(dir.dataDir), "");
    expect((await refusal(() => readApiKeyFiles(dir.dataDir))).code).toBe("api_keys_file_invalid");
    rmSync(apiKeysPepperPath(dir.dataDir));
    expect((await refusal(() => readApiKeyFiles(dir.dataDir))).message).toMatch(/pepper file/);
  });

  it.runIf(process.platform !== "win32").each(["api-keys.json", "api-keys.pepper"])(
    "refuses %s when group or others may write it",
    async (which) => {
      const path = which === "api-keys.json" ? apiKeysPath(dir.dataDir) : apiKeysPepperPath(dir.dataDir);
      chmodSync(path, 0o620);
      const error = await refusal(() => readApiKeyFiles(dir.dataDir));
      expect(error.code).toBe("api_keys_file_exposed");
      expect(error.message).toContain(`chmod 600 ${path}`);
      await expect(makeKey(dir.dataDir, "more")).rejects.toThrow(/api_keys_file_exposed/);
    },
  );
});
