/**
 * The port PAIR keeps its secrets behind: read, store, delete one credential by its reference
 * (`os-credential-store:SERVICE/ACCOUNT`), and list the names PAIR stored. Secrets travel as
 * `Redacted<string>`; names are not secret. Every failure of the store itself is a `CredentialError`
 * (`credential_unavailable`) that says what to do.
 * Must not know: which platform store or library is behind it, the command line, config files.
 */

import type { Redacted } from "@pair/cluster";
import type { CredentialRef } from "../config/index.js";

/** The longest secret PAIR stores, UTF-8 bytes (tokens are well under 1 KiB). */
export const MAX_SECRET_BYTES = 65_536;

export interface CredentialStore {
  /** The secret, or undefined when no such credential is stored. @throws CredentialError */
  get(ref: CredentialRef): Promise<Redacted<string> | undefined>;
  /** Stores (or replaces) the secret: 1 to MAX_SECRET_BYTES bytes of UTF-8. @throws CredentialError */
  set(ref: CredentialRef, secret: Redacted<string>): Promise<void>;
  /** True when a credential was deleted, false when there was none. @throws CredentialError */
  delete(ref: CredentialRef): Promise<boolean>;
  /** The names of PAIR's credentials (never a secret), sorted by service, then account. @throws CredentialError */
  list(): Promise<readonly CredentialRef[]>;
}
