/**
 * @pair/runpod: the Runpod pod adapter's transport layer (seed 000): the RunpodTransport port,
 * REST v2 wire types, typed errors and the HTTPS transport. The provision-contract adapter built on
 * it (identity, leases, reconciliation) is not here yet.
 * Must not know: @pair/node (the daemon), credentials storage.
 */

export type { CallOptions, RunpodTransport } from "./transport.js";
export { HttpsRunpodTransport, type HttpsRunpodTransportOptions } from "./https-transport.js";
export {
  RunpodApiError,
  isCapacityRefusal,
  kindOfAnswer,
  parseProblem,
  type ProblemFields,
  type RunpodErrorKind,
  type RunpodOperation,
} from "./errors.js";
export {
  parseRateLimit,
  parseRetryAfterMs,
  type RateLimitState,
  type RateLimitWindow,
} from "./rate-limit.js";
export { RedactedString, type SecretString } from "./secret.js";
export {
  POD_STATUSES,
  WireShapeError,
  parsePod,
  parsePodList,
  type Cloud,
  type CreatePodRequest,
  type Pod,
  type PodAction,
  type PodRuntime,
  type PodStatus,
} from "./wire.js";
