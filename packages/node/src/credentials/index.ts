/**
 * Secrets in the OS credential store: the `CredentialStore` port, its implementation on the
 * platform's store (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows), and
 * `CredentialError` with its codes. The public face of this folder; `pair credential` and the code
 * that sends a rented node's token use it.
 * Must not know: the command line, config files, what the secrets are for.
 */

export { CREDENTIAL_ERROR_CODES, CredentialError, type CredentialErrorCode } from "./credential-error.js";
export { MAX_INDEXED_CREDENTIALS } from "./credential-index.js";
export { MAX_SECRET_BYTES, type CredentialStore } from "./credential-store.js";
export {
  DEFAULT_CALL_TIMEOUT_MS,
  OsCredentialStore,
  type KeyringBinding,
  type KeyringEntry,
  type OsCredentialStoreOptions,
} from "./os-credential-store.js";
export { MIN_SECRET_CHARS, REDACTED_MARK, SecretRedactor, StreamRedactor } from "./secret-redactor.js";
export { HEADLESS_RECIPE, SECRET_SERVICE_PACKAGES } from "./platform-failure.js";
