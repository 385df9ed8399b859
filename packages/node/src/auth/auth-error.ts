/**
 * The refusals of the API-key layer: `unauthorized` (the 401 a client gets on the client port) and
 * the `ApiKeyError`s of the key store (`pair apikey …`, node start). Each carries a stable code and
 * whether retrying can help. Messages name ids and files, never a key or a hash.
 * Must not know: HTTP, the command line, how the node reports errors.
 */

import { CodedError } from "../errors/coded-error.js";

/** Stable codes. Scripts and tests match on these; add freely, never rename. */
export const AUTH_ERROR_CODES = [
  /** A client beyond loopback sent no API key, or one that is unknown, revoked or mistyped (401). */
  "unauthorized",
  /** `pair apikey create` with an id that is taken (revoked ids stay taken). */
  "api_key_exists",
  /** The store holds MAX_API_KEY_RECORDS records (revoked ones included). */
  "api_keys_full",
  /** `pair apikey revoke` of an id the store does not hold. */
  "api_key_not_found",
  /** An id that is not 1 to 63 letters, digits, `.`, `_`, `-`, or one PAIR reserves (`local`). */
  "invalid_api_key_id",
  /** `api-keys.json` or `api-keys.pepper` cannot be read as what it should be. */
  "api_keys_file_invalid",
  /** `api-keys.json` or `api-keys.pepper` is writable by group or others (writing it grants access). */
  "api_keys_file_exposed",
  /** Another `pair apikey` command holds the store's lock; retry shortly. */
  "api_keys_busy",
] as const;

export type AuthErrorCode = (typeof AUTH_ERROR_CODES)[number];
export type ApiKeyErrorCode = Exclude<AuthErrorCode, "unauthorized">;

export class ApiKeyError extends CodedError<ApiKeyErrorCode> {
  override readonly name = "ApiKeyError";

  constructor(code: ApiKeyErrorCode, message: string, options?: { cause?: unknown }) {
    // Only a busy store clears by itself; every other refusal needs a person to act.
    super(code, `${code}: ${message}`, { cause: options?.cause, retryable: code === "api_keys_busy" });
  }
}
