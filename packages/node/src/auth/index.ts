/**
 * API keys for the client port: the key format, the store in the data dir (`pair apikey`), the
 * running node's verifier, and the per-request decision with its 401s.
 * Must not know: routes, the command line's output.
 */

export {
  API_KEY_ID_MAX_CHARS,
  API_KEY_PREFIX,
  apiKeyIdProblem,
  formatApiKey,
  parseApiKey,
  RESERVED_API_KEY_IDS,
  type ParsedApiKey,
} from "./api-key-format.js";
export {
  API_KEYS_FILE,
  API_KEYS_PEPPER_FILE,
  apiKeysPath,
  apiKeysPepperPath,
  MAX_API_KEY_RECORDS,
  readApiKeyFiles,
  type StoredApiKey,
} from "./api-key-files.js";
export { API_KEY_HASH_ALGORITHM, hashApiKeySecret, type ConstantTimeEqual } from "./api-key-hash.js";
export {
  activeApiKeyIds,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  STALE_LOCK_MS,
  type ApiKeyStoreDeps,
  type ApiKeySummary,
  type CreatedApiKey,
  type RevokedApiKey,
} from "./api-key-store.js";
export {
  ApiKeyVerifier,
  type ApiKeyVerifierOptions,
  type KeyCheck,
  type KeyChecker,
  type KeyRefusal,
} from "./api-key-verifier.js";
export { ApiKeyError, AUTH_ERROR_CODES, type ApiKeyErrorCode, type AuthErrorCode } from "./auth-error.js";
export {
  authenticateClient,
  bearerToken,
  LOCAL_REQUESTER,
  rememberPerAddress,
  SOCKET_LOOPBACK_POLICY,
  unauthorizedReply,
  type ClientAuth,
  type ClientAuthRefusal,
  type ClientCredentials,
  type LoopbackPolicy,
  type UnauthorizedReply,
} from "./client-auth.js";
