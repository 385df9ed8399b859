/**
 * The OS credential store behind the `CredentialStore` port, on @napi-rs/keyring: the Secret Service
 * (gnome-keyring, KWallet, KeePassXC over D-Bus) on Linux — pinned, so a missing or locked keyring is
 * an error rather than a silent fall-back to the kernel's in-memory keyutils store — the Keychain on
 * macOS, Credential Manager on Windows. Secrets are stored as UTF-8 bytes (`setSecret`/`getSecret`).
 *
 * Where the library's answer would hide a failure, this class asks differently:
 * - `getPassword()` resolves null for an entry of a *locked* Secret Service keyring (2.1.2, seen on
 *   gnome-keyring 42); `getSecret()` asks to unlock and rejects when that fails, so reads use it.
 * - `deleteCredential()` resolves false for an entry of a locked keyring: `delete` reads the entry first
 *   (which fails when locked) and deletes only what it found.
 * - the AbortSignal the calls accept is not honoured, so every call races a timer instead
 *   (`callTimeoutMs`, default 60 s: long enough to answer a desktop unlock prompt).
 * - gnome-keyring 42 can crash while answering (a client that goes away while opening a session
 *   takes the daemon down), and the desktop or the bus starts it again on the next call. So on Linux a
 *   call that the Secret Service dropped without a reply, or made on a session or item the restarted
 *   one does not know, is made again after a short pause (`retryDelaysMs`), also through "no such
 *   service" while it restarts — within the call's time limit. Every operation is safe to repeat; a `delete` whose first try went through before the
 *   crash finds nothing the second time and answers false.
 * Listing uses `findCredentialsAsync(service)` for service `pair` and for every service in the index
 * of names PAIR stored elsewhere (credential-index.ts). That call also returns the secrets: they are
 * dropped at once and only account names are kept. The index is written before a secret is stored
 * and after it is deleted, so it never misses a stored name; a stale index name is not listed.
 * Two `set`s outside service `pair` at the same moment may lose one index update (last writer wins):
 * the secret is stored, and `set` again lists it.
 * The library reads the D-Bus address from the process environment, not from an injected one.
 * Must not know: the command line, config files, what the secrets are for.
 */

import { HOLDING_RUNTIME, type TimerHandle } from "@pair/cluster";
import { Redacted } from "@pair/cluster";
import {
  CREDENTIAL_PREFIX,
  DEFAULT_CREDENTIAL_SERVICE,
  formatCredentialRef,
  parseCredentialRef,
  type CredentialRef,
} from "../config/index.js";
import {
  addToIndex,
  decodeIndex,
  encodeIndex,
  INDEX_REF,
  MAX_INDEXED_CREDENTIALS,
  needsIndex,
  removeFromIndex,
} from "./credential-index.js";
import { CredentialError } from "./credential-error.js";
import { MAX_SECRET_BYTES, type CredentialStore } from "./credential-store.js";
import {
  DROPPED_CALL,
  libraryUnavailable,
  platformFailure,
  storeTimeout,
  type CredentialOperation,
} from "./platform-failure.js";

/** The part of an @napi-rs/keyring `AsyncEntry` this store uses. */
export interface KeyringEntry {
  setSecret(secret: Uint8Array): Promise<void>;
  getSecret(): Promise<number[] | null>;
  deleteCredential(): Promise<boolean>;
}

/** The part of @napi-rs/keyring this store uses; tests hand in a failing one. */
export interface KeyringBinding {
  readonly AsyncEntry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: "secret-service" | "keyutils" } },
  ) => KeyringEntry;
  findCredentialsAsync(service: string): Promise<{ account: string; password: string }[]>;
}

export interface OsCredentialStoreOptions {
  /** Longest wait for one call to the store, an unlock prompt included, ms (100 to 600 000; default 60 000). */
  readonly callTimeoutMs?: number;
  /** Whose advice failures give and whether the Secret Service is pinned (default: this process's). */
  readonly platform?: NodeJS.Platform;
  /** Loads the library (default: `import("@napi-rs/keyring")`, on first use). */
  readonly loadKeyring?: () => Promise<KeyringBinding>;
  /**
   * Pauses before each repeat of a call the Secret Service dropped (it crashed or was stopped),
   * ms; its length is the number of repeats (default `DEFAULT_RETRY_DELAYS_MS`; `[]`: none).
   */
  readonly retryDelaysMs?: readonly number[];
}

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** About 4 s in all: time for the bus or the desktop to start a crashed keyring again. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [100, 250, 500, 1_000, 2_000];
const MIN_CALL_TIMEOUT_MS = 100;
const MAX_CALL_TIMEOUT_MS = 600_000;

const INDEX_WHAT = `PAIR's index of credential names (${formatCredentialRef(INDEX_REF)})`;
const LIST_WHAT = "the names of PAIR's credentials";

