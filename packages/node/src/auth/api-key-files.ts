/**
 * The key store's two files in the data dir, read strictly and written safely:
 * `api-keys.json` (0600) — `{"version": 1, "algorithm": "hmac-sha256", "keys": [{id, hash, salt,
 * created_at, revoked_at?}]}`, replaced atomically (temp file, fsync, rename) — and
 * `api-keys.pepper` (0600) — the node's 32-byte HMAC key in hex, made once with the first key.
 * Neither file ever holds a key's secret. A file writable by group or others is refused: writing it
 * grants access. Revoked records stay (who, when) so their ids are never reused.
 * Must not know: HTTP, the command line, how keys are verified per request.
 */

import { syncDirectory, writeFileAtomically } from "../files/atomic-file.js";
import { closeSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { apiKeyIdProblem } from "./api-key-format.js";
import {
  API_KEY_HASH_ALGORITHM,
  API_KEY_HASH_BYTES,
  API_KEY_PEPPER_BYTES,
  API_KEY_SALT_BYTES,
} from "./api-key-hash.js";
import { ApiKeyError } from "./auth-error.js";

export const API_KEYS_FILE = "api-keys.json";
export const API_KEYS_PEPPER_FILE = "api-keys.pepper";
export const API_KEYS_FILE_VERSION = 1;
/** Records kept, revoked ones included. */
export const MAX_API_KEY_RECORDS = 1024;

/** One record of api-keys.json. Bytes are base64url; times ISO 8601 (UTC). */
export interface StoredApiKey {
  readonly id: string;
  readonly hash: string;
  readonly salt: string;
  readonly created_at: string;
  readonly revoked_at?: string;
}

export interface ApiKeyFiles {
  readonly keys: readonly StoredApiKey[];
  /** Absent until the first key is created. */
  readonly pepper: Buffer | undefined;
}

export function apiKeysPath(dataDir: string): string {
  return join(dataDir, API_KEYS_FILE);
}

export function apiKeysPepperPath(dataDir: string): string {
  return join(dataDir, API_KEYS_PEPPER_FILE);
}

/** Both files, checked. No key file: no keys. @throws ApiKeyError (invalid or exposed), or an fs error */
export function readApiKeyFiles(dataDir: string): ApiKeyFiles {
  const keys = readKeysFile(apiKeysPath(dataDir));
  const pepperText = readGuarded(apiKeysPepperPath(dataDir));
  if (pepperText === undefined) {
    if (keys.length > 0)
      throw new ApiKeyError(
        "api_keys_file_invalid",
        `${apiKeysPath(dataDir)} holds keys but ${apiKeysPepperPath(dataDir)} is missing, so no key can be ` +
          "checked: restore the pepper file from a backup, or move api-keys.json away and create the keys anew",
      );
    return { keys, pepper: undefined };
  }
  return { keys, pepper: parsePepper(apiKeysPepperPath(dataDir), pepperText) };
}

/** The pepper, created (0600, never replaced) if it does not exist yet. */
export function ensurePepper(dataDir: string, randomBytes: (size: number) => Uint8Array): Buffer {
  const path = apiKeysPepperPath(dataDir);
  const existing = readGuarded(path);
  if (existing !== undefined) return parsePepper(path, existing);
  const pepper = Buffer.from(randomBytes(API_KEY_PEPPER_BYTES));
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, `${pepper.toString("hex")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDirectory(dataDir);
  return pepper;
}

export function serializeApiKeys(keys: readonly StoredApiKey[]): string {
  const file = { version: API_KEYS_FILE_VERSION, algorithm: API_KEY_HASH_ALGORITHM, keys };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Replace api-keys.json with these records: a fresh 0600 temp file beside it, flushed, renamed over it. */
export function writeApiKeysFile(dataDir: string, keys: readonly StoredApiKey[], tempSuffix: string): void {
  writeFileAtomically(apiKeysPath(dataDir), serializeApiKeys(keys), tempSuffix);
}

/**
 * The file's text, or undefined when it (or the data dir) does not exist.
 * @throws ApiKeyError when others may write it; the file system's own error when it cannot be read
 */
function readGuarded(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw cause;
  }
  const mode = statSync(path).mode;
  if (process.platform !== "win32" && (mode & 0o022) !== 0)
    throw new ApiKeyError(
      "api_keys_file_exposed",
      `${path} is writable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")}); ` +
        `whoever can write it can let anyone in: check it, then run \`chmod 600 ${path}\``,
    );
  return text;
}

function parsePepper(path: string, text: string): Buffer {
  const hex = text.trim();
  if (!new RegExp(`^[0-9a-f]{${API_KEY_PEPPER_BYTES * 2}}$`).test(hex))
    throw new ApiKeyError(
      "api_keys_file_invalid",
      `${path} is not ${API_KEY_PEPPER_BYTES} bytes in hex; restore it from a backup (without it no key can be checked)`,
    );
  return Buffer.from(hex, "hex");
}

function readKeysFile(path: string): readonly StoredApiKey[] {
  const text = readGuarded(path);
  if (text === undefined) return Object.freeze([]);
  const invalid = (why: string): ApiKeyError =>
    new ApiKeyError("api_keys_file_invalid", `${path}: ${why}; restore it from a backup, or fix it by hand`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid("not valid JSON");
  }
  if (
    !isObject(parsed) ||
    parsed["version"] !== API_KEYS_FILE_VERSION ||
    parsed["algorithm"] !== API_KEY_HASH_ALGORITHM ||
    !Array.isArray(parsed["keys"])
  )
    throw invalid(
      `expected {"version": ${API_KEYS_FILE_VERSION}, "algorithm": "${API_KEY_HASH_ALGORITHM}", "keys": [...]}`,
    );
  const raw = parsed["keys"] as unknown[];
  if (raw.length > MAX_API_KEY_RECORDS) throw invalid(`more than ${MAX_API_KEY_RECORDS} keys`);
  const keys: StoredApiKey[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of raw.entries()) {
    const record = readRecord(entry);
    if (typeof record === "string") throw invalid(`keys[${index}]: ${record}`);
    if (seen.has(record.id)) throw invalid(`keys[${index}]: id ${record.id} is recorded twice`);
    seen.add(record.id);
    keys.push(record);
  }
  return Object.freeze(keys);
}

/** A record as stored; a string says what is wrong (never quoting a hash). */
function readRecord(raw: unknown): StoredApiKey | string {
  if (!isObject(raw)) return "not an object";
  const { id, hash, salt, created_at, revoked_at } = raw;
  if (typeof id !== "string" || apiKeyIdProblem(id) !== undefined) return "id is not a valid API key id";
  if (!isBase64Url(hash, API_KEY_HASH_BYTES)) return `hash is not ${API_KEY_HASH_BYTES} bytes in base64url`;
  if (!isBase64Url(salt, API_KEY_SALT_BYTES)) return `salt is not ${API_KEY_SALT_BYTES} bytes in base64url`;
  if (!isIsoTime(created_at)) return "created_at is not an ISO 8601 time";
  if (revoked_at !== undefined && !isIsoTime(revoked_at)) return "revoked_at is not an ISO 8601 time";
  const base = { id, hash, salt, created_at };
  return Object.freeze(revoked_at === undefined ? base : { ...base, revoked_at });
}

function isBase64Url(value: unknown, bytes: number): value is string {
  return (
    typeof value === "string" &&
    /^[A-Za-z0-9_-]+$/.test(value) &&
    Buffer.from(value, "base64url").toString("base64url") === value &&
    Buffer.from(value, "base64url").length === bytes
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIsoTime(value: unknown): value is string {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));
}
