/**
 * The running node's view of its API keys: the store's records in memory, re-read whenever
 * api-keys.json changed (one `stat` per keyed request: a key created or revoked by `pair apikey`
 * counts from the next request on). A presented key is parsed for its id, looked up, and checked
 * with one HMAC and one constant-time comparison — the same work for an unknown id, a wrong secret
 * or a revoked key. A store that becomes unreadable while the node runs accepts no key until it is
 * fixed (fail closed), and says so once per change.
 * Must not know: HTTP, sockets, the command line.
 */

import { timingSafeEqual } from "node:crypto";
import { statSync } from "node:fs";
import { parseApiKey } from "./api-key-format.js";
import { apiKeysPath, readApiKeyFiles } from "./api-key-files.js";
import {
  API_KEY_HASH_BYTES,
  API_KEY_PEPPER_BYTES,
  API_KEY_SALT_BYTES,
  secretMatches,
  type ConstantTimeEqual,
} from "./api-key-hash.js";
import { ApiKeyError } from "./auth-error.js";

/** Why a presented key was refused. Never shown to the client beyond "not accepted"; a metric label. */
export type KeyRefusal = "malformed" | "unknown" | "mismatch" | "revoked" | "unavailable";

export type KeyCheck =
  { readonly ok: true; readonly id: string } | { readonly ok: false; readonly reason: KeyRefusal };

/** What the client port needs of the keys. */
export interface KeyChecker {
  verify(text: string): KeyCheck;
}

export interface ApiKeyVerifierOptions {
  readonly dataDir: string;
  /** Told when the store cannot be read while the node runs (once per change of the file). */
  readonly onError?: (error: ApiKeyError) => void;
  /** The comparison of digests (tests watch it); `timingSafeEqual` by default. */
  readonly equal?: ConstantTimeEqual;
}

interface KeyEntry {
  readonly hash: Buffer;
  readonly salt: Buffer;
  readonly revoked: boolean;
}

// Stand-ins for an unknown id, so it costs the same HMAC and comparison as a known one.
const NO_PEPPER = Buffer.alloc(API_KEY_PEPPER_BYTES);
const NO_SALT = Buffer.alloc(API_KEY_SALT_BYTES);
const NO_HASH = Buffer.alloc(API_KEY_HASH_BYTES);

export class ApiKeyVerifier implements KeyChecker {
  private readonly path: string;
  private readonly equal: ConstantTimeEqual;
  private entries = new Map<string, KeyEntry>();
  private pepper: Buffer = NO_PEPPER;
  private usable = true;
  /** What the file looked like when last read: `absent`, or inode, size and times. */
  private seen: string | undefined;

  /** Reads the store now. @throws ApiKeyError when it is invalid or exposed, or an fs error (no start). */
  constructor(private readonly options: ApiKeyVerifierOptions) {
    this.path = apiKeysPath(options.dataDir);
    this.equal = options.equal ?? timingSafeEqual;
    const signature = this.signature();
    this.load();
    this.seen = signature;
  }

  /** Ids of the keys that are not revoked, as the store holds them now. */
  activeIds(): readonly string[] {
    this.refresh();
    return [...this.entries].flatMap(([id, e]) => (e.revoked ? [] : [id]));
  }

  verify(text: string): KeyCheck {
    const parsed = parseApiKey(text);
    if (parsed === undefined) return { ok: false, reason: "malformed" };
    this.refresh();
    const entry = this.entries.get(parsed.id);
    const matches = secretMatches(
      this.pepper,
      entry?.salt ?? NO_SALT,
      parsed.id,
      parsed.secret,
      entry?.hash ?? NO_HASH,
      this.equal,
    );
    if (!this.usable) return { ok: false, reason: "unavailable" };
    if (entry === undefined) return { ok: false, reason: "unknown" };
    if (!matches) return { ok: false, reason: "mismatch" };
    if (entry.revoked) return { ok: false, reason: "revoked" };
    return { ok: true, id: parsed.id };
  }

  /** Re-read the store if the file changed since it was last read. */
  private refresh(): void {
    const signature = this.signature();
    if (signature === this.seen) return;
    this.seen = signature;
    try {
      this.load();
    } catch (error) {
      this.entries = new Map();
      this.pepper = NO_PEPPER;
      this.usable = false;
      this.options.onError?.(
        error instanceof ApiKeyError
          ? error
          : new ApiKeyError(
              "api_keys_file_invalid",
              `cannot read ${this.path}: ${(error as Error).message}`,
              {
                cause: error,
              },
            ),
      );
    }
  }

  private load(): void {
    const files = readApiKeyFiles(this.options.dataDir);
    this.entries = new Map(
      files.keys.map((k) => [
        k.id,
        {
          hash: Buffer.from(k.hash, "base64url"),
          salt: Buffer.from(k.salt, "base64url"),
          revoked: k.revoked_at !== undefined,
        },
      ]),
    );
    this.pepper = files.pepper ?? NO_PEPPER;
    this.usable = true;
  }

  private signature(): string {
    try {
      const stat = statSync(this.path, { throwIfNoEntry: false, bigint: true });
      return stat === undefined ? "absent" : `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    } catch (cause) {
      // Unreachable file: reading it fails too, with a message, and no key is accepted until it is back.
      return `unreachable:${(cause as NodeJS.ErrnoException).code ?? "?"}`;
    }
  }
}