async function importKeyring(): Promise<KeyringBinding> {
  const { AsyncEntry, findCredentialsAsync } = await import("@napi-rs/keyring");
  return { AsyncEntry, findCredentialsAsync: (service) => findCredentialsAsync(service) };
}

/** Only refs that config could name (and `pair credential` accepts) reach the store. */
function checkRef(ref: CredentialRef): void {
  const parsed = parseCredentialRef(`${CREDENTIAL_PREFIX}${ref.service}/${ref.account}`);
  if (!parsed.ok || parsed.ref.service !== ref.service || parsed.ref.account !== ref.account)
    throw new RangeError(`not a credential name: ${JSON.stringify(`${ref.service}/${ref.account}`)}`);
}

function compareRefs(a: CredentialRef, b: CredentialRef): number {
  return a.service === b.service
    ? a.account < b.account
      ? -1
      : a.account > b.account
        ? 1
        : 0
    : a.service < b.service
      ? -1
      : 1;
}

/**
 * Whether the call may be made again: the Secret Service went away while answering (gnome-keyring
 * crashed or was stopped), or a new one does not know the session or item the library had opened on
 * the old one (an item deleted by another program meanwhile looks the same, and asking again is right
 * then too: the search no longer finds it). Once it went away, "no such service" means it is still
 * starting again.
 */
