/**
 * Probing one rented node, the sponsor's periodic look at it: read its credential from the OS credential
 * store (once, kept redacted), look a Hugging Face endpoint up by name (its URL, state and GPU — its
 * instance type and size — from the Endpoints API), then ask its `/v1/models` over verified HTTPS for
 * its models and prices, and check once per credential whether it answers without one. The answer is
 * written into the node's state.
 * Must not know: the registry of nodes (rented-nodes.ts), views, routing, the client API.
 */

import { podApiBaseUrl, RUNPOD_PROXY_URL, type ProxyUrlOf } from "@pair/runpod";
import type { Dispatcher } from "undici";
import type { Redacted } from "@pair/cluster";
import { formatCredentialRef, RENTED_DEFAULTS, type RentedNodeConfig } from "../config/index.js";
import { endpointGpuLabel } from "../core/gpu-label.js";
import { HF_STATES, type EndpointLookup, type EndpointLookupFn } from "./hf-endpoint-states.js";
import { listModels, type TokenPrices } from "../core/models-probe.js";
import type { CredentialReader, ManagedStatus, RentedState } from "../core/managed-node.js";
import { credentialRejectedReason } from "../core/node-credentials.js";

export type { CredentialReader, ManagedStatus, RentedState } from "../core/managed-node.js";
export { credentialRejectedReason } from "../core/node-credentials.js";

/** What a probe uses (`RentedNodesOptions` has it all). */
export interface ProbeDeps {
  readonly credentials: CredentialReader;
  readonly dispatcher: Dispatcher;
  /** Longest a probe may take (default 10 s). */
  readonly probeTimeoutMs?: number;
  /** Hugging Face endpoints by name (the Endpoints API); absent: such nodes are unsupported. */
  readonly lookupEndpoint?: EndpointLookupFn;
  /** Nodes the manager knows without a probe (a Runpod pod made on demand). */
  readonly managed?: { status?(name: string): ManagedStatus | undefined };
  /** Runpod pods' proxy base URL, from `providers.runpod.proxy_url` (default Runpod's own). */
  readonly runpodProxyUrl?: ProxyUrlOf;
  readonly log?: (line: string) => void;
}

/**
 * Where a node's requests go when its config alone says so: its `base_url`, or for a Runpod pod
 * attached by id without one, the pod's proxy URL from the one configured template, plus `/v1`.
 * Undefined when the provider's API tells it (a Hugging Face endpoint, a pod PAIR creates).
 */
export function configuredBaseUrl(
  config: RentedNodeConfig,
  runpodProxyUrl: ProxyUrlOf = RUNPOD_PROXY_URL,
): string | undefined {
  if (config.provider === "runpod" && "podId" in config)
    return config.baseUrl ?? podApiBaseUrl(runpodProxyUrl, config.podId, RENTED_DEFAULTS.runpod_proxy_port);
  return "baseUrl" in config ? config.baseUrl : undefined;
}

/** One rented node as the registry keeps it; the probe writes into it. */
export interface NodeState {
  config: RentedNodeConfig;
  readonly source: "config" | "attached";
  state: RentedState;
  models: string[];
  token: Redacted<string> | undefined;
  lastError: string | undefined;
  warnings: string[];
  /** Whether the no-credential check was made (once per credential). */
  openChecked: boolean;
  /** Where requests go: the config's base_url, or the URL the provider's API reported. */
  baseUrl: string | undefined;
  gpu: string | undefined;
  /** Per-token prices by model (USD per million tokens), as the provider's /models listed them. */
  prices: Map<string, TokenPrices>;
  /** context: each model's window as the node's /models listed it. */
  windows: Map<string, number>;
  /** What the provider's API last said (Hugging Face endpoints). */
  providerState: string | undefined;
  providerMessage: string | undefined;
}

/** The warning a node gets when it answers without a credential. */
const OPEN_WARNING =
  "it answers /v1/models without a credential: anyone who can reach its URL can use it (and spend on it)";

