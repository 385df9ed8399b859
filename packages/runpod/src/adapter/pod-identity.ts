/**
 * How PAIR's identity lives in a Runpod pod: the pod id is the incarnation, the pod name is the
 * resource name (always `pair-…`), and owner tag, lease epoch, request id and served model are
 * written into the pod's env and read back from listings (`GET /v2/pods` echoes env as created).
 * A pod without our env is reported without an owner tag, so the core never adopts or stops it.
 * Must not know: HTTP, the controller, GPU choice.
 */

import type { ResourceReport } from "@pair/provision";
import type { Pod } from "../wire.js";
import { RUNPOD_PROVIDER } from "./capabilities.js";

export const POD_NAME_PREFIX = "pair-";

/** Env keys the adapter writes into every pod it creates. */
export const IDENTITY_ENV = {
  owner: "PAIR_OWNER",
  epoch: "PAIR_EPOCH",
  requestId: "PAIR_REQUEST_ID",
  model: "PAIR_MODEL",
} as const;

export interface PodIdentity {
  readonly ownerTag: string;
  readonly epoch: number;
  readonly requestId: string;
  readonly servedModel: string;
}

export function identityEnv(identity: PodIdentity): Record<string, string> {
  return {
    [IDENTITY_ENV.owner]: identity.ownerTag,
    [IDENTITY_ENV.epoch]: String(identity.epoch),
    [IDENTITY_ENV.requestId]: identity.requestId,
    [IDENTITY_ENV.model]: identity.servedModel,
  };
}

/** `https://{podId}-{port}.proxy.runpod.net` (reference §6); the emulator passes its own. */
export type ProxyUrlOf = (podId: string, port: number) => string;

/** Runpod's pod proxy (reference §6), as a template (`providers.runpod.proxy_url`). */
export const RUNPOD_PROXY_URL_TEMPLATE = "https://{pod_id}-{port}.proxy.runpod.net";

/**
 * A pod's proxy base URL from a template with `{pod_id}` and `{port}`: the id lowercased (Runpod's
 * host names are) and percent-encoded, so an id from the API can never change the URL's shape.
 */
export function proxyUrlFromTemplate(template: string): ProxyUrlOf {
  return (podId, port) =>
    template
      .replaceAll("{pod_id}", encodeURIComponent(podId.toLowerCase()))
      .replaceAll("{port}", String(Math.trunc(port)));
}

export const RUNPOD_PROXY_URL: ProxyUrlOf = proxyUrlFromTemplate(RUNPOD_PROXY_URL_TEMPLATE);

/** vLLM's OpenAI API on a pod: its proxy URL on `port` (from the one template), plus `/v1`. */
export function podApiBaseUrl(proxyUrl: ProxyUrlOf, podId: string, port: number): string {
  return `${proxyUrl(podId, port).replace(/\/+$/, "")}/v1`;
}

/** The first `<port>/http` the pod exposes. */
export function httpPort(pod: Pod): number | undefined {
  for (const p of pod.ports) {
    const m = /^(\d+)\/http$/.exec(p);
    if (m?.[1] !== undefined) return Number(m[1]);
  }
  return undefined;
}

/** A pod as the hosting contract sees it: only what the pod itself says. */
export function reportOf(pod: Pod, account: string, proxyUrl: ProxyUrlOf): ResourceReport {
  const env = pod.env;
  const epochText = env[IDENTITY_ENV.epoch];
  const epoch = epochText !== undefined && /^\d+$/.test(epochText) ? Number(epochText) : undefined;
  const owned = pod.name.startsWith(POD_NAME_PREFIX);
  const ownerTag = owned ? env[IDENTITY_ENV.owner] : undefined;
  const requestId = owned ? env[IDENTITY_ENV.requestId] : undefined;
  const servedModel = env[IDENTITY_ENV.model];
  const port = httpPort(pod);
  const createdAtMs = pod.createdAt === undefined ? Number.NaN : Date.parse(pod.createdAt);
  return {
    key: { provider: RUNPOD_PROVIDER, account, name: pod.name, incarnation: pod.id },
    status: pod.status === "UNKNOWN" ? pod.rawStatus : pod.status,
    ...(ownerTag === undefined ? {} : { ownerTag }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(owned && epoch !== undefined ? { epoch } : {}),
    ...(port === undefined ? {} : { address: proxyUrl(pod.id, port) }),
    ...(servedModel === undefined ? {} : { servedModel }),
    ...(pod.gpu === undefined ? {} : { hardware: pod.gpu.id }),
    ...(Number.isFinite(createdAtMs) ? { createdAtMs } : {}),
  };
}
