/**
 * @pair/huggingface: the Hugging Face adapter — domain types, HF's wire models, the
 * EndpointsTransport port, its HTTPS implementation, the retry policy and the typed error; and
 * (adapter/) the Inference Endpoints provider behind the hosting contract's port, the state → node
 * treatment table and the cost/idle/budget policy helpers.
 * Must not know: PAIR's node (never imports @pair/node), credential storage.
 */

export type { EndpointsTransport } from "./endpoints-transport.js";
export {
  HuggingFaceApiError,
  isAlreadyRunning,
  kindOfStatus,
  providerMessageOf,
  type HfErrorKind,
} from "./errors.js";
export {
  DEFAULT_CATALOG_API,
  DEFAULT_ENDPOINTS_API,
  DEFAULT_HUB_API,
  HfTransportOptionError,
  HttpsEndpointsTransport,
  type HttpsTransportOptions,
} from "./https-transport.js";
export * from "./model.js";
export {
  DEFAULT_RETRY_POLICY,
  backoffMs,
  decideRetry,
  parseRetryAfter,
  validateRetryPolicy,
  type AttemptOutcome,
  type RetryDecision,
  type RetryPolicy,
} from "./retry-policy.js";
export { RetryAfterGate } from "./retry-after-gate.js";
export { HfToken, type RevealableToken } from "./secret-token.js";
export type * from "./wire.js";
export { toAccount, toCreateBody, toEndpoint, toOffers, toUpdateBody } from "./wire-mapping.js";
export * from "./adapter/index.js";
export * from "./jobs/index.js";