/** Probe one node: its state, models, prices and warnings, written into `n`. */
export async function probeNode(n: NodeState, o: ProbeDeps): Promise<void> {
  const config = n.config;
  const known = o.managed?.status?.(config.name);
  if (known !== undefined) return void Object.assign(n, known, { models: [...known.models] });
  if (config.credential !== undefined && n.token === undefined) {
    try {
      n.token = await o.credentials.get(config.credential);
    } catch (cause) {
      n.state = "credential_unavailable";
      n.lastError = (cause as Error).message;
      return;
    }
    if (n.token === undefined) {
      n.state = "credential_unavailable";
      n.lastError =
        `no credential ${formatCredentialRef(config.credential)} in the OS credential store; ` +
        `store it with: pair credential set ${config.credential.service}/${config.credential.account}`;
      return;
    }
    n.openChecked = false;
  }
  let expected: readonly string[] = [];
  if (config.provider === "huggingface-endpoint") {
    const served = await lookUp(n, config.endpoint, o.lookupEndpoint);
    if (served === undefined) return;
    // What PAIR manages (and bills) is eligible only once its engine lists the model it was made for.
    if (config.lifecycle.managed) expected = served;
  } else n.baseUrl = configuredBaseUrl(config, o.runpodProxyUrl);
  const baseUrl = n.baseUrl;
  if (baseUrl === undefined) return;
  const answer = await listModels(o.dispatcher, baseUrl, n.token, o.probeTimeoutMs ?? 10_000);
  if (answer.kind === "models" && expected.length > 0 && !answer.models.some((m) => expected.includes(m))) {
    // HF says it runs, yet its engine does not list the model: not eligible (an image that is no OpenAI server).
    n.state = "unreachable";
    n.lastError =
      `it runs, but its /v1/models lists ${answer.models.slice(0, 3).join(", ") || "no model"}, not ` +
      `${expected.join(" or ")}: its engine image may not serve this model over the OpenAI API`;
  } else if (answer.kind === "models") {
    const allow = config.models;
    n.models = allow.length === 0 ? answer.models : answer.models.filter((m) => allow.includes(m));
    n.prices = answer.prices;
    n.windows = answer.windows;
    n.state = "running";
    n.lastError = undefined;
    if (!n.openChecked) {
      n.openChecked = true;
      const open =
        n.token === undefined
          ? answer
          : await listModels(o.dispatcher, baseUrl, undefined, o.probeTimeoutMs ?? 10_000);
      n.warnings = open.kind === "models" ? [OPEN_WARNING] : [];
      if (open.kind === "models") o.log?.(`rented node ${config.name}: warning: ${OPEN_WARNING}`);
    }
  } else if (answer.kind === "warming") {
    // Scaled to zero or starting: not a failure. Serve the allowlist (or what it served before).
    n.state = "warming";
    if (config.models.length > 0) n.models = [...config.models];
    n.lastError = undefined;
  } else if (answer.kind === "rejected") {
    n.state = "credential_rejected";
    n.lastError = credentialRejectedReason(n.config, answer.status);
    n.token = undefined;
  } else {
    n.state = "unreachable";
    n.lastError = answer.detail;
  }
}

/**
 * A Hugging Face endpoint's URL and state from the Endpoints API. The models its `/v1/models` must
 * list when its data plane should be probed now (it runs); otherwise undefined, the node's state says
 * why not, and what it serves is its repository (a scaled-to-zero endpoint still serves it, after a
 * cold start).
 */
async function lookUp(
  n: NodeState,
  endpoint: { namespace: string; name: string },
  lookup: EndpointLookupFn | undefined,
): Promise<readonly string[] | undefined> {
  if (lookup === undefined || n.token === undefined) {
    n.state = "unsupported";
    n.lastError = "no Endpoints API client is configured on this node";
    return undefined;
  }
  let info: EndpointLookup;
  try {
    info = await lookup(endpoint, n.token);
  } catch (cause) {
    const kind = (cause as { kind?: string }).kind;
    if (kind === "rejected_credential" || kind === "forbidden") {
      n.state = "credential_rejected";
      n.token = undefined;
    } else n.state = "unreachable";
    n.lastError = `Endpoints API: ${(cause as Error).message}`;
    return undefined;
  }
  // What HF reports it runs on; an answer without its compute keeps the label it had.
  n.gpu = endpointGpuLabel(info) ?? n.gpu;
  n.providerState = info.state;
  n.providerMessage = info.message;
  const allow = n.config.models;
  const served = allow.length === 0 ? [info.repository] : allow.filter((m) => m === info.repository);
  n.baseUrl = info.url === undefined ? undefined : `${info.url.replace(/\/$/, "")}/v1`;
  if (info.accessType === "public" && n.config.lifecycle.managed) {
    n.state = "public_endpoint_refused";
    n.lastError =
      `${endpoint.namespace}/${endpoint.name} is public: PAIR manages only private or authenticated ` +
      "endpoints; make it private on Hugging Face, or attach it with lifecycle.managed: false";
    n.models = served;
    return undefined;
  }
  n.warnings = info.accessType === "public" ? [OPEN_WARNING] : [];
  const state = HF_STATES[info.state];
  n.lastError = state === "failed" ? (info.message ?? "the endpoint failed") : undefined;
  if (state === "running") return served;
  n.state = state ?? "unreachable";
  if (state === undefined) n.lastError = `Hugging Face reports an unknown state "${info.state}"`;
  n.models = served;
  return undefined;
}

/** A node not probed yet. */
export function fresh(config: RentedNodeConfig, source: "config" | "attached"): NodeState {
  return {
    config,
    source,
    state: "unknown",
    models: [],
    token: undefined,
    lastError: undefined,
    warnings: [],
    openChecked: false,
    baseUrl: undefined,
    gpu: undefined,
    prices: new Map(),
    windows: new Map(),
    providerState: undefined,
    providerMessage: undefined,
  };
}
