/**
 * The provider port a managed Hugging Face endpoint is driven through, and how it finds the endpoint
 * to bring into use. The endpoint exists already (the config names it): `findEndpoint` looks it up and
 * checks it is the incarnation we used before (when we did) and not public; the contract then resumes
 * that exact key (`(huggingface-endpoint, namespace, name, createdAt)`), whose stop obligation is open
 * until evidence (paused, or gone). `resume` sends nothing when the endpoint is up already (a running
 * endpoint is taken as it is). A create (`pair rented create`) goes to the Hugging Face provider
 * unchanged (private or authenticated, scale-to-zero on, PAIR's marks); listing, describe and stop
 * too, so only that exact key is ever paused.
 * Must not know: the ledger, the node's routing, timers.
 */

import {
  endpointKey,
  HuggingFaceApiError,
  type EndpointsTransport,
  type HfEndpoint,
  type HuggingFaceEndpointsProvider,
} from "@pair/huggingface";
import { sameIncarnation } from "@pair/provision";
import type {
  CreateOutcome,
  CreateRequest,
  DescribeOutcome,
  Listing,
  ProviderCapabilities,
  ProviderPort,
  ResourceKey,
  ResumeOutcome,
  StopMode,
  StopOutcome,
} from "@pair/provision";

/** The endpoint a resume may bring into use, or why not (`lost`: Hugging Face could not be asked). */
export type FoundEndpoint =
  | { readonly kind: "found"; readonly key: ResourceKey }
  | { readonly kind: "refused"; readonly code: string; readonly message: string }
  | { readonly kind: "lost"; readonly cause: string };

/** Look the named endpoint up for a resume: it must exist, be `expected` (when given) and not public. */
export async function findEndpoint(
  transport: Pick<EndpointsTransport, "getEndpoint">,
  ns: string,
  name: string,
  expected: string | undefined,
): Promise<FoundEndpoint> {
  let endpoint: HfEndpoint;
  try {
    endpoint = await transport.getEndpoint(ns, name);
  } catch (error) {
    if (error instanceof HuggingFaceApiError && error.kind === "not_found")
      return { kind: "refused", code: "not_found", message: `endpoint ${ns}/${name} does not exist` };
    return { kind: "lost", cause: describe(error) };
  }
  if (expected !== undefined && !sameIncarnation(endpoint.incarnation, expected))
    return {
      kind: "refused",
      code: "other_incarnation",
      message:
        `endpoint ${ns}/${name} was recreated (created ${endpoint.incarnation}, last used ${expected}): ` +
        "PAIR leaves it alone",
    };
  if (endpoint.accessType === "public")
    return {
      kind: "refused",
      code: "public_endpoint",
      message: `endpoint ${ns}/${name} is public: PAIR manages only private or authenticated endpoints`,
    };
  return { kind: "found", key: endpointKey(endpoint) };
}

export class AdoptingProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities;
  /** Hugging Face's code for the last real create it refused (`public_endpoint_refused`, …), if any. */
  lastRefusedCode: string | undefined;
  readonly #inner: HuggingFaceEndpointsProvider;
  readonly #transport: EndpointsTransport;

  constructor(inner: HuggingFaceEndpointsProvider, transport: EndpointsTransport) {
    this.capabilities = inner.capabilities;
    this.#inner = inner;
    this.#transport = transport;
  }

  async create(request: CreateRequest): Promise<CreateOutcome> {
    const outcome = await this.#inner.create(request);
    this.lastRefusedCode = outcome.kind === "refused" ? outcome.code : undefined;
    return outcome;
  }

  list(): Promise<Listing> {
    return this.#inner.list();
  }

  describe(key: ResourceKey): Promise<DescribeOutcome> {
    return this.#inner.describe(key);
  }

  stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    return this.#inner.stop(key, mode);
  }

  /** Resume the exact endpoint when paused; one that is up already needs nothing sent. */
  async resume(key: ResourceKey): Promise<ResumeOutcome> {
    let endpoint: HfEndpoint;
    try {
      endpoint = await this.#transport.getEndpoint(this.#inner.namespace, key.name);
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found")
        return {
          kind: "refused",
          code: "not_found",
          message: `endpoint ${key.account}/${key.name} does not exist`,
        };
      return { kind: "unknown", cause: describe(error) };
    }
    if (sameIncarnation(endpoint.incarnation, key.incarnation) && endpoint.state !== "paused")
      return { kind: "accepted" };
    return this.#inner.resume(key);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
