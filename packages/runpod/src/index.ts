/**
 * @pair/runpod: the Runpod pod adapter (seed 000): the RunpodTransport port, REST v2 wire types,
 * typed errors and the HTTPS transport; the hosting contract's ProviderPort over it (RunpodProvider,
 * RunpodModel settings, pod identity); and the readiness probe of a pod's vLLM (HttpsVllmProbe).
 * The pod's lifecycle shell over them (RunpodPodSupervisor) is @pair/sponsor's.
 * Must not know: @pair/node (the daemon), credentials storage.
 */

export type { CallOptions, RunpodTransport } from "./transport.js";
export { parseGpuCatalog, type GpuCatalogEntry } from "./catalog-wire.js";
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
export * from "./adapter/index.js";
export {
  HttpsVllmProbe,
  type HttpsVllmProbeOptions,
  type ProbeResult,
  type ReadinessProbe,
} from "./vllm-probe.js";
