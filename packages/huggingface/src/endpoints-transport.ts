/**
 * The port the Hugging Face adapter talks through: every control-plane call it makes, in domain
 * types. The HTTPS implementation (https-transport.ts) and any test double implement it; every
 * failure is a `HuggingFaceApiError` with a stable `kind`.
 * Must not know: HTTP, URLs, retries, tokens.
 */

import type {
  HfAccount,
  HfCatalogDeploy,
  HfComputeOffer,
  HfEndpoint,
  HfEndpointSpec,
  HfEndpointUpdate,
} from "./model.js";

export interface EndpointsTransport {
  /** The token's account (hub `whoami-v2`): the default namespace is `name` when `type` is "user". */
  whoami(): Promise<HfAccount>;
  /** Every endpoint of the namespace (HF's listing is not paginated). */
  listEndpoints(namespace: string): Promise<HfEndpoint[]>;
  /** Throws `not_found` when absent. */
  getEndpoint(namespace: string, name: string): Promise<HfEndpoint>;
  /** Never retried. A lost answer throws `uncertain`: list to find out whether it exists. */
  createEndpoint(namespace: string, spec: HfEndpointSpec): Promise<HfEndpoint>;
  /** Never retried (a lost answer is `uncertain`). */
  updateEndpoint(namespace: string, name: string, update: HfEndpointUpdate): Promise<HfEndpoint>;
  pause(namespace: string, name: string): Promise<HfEndpoint>;
  /** Resuming a running endpoint is not an error: HF's "already running" answer returns the endpoint. */
  resume(namespace: string, name: string): Promise<HfEndpoint>;
  scaleToZero(namespace: string, name: string): Promise<HfEndpoint>;
  /** Irreversible. Absent after a lost first attempt counts as deleted. */
  deleteEndpoint(namespace: string, name: string): Promise<void>;
  /** Hardware with prices and the namespace's quota. */
  listProviderCompute(namespace: string): Promise<HfComputeOffer[]>;
  /** Repository ids with a tested recipe in HF's endpoint catalog. */
  catalog(): Promise<string[]>;
  /** Never retried (a lost answer is `uncertain`). */
  deployFromCatalog(request: HfCatalogDeploy): Promise<HfEndpoint>;
  /** Releases connections. */
  close(): Promise<void>;
}