function secretServiceDropped(error: unknown, droppedBefore: boolean): boolean {
  const text = error instanceof Error ? error.message : String(error);
  if (DROPPED_CALL.test(text)) return true;
  if (/The session (wrapping the secret )?does not exist|Secret\.Error\.NoSession/i.test(text)) return true;
  if (/(Object does not exist at path|No such interface).{0,120}\/org\/freedesktop\/secrets\//i.test(text))
    return true;
  return droppedBefore && /ServiceUnknown|not provided by any \.service files/i.test(text);
}

function pause(ms: number): Promise<void> {
  return ms === 0 ? Promise.resolve() : HOLDING_RUNTIME.timers.sleep(ms).then(() => undefined);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export class OsCredentialStore implements CredentialStore {
  readonly #timeoutMs: number;
  readonly #platform: NodeJS.Platform;
  readonly #load: () => Promise<KeyringBinding>;
  readonly #retryDelaysMs: readonly number[];
  #binding: Promise<KeyringBinding> | undefined;

  constructor(options: OsCredentialStoreOptions = {}) {
    const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    if (!(
      Number.isInteger(timeoutMs) &&
      timeoutMs >= MIN_CALL_TIMEOUT_MS &&
      timeoutMs <= MAX_CALL_TIMEOUT_MS
    ))
      throw new RangeError(
        `callTimeoutMs: expected a whole number from ${MIN_CALL_TIMEOUT_MS} to ${MAX_CALL_TIMEOUT_MS}, got ${timeoutMs}`,
      );
    this.#timeoutMs = timeoutMs;
    this.#platform = options.platform ?? process.platform;
    this.#load = options.loadKeyring ?? importKeyring;
    const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    if (!delays.every((ms) => Number.isInteger(ms) && ms >= 0 && ms <= MAX_CALL_TIMEOUT_MS))
      throw new RangeError(
        `retryDelaysMs: expected whole numbers from 0 to ${MAX_CALL_TIMEOUT_MS}, got ${delays.join(", ")}`,
      );
    this.#retryDelaysMs = [...delays];
  }

  async get(ref: CredentialRef): Promise<Redacted<string> | undefined> {
    checkRef(ref);
    const what = formatCredentialRef(ref);
    const bytes = await this.#readBytes(ref, what);
    if (bytes === null) return undefined;
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch (error) {
      throw new CredentialError(
        "credential_unavailable",
        `${what} in the OS credential store is not UTF-8 text (another program wrote it); ` +
          `store it again with \`pair credential set ${ref.service}/${ref.account}\``,
        { cause: error },
      );
    }
    return new Redacted(text, `credential ${ref.service}/${ref.account}`);
  }

  async set(ref: CredentialRef, secret: Redacted<string>): Promise<void> {
    checkRef(ref);
    const text = secret.reveal();
    const bytes = new TextEncoder().encode(text);
    if (bytes.length === 0 || bytes.length > MAX_SECRET_BYTES)
      throw new RangeError(`a secret is 1 to ${MAX_SECRET_BYTES} bytes of UTF-8, got ${bytes.length}`);
    if (needsIndex(ref)) {
      const index = addToIndex(await this.#readIndex(), ref);
      if (index === "full")
        throw new CredentialError(
          "credential_index_full",
          `cannot store ${formatCredentialRef(ref)}: PAIR already keeps ${MAX_INDEXED_CREDENTIALS} credentials ` +
            "outside service pair; delete unused ones (pair credential list, pair credential delete NAME)",
        );
      await this.#writeIndex(index);
    }
    const what = formatCredentialRef(ref);
    await this.#call("store", what, (k) => this.#entry(k, ref).setSecret(bytes), [text]);
  }

  async delete(ref: CredentialRef): Promise<boolean> {
    checkRef(ref);
    const what = formatCredentialRef(ref);
    // Reading first turns a locked keyring into an error (deleteCredential alone answers false).
    const found = (await this.#readBytes(ref, what)) !== null;
    const deleted =
      found && (await this.#call("delete", what, (k) => this.#entry(k, ref).deleteCredential()));
    if (needsIndex(ref)) {
      const before = await this.#readIndex();
      const after = removeFromIndex(before, ref);
      if (after.length !== before.length) await this.#writeIndex(after);
    }
    return deleted;
  }

  async list(): Promise<readonly CredentialRef[]> {
    const indexed = await this.#readIndex("list", LIST_WHAT);
    const services = [DEFAULT_CREDENTIAL_SERVICE, ...new Set(indexed.map((r) => r.service))];
    const refs: CredentialRef[] = [];
    for (const service of new Set(services)) {
      const accounts = await this.#call("list", LIST_WHAT, async (k) =>
        // The library hands back each secret too; keep the account names only.
        (await k.findCredentialsAsync(service)).map((c) => c.account),
      );
      for (const account of new Set(accounts)) {
        const ref = { service, account };
        const listed =
          service === DEFAULT_CREDENTIAL_SERVICE
            ? parseCredentialRef(`${CREDENTIAL_PREFIX}${service}/${account}`).ok
            : indexed.some((r) => r.account === account && r.service === service);
        if (listed) refs.push(ref);
      }
    }
    return refs.sort(compareRefs);
  }

  #entry(keyring: KeyringBinding, ref: CredentialRef): KeyringEntry {
    return this.#platform === "linux"
      ? new keyring.AsyncEntry(ref.service, ref.account, { linux: { store: "secret-service" } })
      : new keyring.AsyncEntry(ref.service, ref.account);
  }

  /** The entry's bytes, or null when absent. */
  async #readBytes(
    ref: CredentialRef,
    what: string,
    operation: CredentialOperation = "read",
  ): Promise<Uint8Array | null> {
    const bytes = await this.#call(operation, what, (k) => this.#entry(k, ref).getSecret());
    return bytes === null ? null : Uint8Array.from(bytes);
  }

  /** The names in the index; one that cannot be read as such reads as empty (decodeIndex). */
  async #readIndex(operation: CredentialOperation = "read", what = INDEX_WHAT): Promise<CredentialRef[]> {
    const bytes = await this.#readBytes(INDEX_REF, what, operation);
    return decodeIndex(bytes === null ? undefined : new TextDecoder().decode(bytes));
  }

  async #writeIndex(refs: readonly CredentialRef[]): Promise<void> {
    if (refs.length === 0) {
      await this.#call("delete", INDEX_WHAT, (k) => this.#entry(k, INDEX_REF).deleteCredential());
      return;
    }
    const bytes = new TextEncoder().encode(encodeIndex(refs));
    await this.#call("store", INDEX_WHAT, (k) => this.#entry(k, INDEX_REF).setSecret(bytes));
  }

  /** One call to the store: loads the library once, bounds the wait, turns every failure into a CredentialError. */
  async #call<T>(
    operation: CredentialOperation,
    what: string,
    run: (keyring: KeyringBinding) => Promise<T>,
    secrets: readonly string[] = [],
  ): Promise<T> {
    this.#binding ??= this.#load();
    let keyring: KeyringBinding;
    try {
      keyring = await this.#binding;
    } catch (error) {
      this.#binding = undefined;
      throw libraryUnavailable(error, this.#platform);
    }
    let timer: TimerHandle | undefined;
    let over = false;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = HOLDING_RUNTIME.timers.after(() => {
        over = true;
        reject(storeTimeout({ operation, what }, this.#timeoutMs));
      }, this.#timeoutMs);
    });
    const attempts = async (): Promise<T> => {
      let dropped = 0;
      for (;;) {
        try {
          return await run(keyring);
        } catch (error) {
          const again =
            this.#platform === "linux" &&
            !over &&
            dropped < this.#retryDelaysMs.length &&
            secretServiceDropped(error, dropped > 0);
          if (!again)
            throw platformFailure(error, { platform: this.#platform, operation, what, secrets, dropped });
          await pause(this.#retryDelaysMs[dropped] ?? 0);
          dropped += 1;
          // The time limit passed during the pause: the caller has its answer; ask nothing more.
          if (over)
            throw platformFailure(error, { platform: this.#platform, operation, what, secrets, dropped });
        }
      }
    };
    try {
      return await Promise.race([attempts(), timedOut]);
    } finally {
      timer?.cancel();
    }
  }
}
