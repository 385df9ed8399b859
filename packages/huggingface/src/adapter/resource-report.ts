/**
 * An endpoint as the hosting contract sees it: the key `(huggingface-endpoint, namespace, name,
 * incarnation = status.createdAt)` — a recreated same-name endpoint has another `createdAt` and so is
 * another resource — and a report holding only what HF said (HF's state word verbatim, PAIR's marks
 * read back, the URL, the repository, readiness).
 * Must not know: HTTP, what the contract does with a report.
 */

import type { ResourceKey, ResourceReport } from "@pair/provision";
import type { HfEndpoint } from "../model.js";
import { HF_ENDPOINT_PROVIDER } from "./capabilities.js";
import { readOwnership } from "./ownership.js";

export function endpointKey(endpoint: HfEndpoint): ResourceKey {
  return {
    provider: HF_ENDPOINT_PROVIDER,
    account: endpoint.namespace,
    name: endpoint.name,
    incarnation: endpoint.incarnation,
  };
}

/**
 * Ready to serve: `running`, and `scaledToZero` (it serves after a cold start that any request
 * triggers). Starting, updating, paused and failed endpoints are not ready.
 */
export function isReady(endpoint: HfEndpoint): boolean {
  return endpoint.state === "running" || endpoint.state === "scaledToZero";
}

export function toResourceReport(endpoint: HfEndpoint): ResourceReport {
  const marks = readOwnership(endpoint.tags, endpoint.env);
  return {
    key: endpointKey(endpoint),
    status: endpoint.rawState,
    ready: isReady(endpoint),
    servedModel: endpoint.repository,
    ...marks,
    ...(endpoint.url === undefined ? {} : { address: endpoint.url }),
    ...(endpoint.instanceType === undefined ? {} : { hardware: endpoint.instanceType }),
    ...(Number.isFinite(endpoint.createdAtMs) ? { createdAtMs: endpoint.createdAtMs } : {}),
    ...(endpoint.message === undefined ? {} : { message: endpoint.message }),
  };
}
