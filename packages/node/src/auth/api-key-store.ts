/**
 * What `pair apikey create|list|revoke` do to the data dir: one read-modify-write of api-keys.json
 * at a time (an exclusive lock file beside it, so two commands never lose each other's key), a key
 * made from the caller's randomness and shown once, never written. A running node sees each change
 * on its next keyed request (api-key-verifier.ts): no node needs to run for these to work.
 * Time and randomness are inputs.
 * Must not know: HTTP, the command line, how requests are verified.
 */

import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Runtime } from "@pair/cluster";
import { apiKeyIdProblem, API_KEY_SECRET_BYTES, formatApiKey } from "./api-key-format.js";
import {
  API_KEYS_FILE,
  ensurePepper,
  MAX_API_KEY_RECORDS,
  readApiKeyFiles,
  writeApiKeysFile,
  type StoredApiKey,
} from "./api-key-files.js";
import { API_KEY_SALT_BYTES, hashApiKeySecret } from "./api-key-hash.js";
import { ApiKeyError } from "./auth-error.js";

/** A lock older than this is left over from a command that died, and is taken over. */
export const STALE_LOCK_MS = 10_000;
const LOCK_POLL_MS = 20;

export interface ApiKeyStoreDeps {
  /** Its wall time: created_at, revoked_at, the age of a lock (a file's mtime); its timers poll the lock. */
  readonly runtime: Runtime;
  readonly randomBytes: (size: number) => Uint8Array;
  /** How long to wait for another command's lock before giving up (default 2000). */
  readonly lockWaitMs?: number;
}

/** What `pair apikey list` shows: never a hash or a salt. */
export interface ApiKeySummary {
  readonly id: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly active: boolean;
}

export interface CreatedApiKey {
  readonly id: string;
  /** The whole key. Shown once to whoever created it; nowhere else. */
  readonly key: string;
  readonly created_at: string;
}

export interface RevokedApiKey {
  readonly id: string;
  readonly revoked_at: string;
  /** It was revoked before; nothing changed. */
  readonly already: boolean;
}

export function listApiKeys(dataDir: string): readonly ApiKeySummary[] {
  return readApiKeyFiles(dataDir).keys.map((k) => ({
    id: k.id,
    created_at: k.created_at,
    revoked_at: k.revoked_at ?? null,
    active: k.revoked_at === undefined,
  }));
}

/** Ids of the keys not revoked. */
export function activeApiKeyIds(dataDir: string): readonly string[] {
  return readApiKeyFiles(dataDir).keys.flatMap((k) => (k.revoked_at === undefined ? [k.id] : []));
}

/** Make a key for `id` and record its hash. @throws ApiKeyError */
export async function createApiKey(
  dataDir: string,
  id: string,
  deps: ApiKeyStoreDeps,
): Promise<CreatedApiKey> {
  const problem = apiKeyIdProblem(id);
  if (problem !== undefined) throw new ApiKeyError("invalid_api_key_id", problem);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return withLock(dataDir, deps, () => {
    const { keys } = readApiKeyFiles(dataDir);
    const taken = keys.find((k) => k.id === id);
    if (taken !== undefined)
      throw new ApiKeyError(
        "api_key_exists",
        `the id "${id}" is taken${taken.revoked_at === undefined ? "" : ` (by a key revoked ${taken.revoked_at})`}; ` +
          `ids are never reused, so history stays unambiguous: choose another id (e.g. "${id}-2")`,
      );
    if (keys.length >= MAX_API_KEY_RECORDS)
      throw new ApiKeyError(
        "api_keys_full",
        `${join(dataDir, API_KEYS_FILE)} holds ${MAX_API_KEY_RECORDS} keys, revoked ones included; ` +
          "remove revoked records from it by hand to make room",
      );
    const pepper = ensurePepper(dataDir, deps.randomBytes);
    const secretBytes = deps.randomBytes(API_KEY_SECRET_BYTES);
    const salt = Buffer.from(deps.randomBytes(API_KEY_SALT_BYTES));
    const key = formatApiKey(id, secretBytes);
    const secret = Buffer.from(secretBytes).toString("base64url");
    const created_at = new Date(deps.runtime.clock.now().wallMs).toISOString();
    const record: StoredApiKey = {
      id,
      hash: hashApiKeySecret(pepper, salt, id, secret).toString("base64url"),
      salt: salt.toString("base64url"),
      created_at,
    };
    writeApiKeysFile(dataDir, [...keys, record], tempSuffix(deps));
    return { id, key, created_at };
  });
}

/** Mark `id` revoked; its record stays. Revoking twice is not an error. @throws ApiKeyError */
export async function revokeApiKey(
  dataDir: string,
  id: string,
  deps: ApiKeyStoreDeps,
): Promise<RevokedApiKey> {
  if (!existsSync(dataDir)) throw notFound(id, 0);
  return withLock(dataDir, deps, () => {
    const { keys } = readApiKeyFiles(dataDir);
    const found = keys.find((k) => k.id === id);
    if (found === undefined) throw notFound(id, keys.length);
    if (found.revoked_at !== undefined) return { id, revoked_at: found.revoked_at, already: true };
    const revoked_at = new Date(deps.runtime.clock.now().wallMs).toISOString();
    writeApiKeysFile(
      dataDir,
      keys.map((k) => (k.id === id ? { ...k, revoked_at } : k)),
      tempSuffix(deps),
    );
    return { id, revoked_at, already: false };
  });
}

function notFound(id: string, count: number): ApiKeyError {
  return new ApiKeyError(
    "api_key_not_found",
    `no API key with id "${id}"${count === 0 ? " (there are none)" : ""}; \`pair apikey list\` shows them`,
  );
}

function tempSuffix(deps: ApiKeyStoreDeps): string {
  return `${process.pid}.${Buffer.from(deps.randomBytes(6)).toString("hex")}`;
}

/** Run `fn` holding `<data_dir>/api-keys.lock` (created exclusively; removed after). */
async function withLock<T>(dataDir: string, deps: ApiKeyStoreDeps, fn: () => T): Promise<T> {
  const path = join(dataDir, "api-keys.lock");
  const attempts = Math.max(1, Math.ceil((deps.lockWaitMs ?? 2_000) / LOCK_POLL_MS));
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== "EEXIST") throw cause;
      const lockedAt = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
      // Two commands taking over the same stale lock at once could both win; a dead command plus two
      // racing ones is rare enough, and the worst case is one lost create that `list` shows.
      if (lockedAt !== undefined && deps.runtime.clock.now().wallMs - lockedAt > STALE_LOCK_MS) {
        rmSync(path, { force: true });
        continue;
      }
      if (attempt + 1 >= attempts)
        throw new ApiKeyError(
          "api_keys_busy",
          `another \`pair apikey\` command is changing the keys (${path} exists); try again in a moment`,
        );
      await deps.runtime.timers.sleep(LOCK_POLL_MS);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    try {
      return fn();
    } finally {
      rmSync(path, { force: true });
    }
  }
}
