/**
 * The index of names PAIR stored outside its own service, so `pair credential list` can find them:
 * the platform stores can list one service's entries but not "everything one program stored". Every
 * entry of service `pair` is PAIR's and is found by listing that service; a name under any other
 * service (`pair credential set huggingface/work`) is recorded here. The index is itself an entry of
 * service `pair`, under an account no credential name can take (names start with a letter or a
 * digit), holding JSON: `{"version": 1, "credentials": ["SERVICE/ACCOUNT", ...]}` — names only.
 * Must not know: the platform store, the command line.
 */

import {
  CREDENTIAL_PREFIX,
  DEFAULT_CREDENTIAL_SERVICE,
  parseCredentialRef,
  type CredentialRef,
} from "../config/index.js";

/** The index's own entry: service `pair`, this account. */
export const INDEX_REF: CredentialRef = { service: DEFAULT_CREDENTIAL_SERVICE, account: ".credential-index" };
export const MAX_INDEXED_CREDENTIALS = 1024;
const VERSION = 1;

/** True when the name must be recorded in the index to be listed (it is outside service `pair`). */
export function needsIndex(ref: CredentialRef): boolean {
  return ref.service !== DEFAULT_CREDENTIAL_SERVICE;
}

export function sameRef(a: CredentialRef, b: CredentialRef): boolean {
  return a.service === b.service && a.account === b.account;
}

/** `SERVICE/ACCOUNT` back to a name; undefined for anything that is not a valid one. */
export function parseName(name: string): CredentialRef | undefined {
  const parsed = parseCredentialRef(`${CREDENTIAL_PREFIX}${name}`);
  return parsed.ok && name.includes("/") ? parsed.ref : undefined;
}

/**
 * The names in the index's text. An absent, damaged or foreign text reads as empty, and entries that
 * are not valid names are dropped: the index only helps `list` find names, it guards nothing, and the
 * next `set` outside service `pair` writes it afresh.
 */
export function decodeIndex(text: string | undefined): CredentialRef[] {
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof value !== "object" || value === null) return [];
  const { version, credentials } = value as { version?: unknown; credentials?: unknown };
  if (version !== VERSION || !Array.isArray(credentials)) return [];
  const refs: CredentialRef[] = [];
  for (const name of credentials.slice(0, MAX_INDEXED_CREDENTIALS)) {
    const ref = typeof name === "string" ? parseName(name) : undefined;
    if (ref !== undefined && needsIndex(ref) && !refs.some((r) => sameRef(r, ref))) refs.push(ref);
  }
  return refs;
}

export function encodeIndex(refs: readonly CredentialRef[]): string {
  return JSON.stringify({ version: VERSION, credentials: refs.map((r) => `${r.service}/${r.account}`) });
}

/** The index with `ref` added; "full" when it already holds MAX_INDEXED_CREDENTIALS other names. */
export function addToIndex(refs: readonly CredentialRef[], ref: CredentialRef): CredentialRef[] | "full" {
  if (refs.some((r) => sameRef(r, ref))) return [...refs];
  if (refs.length >= MAX_INDEXED_CREDENTIALS) return "full";
  return [...refs, ref];
}

export function removeFromIndex(refs: readonly CredentialRef[], ref: CredentialRef): CredentialRef[] {
  return refs.filter((r) => !sameRef(r, ref));
}
