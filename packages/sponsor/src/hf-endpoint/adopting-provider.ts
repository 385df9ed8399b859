/**
 * The provider port a managed Hugging Face endpoint is driven through. The endpoint exists already
 * (the config names it), so "create" here means *bring it into use*: look the named endpoint up,
 * check it is the incarnation we adopted before (when we did), resume it when paused, and answer
 * `created` with its report — its exact key `(huggingface-endpoint, namespace, name, createdAt)` binds
 * the contract's record, whose stop obligation is then open until evidence (paused, or gone). Listing,
 * describe and stop go to the Hugging Face adapter unchanged, so only that exact key is ever paused.
 * A spec whose hardware is not `ADOPTED_HARDWARE` is a real create (`pair rented create`): it goes to
 * the Hugging Face provider unchanged (private or authenticated, scale-to-zero on, PAIR's marks).
 * Must not know: the ledger, the node's routing, timers.
 */

import {
  endpointKey,
  HuggingFaceApiError,
  toResourceReport,
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

/** The spec setting naming the incarnation a wake must find (absent at the first adoption). */
export const ADOPT_INCARNATION = "adoptIncarnation";

/** `DeploymentSpec.hardware` of a spell that brings an existing endpoint into use (not a real create). */
export const ADOPTED_HARDWARE = "adopted";

/**
 * Whether a declared spec brings the existing endpoint into use (adoption, a resume, a wake) rather
 * than creating one: the hardware word SQLite has kept for such spells since the first release.
 */
export function isAdoption(spec: { readonly hardware: string }): boolean {
  return spec.hardware === ADOPTED_HARDWARE;
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
    if (!isAdoption(request.spec)) {
      const outcome = await this.#inner.create(request);
      this.lastRefusedCode = outcome.kind === "refused" ? outcome.code : undefined;
      return outcome;
    }
    const ns = this.#inner.namespace;
    const name = request.spec.name;
    let endpoint: HfEndpoint;
    try {
      endpoint = await this.#transport.getEndpoint(ns, name);
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found")
        return { kind: "refused", code: "not_found", message: `endpoint ${ns}/${name} does not exist` };
      return { kind: "lost", cause: describe(error) };
    }
    const expected = request.spec.settings?.[ADOPT_INCARNATION];
    if (typeof expected === "string" && !sameIncarnation(endpoint.incarnation, expected))
      return {
        kind: "refused",
        code: "other_incarnation",
        message:
          `endpoint ${ns}/${name} was recreated (created ${endpoint.incarnation}, adopted ${expected}): ` +
          "PAIR leaves it alone",
      };
    if (endpoint.accessType === "public")
      return {
        kind: "refused",
        code: "public_endpoint",
        message: `endpoint ${ns}/${name} is public: PAIR manages only private or authenticated endpoints`,
      };
    if (endpoint.state === "paused") {
      const resumed = await this.#inner.resume(endpointKey(endpoint));
      if (resumed.kind === "refused") return resumed;
      if (resumed.kind === "unknown") return { kind: "lost", cause: resumed.cause };
      try {
        endpoint = await this.#transport.getEndpoint(ns, name);
      } catch (error) {
        return { kind: "lost", cause: describe(error) };
      }
    }
    // Not made by this request: report no request id (the contract would take another as a mismatch).
    const { requestId: _other, ...report } = toResourceReport(endpoint);
    return { kind: "created", report };
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

  resume(key: ResourceKey): Promise<ResumeOutcome> {
    return this.#inner.resume(key);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
