/**
 * The RunpodTransport port: the five pod calls of REST v2 that the adapter needs, and the GPU
 * catalogue read (prices before any pod), in wire types.
 * Implementations throw RunpodApiError for failures and return result values for the expected
 * outcomes "no such pod" (getPod → undefined, deletePod → "not_found"). A transport never retries
 * a create and never dedupes one (Runpod has no idempotency key): a create whose answer was lost
 * fails with kind "uncertain", and only a listing can tell whether the pod exists.
 * Must not know: HTTP libraries, PAIR's identity scheme, leases, the ledger.
 */

import type { GpuCatalogEntry } from "./catalog-wire.js";
import type { RateLimitState } from "./rate-limit.js";
import type { CreatePodRequest, Pod, PodAction } from "./wire.js";

export interface CallOptions {
  /** Abandons the call; an abandoned create that may have been sent fails as "uncertain". */
  readonly signal?: AbortSignal;
}

export interface RunpodTransport {
  /** `POST /v2/pods` → the created pod (201). Never retried. */
  createPod(request: CreatePodRequest, options?: CallOptions): Promise<Pod>;
  /** `GET /v2/pods` → every pod of the account, TERMINATED ones still lingering included. */
  listPods(options?: CallOptions): Promise<Pod[]>;
  /** `GET /v2/pods/{id}` → the pod, or undefined when Runpod answers 404. */
  getPod(podId: string, options?: CallOptions): Promise<Pod | undefined>;
  /** `POST /v2/pods/{id}/action` → the updated pod (start, stop, restart) or undefined (terminate: 204). */
  podAction(podId: string, action: PodAction, options?: CallOptions): Promise<Pod | undefined>;
  /** `DELETE /v2/pods/{id}` → "deleted" (204) or "not_found" (404: already gone, or never ours). */
  deletePod(podId: string, options?: CallOptions): Promise<"deleted" | "not_found">;
  /**
   * `GET /v2/catalog/gpus?include=AVAILABILITY&product=POD` → every GPU type with its on-demand
   * prices. A read: an implementation may retry it (bounded) on failures a retry can help.
   */
  listGpuCatalog(options?: CallOptions): Promise<GpuCatalogEntry[]>;
  /** The rate-limit state the last answer reported, if any. */
  lastRateLimit(): RateLimitState | undefined;
}
