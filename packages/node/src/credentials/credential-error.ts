/**
 * The refusals of the OS credential store: one `CredentialError` with a stable `code`, a message
 * that says what failed and what to do, the platform error as `cause`, and whether retrying can help.
 * Messages name credentials (`os-credential-store:SERVICE/ACCOUNT`), never a secret.
 * Must not know: which library talks to the store, the command line, HTTP.
 */

import { CodedError } from "../errors/coded-error.js";

/** Stable codes. Scripts and tests match on these; add freely, never rename. */
export const CREDENTIAL_ERROR_CODES = [
  /**
   * The store cannot be used: no D-Bus session bus, no Secret Service provider, a locked keyring,
   * a dismissed unlock prompt, no answer in time, a library that does not load (HTTP 503).
   */
  "credential_unavailable",
  /** `pair credential set` of one credential more than the index of names PAIR keeps can hold. */
  "credential_index_full",
] as const;

export type CredentialErrorCode = (typeof CREDENTIAL_ERROR_CODES)[number];

export class CredentialError extends CodedError<CredentialErrorCode> {
  override readonly name = "CredentialError";

  constructor(code: CredentialErrorCode, message: string, options?: { cause?: unknown }) {
    // A person has to act (start or unlock the keyring, remove names); the same call again will not help.
    super(code, `${code}: ${message}`, { cause: options?.cause, retryable: false });
  }
}
