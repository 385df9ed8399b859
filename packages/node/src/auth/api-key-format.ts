/**
 * An API key's text: `pair_<id>_<secret>`, the secret 32 random bytes in base64url (always 43
 * characters). The secret has a fixed length, so the id is what lies between `pair_` and the last 44
 * characters and may itself contain `_`. The id is not secret: it names the key in the store and
 * becomes the requester of the workloads made with it. Parsing is total and never echoes its input.
 * Must not know: files, HTTP, hashing.
 */

export const API_KEY_PREFIX = "pair_";
export const API_KEY_SECRET_BYTES = 32;
/** base64url of 32 bytes, unpadded. */
export const API_KEY_SECRET_CHARS = 43;
/** The same rule as a node name in config: 1 to 63 letters, digits, `.`, `_`, `-`, a letter or digit first. */
export const API_KEY_ID_MAX_CHARS = 63;
/** Requester ids PAIR writes itself (`local`: a loopback caller without a key). No key may take one. */
export const RESERVED_API_KEY_IDS: readonly string[] = ["local"];
/** Longest text that can be a key; anything longer is refused before it is looked at. */
export const API_KEY_MAX_CHARS = API_KEY_PREFIX.length + API_KEY_ID_MAX_CHARS + 1 + API_KEY_SECRET_CHARS;

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SECRET = /^[A-Za-z0-9_-]+$/;

/** Why an id cannot name a key, or undefined when it can. */
export function apiKeyIdProblem(id: string): string | undefined {
  if (id.length === 0 || id.length > API_KEY_ID_MAX_CHARS || !ID.test(id))
    return `an API key id is 1 to ${API_KEY_ID_MAX_CHARS} letters, digits, ".", "_" or "-", starting with a letter or digit`;
  if (RESERVED_API_KEY_IDS.includes(id))
    return `"${id}" is reserved: history records callers on loopback without a key as "${id}"`;
  return undefined;
}

/** The key's text for an id and its secret bytes. */
export function formatApiKey(id: string, secret: Uint8Array): string {
  if (secret.length !== API_KEY_SECRET_BYTES)
    throw new RangeError(`a secret is ${API_KEY_SECRET_BYTES} bytes`);
  return `${API_KEY_PREFIX}${id}_${Buffer.from(secret).toString("base64url")}`;
}

export interface ParsedApiKey {
  readonly id: string;
  /** The secret's base64url text, as presented. */
  readonly secret: string;
}

/** True when the text has a PAIR key's shape (the prefix); `parseApiKey` says whether it is well formed. */
export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX);
}

/** The id and secret of a well-formed key, or undefined. */
export function parseApiKey(text: string): ParsedApiKey | undefined {
  if (text.length > API_KEY_MAX_CHARS || !text.startsWith(API_KEY_PREFIX)) return undefined;
  const split = text.length - API_KEY_SECRET_CHARS - 1;
  if (split <= API_KEY_PREFIX.length || text[split] !== "_") return undefined;
  const id = text.slice(API_KEY_PREFIX.length, split);
  const secret = text.slice(split + 1);
  if (apiKeyIdProblem(id) !== undefined || !SECRET.test(secret)) return undefined;
  // base64url of 32 bytes leaves 4 spare bits in the last character: only one spelling is canonical.
  if (Buffer.from(secret, "base64url").toString("base64url") !== secret) return undefined;
  return { id, secret };
}
