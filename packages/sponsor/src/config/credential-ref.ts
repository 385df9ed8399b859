/**
 * Credential references: `os-credential-store:SERVICE/ACCOUNT` (a bare `ACCOUNT` means service
 * `pair`, as `pair credential set NAME` does). Anything else where a credential belongs is taken for
 * a literal secret and refused; no message here ever contains the text it was given.
 * Must not know: the OS credential store, the secret itself, YAML.
 */

import type { CredentialRef } from "./rented-config.js";

export const CREDENTIAL_PREFIX = "os-credential-store:";
/** The service of a bare `ACCOUNT`. */
export const DEFAULT_CREDENTIAL_SERVICE = "pair";

const PART = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;
/** Account names that look like a pasted token (Hugging Face, OpenAI-style, Runpod). */
const TOKEN_SHAPED = /^(?:hf_|sk-|rpa_)[A-Za-z0-9_-]{16,}$/;

const HOW_TO_STORE =
  "store it with `pair credential set SERVICE/ACCOUNT` (the secret is read from stdin) and write " +
  "os-credential-store:SERVICE/ACCOUNT here";

/** What a literal secret is told (the secret itself is never repeated). */
export const LITERAL_SECRET_MESSAGE = `a literal secret is not accepted; ${HOW_TO_STORE}`;

export type CredentialRefResult =
  | { readonly ok: true; readonly ref: CredentialRef }
  | { readonly ok: false; readonly code: "literal_credential" | "invalid_value"; readonly message: string };

export function parseCredentialRef(text: string): CredentialRefResult {
  if (!text.startsWith(CREDENTIAL_PREFIX)) {
    return { ok: false, code: "literal_credential", message: LITERAL_SECRET_MESSAGE };
  }
  const name = text.slice(CREDENTIAL_PREFIX.length);
  const slash = name.indexOf("/");
  const service = slash === -1 ? DEFAULT_CREDENTIAL_SERVICE : name.slice(0, slash);
  const account = slash === -1 ? name : name.slice(slash + 1);
  if (TOKEN_SHAPED.test(account)) {
    return {
      ok: false,
      code: "literal_credential",
      message: `the account name looks like a literal secret (a token); ${HOW_TO_STORE}`,
    };
  }
  if (!PART.test(service) || !PART.test(account)) {
    return {
      ok: false,
      code: "invalid_value",
      message:
        "expected os-credential-store:SERVICE/ACCOUNT or os-credential-store:ACCOUNT, each name 1-128 " +
        "letters, digits or . _ @ + - (starting with a letter or digit)",
    };
  }
  return { ok: true, ref: { service, account } };
}

/** The reference as written in config (`os-credential-store:pair/hf`). */
export function formatCredentialRef(ref: CredentialRef): string {
  return `${CREDENTIAL_PREFIX}${ref.service}/${ref.account}`;
}
