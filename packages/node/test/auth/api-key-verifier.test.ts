// The running node's check of a presented key: one HMAC and one constant-time comparison on every
// path, revocation and creation seen on the next request, and a broken store accepting nobody.
import { timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ApiKeyError,
  ApiKeyVerifier,
  apiKeysPath,
  formatApiKey,
  parseApiKey,
  revokeApiKey,
  type ConstantTimeEqual,
} from "../../src/auth/index.js";
import { makeKey, storeDeps, tempDataDir } from "./auth-fixtures.js";

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => (dir = tempDataDir()));
afterEach(() => dir.cleanup());

/** timingSafeEqual, recording the length of what it was given. */
function watchedEqual(): { equal: ConstantTimeEqual; calls: [number, number][] } {
  const calls: [number, number][] = [];
  return {
    calls,
    equal: (a, b) => {
      calls.push([a.length, b.length]);
      return timingSafeEqual(a, b);
    },
  };
}

/** The same id with another secret. */
function forged(key: string): string {
  const { id } = parseApiKey(key)!;
  return formatApiKey(id, Buffer.alloc(32, 1));
}

describe("verify", () => {
  it("accepts a key of the store and names its id", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir });
    expect(verifier.verify(key)).toEqual({ ok: true, id: "laptop" });
    expect(verifier.activeIds()).toEqual(["laptop"]);
  });

  it("refuses a wrong secret, an unknown id, a revoked key and a malformed one", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const { key: gone } = await makeKey(dir.dataDir, "old");
    await revokeApiKey(dir.dataDir, "old", storeDeps());
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir });
    expect(verifier.verify(forged(key))).toEqual({ ok: false, reason: "mismatch" });
    expect(verifier.verify(formatApiKey("ghost", Buffer.alloc(32)))).toEqual({
      ok: false,
      reason: "unknown",
    });
    expect(verifier.verify(gone)).toEqual({ ok: false, reason: "revoked" });
    expect(verifier.verify("unused")).toEqual({ ok: false, reason: "malformed" });
    expect(verifier.verify(`${key}x`)).toEqual({ ok: false, reason: "malformed" });
  });

  it("makes one constant-time comparison of two 32-byte digests on every well-formed key", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const { key: gone } = await makeKey(dir.dataDir, "old");
    await revokeApiKey(dir.dataDir, "old", storeDeps());
    const watch = watchedEqual();
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir, equal: watch.equal });
    for (const presented of [key, forged(key), formatApiKey("ghost", Buffer.alloc(32)), gone]) {
      watch.calls.length = 0;
      verifier.verify(presented);
      expect(watch.calls).toEqual([[32, 32]]);
    }
    watch.calls.length = 0;
    verifier.verify("pair_not-a-key");
    expect(watch.calls).toEqual([]); // refused by its shape, which is public
  });

  it("takes its verdict from that comparison alone", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const never = new ApiKeyVerifier({ dataDir: dir.dataDir, equal: () => false });
    expect(never.verify(key)).toEqual({ ok: false, reason: "mismatch" });
  });
});

describe("changes made while the node runs", () => {
  it("sees a key created and a key revoked on the next check, without a restart", async () => {
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir });
    expect(verifier.activeIds()).toEqual([]);
    const { key } = await makeKey(dir.dataDir, "late");
    expect(verifier.verify(key)).toEqual({ ok: true, id: "late" });
    await revokeApiKey(dir.dataDir, "late", storeDeps());
    expect(verifier.verify(key)).toEqual({ ok: false, reason: "revoked" });
    expect(verifier.activeIds()).toEqual([]);
  });

  it("accepts nobody while the store is broken, says so once per change, and recovers", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const good = readFileSync(apiKeysPath(dir.dataDir), "utf8");
    const errors: ApiKeyError[] = [];
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir, onError: (e) => errors.push(e) });
    writeFileSync(apiKeysPath(dir.dataDir), "{ not json");
    expect(verifier.verify(key)).toEqual({ ok: false, reason: "unavailable" });
    expect(verifier.verify(key)).toEqual({ ok: false, reason: "unavailable" });
    expect(verifier.activeIds()).toEqual([]);
    expect(errors.map((e) => e.code)).toEqual(["api_keys_file_invalid"]);
    writeFileSync(apiKeysPath(dir.dataDir), good);
    expect(verifier.verify(key)).toEqual({ ok: true, id: "laptop" });
    expect(errors).toHaveLength(1);
  });

  it.runIf(process.platform !== "win32")("refuses every key once others may write the file", async () => {
    const { key } = await makeKey(dir.dataDir, "laptop");
    const errors: string[] = [];
    const verifier = new ApiKeyVerifier({ dataDir: dir.dataDir, onError: (e) => errors.push(e.code) });
    chmodSync(apiKeysPath(dir.dataDir), 0o666);
    expect(verifier.verify(key)).toEqual({ ok: false, reason: "unavailable" });
    chmodSync(apiKeysPath(dir.dataDir), 0o600);
    expect(verifier.verify(key)).toEqual({ ok: true, id: "laptop" });
    expect(errors).toEqual(["api_keys_file_exposed"]);
  });

  it("refuses to start on a broken store", async () => {
    await makeKey(dir.dataDir, "laptop");
    writeFileSync(apiKeysPath(dir.dataDir), "[]", { mode: 0o600 });
    expect(() => new ApiKeyVerifier({ dataDir: dir.dataDir })).toThrow(ApiKeyError);
  });
});
