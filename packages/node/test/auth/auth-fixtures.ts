// Shared by the auth tests: a temp data dir, a deterministic clock and randomness, a key made on disk.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clockAt, HOLDING_RUNTIME, type Runtime } from "@pair/cluster";
import { createApiKey, type ApiKeyStoreDeps, type CreatedApiKey } from "../../src/auth/index.js";

export const T0 = Date.parse("2025-06-01T12:00:00.000Z");

/** A fresh data dir (not created: the store makes it) inside a temp folder, removed by `cleanup`. */
export function tempDataDir(): { dataDir: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), "pair-auth-"));
  return { dataDir: join(root, "data"), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A clock that moves one second per reading, and the real random source. */
export function storeDeps(overrides: Partial<ApiKeyStoreDeps> = {}): ApiKeyStoreDeps {
  let now = T0;
  return {
    runtime: runtimeAt(() => (now += 1_000)),
    randomBytes: (size) => randomBytes(size),
    ...overrides,
  };
}

/** Real timers (a lock wait is real), the wall clock reading `ms()`. */
export function runtimeAt(ms: () => number): Runtime {
  return { clock: clockAt(ms), timers: HOLDING_RUNTIME.timers };
}

export function makeKey(dataDir: string, id: string): Promise<CreatedApiKey> {
  return createApiKey(dataDir, id, storeDeps());
}
