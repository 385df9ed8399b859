/**
 * `HuggingFaceEndpointsProvider`: Hugging Face Inference Endpoints behind the hosting contract's
 * provider port. Create (private or authenticated, never public; HF scale-to-zero on as the crash
 * backstop; PAIR's marks in tags and env), a complete listing of the namespace, describe, stop by
 * pause (default) or delete, and resume — every one on the exact incarnation only: an endpoint of the
 * same name with another `createdAt` is never paused, resumed or deleted. A create whose answer was
 * lost is `lost`, never sent again. Transport failures become `lost` / `unknown`; answers with a
 * 4xx become `refused` with HF's message. A pause answered 200 while HF still reports a billed state
 * (running, initializing, …) is `unknown`, not `accepted`: the stop is not known to have taken.
 * Must not know: the contract's decisions, PAIR's node, where the token is stored.
 */

import type {
  Clock,
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
import { assertNever, err, ok, sameIncarnation, type Result } from "@pair/provision";
import type { EndpointsTransport } from "../endpoints-transport.js";
import { HuggingFaceApiError, retryAfterOf } from "../errors.js";
import type { HfEndpoint, HfEndpointSpec } from "../model.js";
import { HF_ENDPOINT_PROVIDER, capabilitiesFor } from "./capabilities.js";
import { toEndpointSpec } from "./create-spec.js";
import { readOwnership } from "./ownership.js";
import { toResourceReport } from "./resource-report.js";

export interface HuggingFaceEndpointsProviderOptions {
  readonly transport: EndpointsTransport;
  /** The namespace (user or org) whose endpoints this adapter creates, lists and stops. */
  readonly namespace: string;
  /** Wall time for `Listing.startedAtMs`. */
  readonly clock: Clock;
  /**
   * When set, stop, resume and delete refuse (`not_ours`) an endpoint that does not carry this owner
   * tag: a second guard besides the contract's own.
   */
  readonly ownerTag?: string;
  /** Take `pending` as charging (the cautious reading; HF's docs bill from `initializing`). */
  readonly pendingCharges?: boolean;
}

type Target = Result<HfEndpoint, StopOutcome>;

/** A thrown value as one line (HF's errors never hold the token). */
function causeOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** A call that got an HTTP answer refusing it (4xx): nothing happened. */
function answeredRefusal(error: unknown): error is HuggingFaceApiError {
  return (
    error instanceof HuggingFaceApiError &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500 &&
    error.kind !== "uncertain"
  );
}

function refusedBy(error: HuggingFaceApiError): { kind: "refused"; code: string; message: string } {
  return { kind: "refused", code: error.kind, message: error.providerMessage ?? error.message };
}

export class HuggingFaceEndpointsProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities;
  readonly namespace: string;
  readonly #transport: EndpointsTransport;
  readonly #clock: Clock;
  readonly #ownerTag: string | undefined;

  constructor(options: HuggingFaceEndpointsProviderOptions) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(options.namespace))
      throw new RangeError(
        `HuggingFaceEndpointsProvider: namespace "${options.namespace}" is not a Hub user or org name`,
      );
    if (options.ownerTag !== undefined && options.ownerTag.trim() === "")
      throw new RangeError("HuggingFaceEndpointsProvider: ownerTag must not be empty when given");
    this.capabilities = capabilitiesFor(options);
    this.namespace = options.namespace;
    this.#transport = options.transport;
    this.#clock = options.clock;
    this.#ownerTag = options.ownerTag;
  }

  async create(request: CreateRequest): Promise<CreateOutcome> {
    const spec = toEndpointSpec(request, this.namespace);
    if (!spec.ok) return { kind: "refused", ...spec.error };
    let endpoint: HfEndpoint;
    try {
      endpoint =
        request.spec.settings?.["catalog"] === "deploy"
          ? await this.#deployFromCatalog(spec.value)
          : await this.#transport.createEndpoint(this.namespace, spec.value);
    } catch (error) {
      if (answeredRefusal(error)) return refusedBy(error);
      if (
        error instanceof HuggingFaceApiError &&
        (error.kind === "unreachable" || error.kind === "certificate")
      )
        // Never reached HF: nothing was created. The contract still treats a refusal as uncertain.
        return { kind: "refused", code: error.kind, message: error.message };
      // No answer, a 5xx or an unreadable answer: it may exist. Reconciliation finds it by request id.
      return { kind: "lost", cause: causeOf(error) };
    }
    if (endpoint.name !== spec.value.name)
      return {
        kind: "lost",
        cause: `HF answered the create of "${spec.value.name}" with endpoint "${endpoint.name}"`,
      };
    return { kind: "created", report: toResourceReport(endpoint) };
  }

  /**
   * The catalog's deploy brings its tested recipe (engine, image, hardware) but takes only a name and
   * an accelerator; PAIR's rules then go on by an update: its marks (tags), the access asked for, and
   * HF's scale-to-zero as the crash backstop. A failed update leaves the endpoint created (it exists
   * and bills; the contract tracks it by key), reported with what the deploy answered.
   */
  async #deployFromCatalog(spec: HfEndpointSpec): Promise<HfEndpoint> {
    const accelerator = spec.accelerator as "cpu" | "gpu" | "neuron";
    const deployed = await this.#transport.deployFromCatalog({
      namespace: this.namespace,
      repoId: spec.repository,
      endpointName: spec.name,
      accelerator,
    });
    if (deployed.name !== spec.name) return deployed;
    try {
      return await this.#transport.updateEndpoint(this.namespace, spec.name, {
        accessType: spec.accessType,
        minReplica: 0,
        maxReplica: spec.maxReplica,
        ...(spec.scaleToZeroTimeoutMin === undefined
          ? {}
          : { scaleToZeroTimeoutMin: spec.scaleToZeroTimeoutMin }),
        tags: [...deployed.tags, ...(spec.tags ?? [])],
      });
    } catch {
      return deployed;
    }
  }

  /** HF's endpoint listing is one unpaginated page: a successful answer is complete. Throws on failure. */
  async list(): Promise<Listing> {
    const startedAtMs = this.#clock.now().wallMs;
    const endpoints = await this.#transport.listEndpoints(this.namespace);
    return { complete: true, startedAtMs, resources: endpoints.map(toResourceReport) };
  }

  async describe(key: ResourceKey): Promise<DescribeOutcome> {
    const mine = this.#ownsKey(key);
    if (!mine.ok) return { kind: "unknown", cause: mine.error };
    try {
      const endpoint = await this.#transport.getEndpoint(this.namespace, key.name);
      // Another incarnation under the same name: ours is gone (but this is not evidence of it).
      if (!sameIncarnation(endpoint.incarnation, key.incarnation)) return { kind: "not-found" };
      return { kind: "found", report: toResourceReport(endpoint) };
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found") return { kind: "not-found" };
      return { kind: "unknown", cause: causeOf(error) };
    }
  }

  /** Pause (keeps the endpoint, bills nothing) or terminate (delete: irreversible). */
  async stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    const target = await this.#target(key);
    if (!target.ok) return target.error;
    try {
      switch (mode) {
        case "pause": {
          const after = await this.#transport.pause(this.namespace, key.name);
          const same = this.#sameIncarnation(key, after, "pause");
          // HF answered 200 yet still reports a billed state: not proof that billing stopped. The
          // obligation stays open; the next pass pauses again or sees `paused` (evidence).
          if (same.kind === "accepted" && this.capabilities.chargingStatuses.includes(after.rawState))
            return {
              kind: "unknown",
              cause:
                `Hugging Face accepted the pause of ${this.namespace}/${key.name} but still reports it ` +
                `${after.rawState} (billed): unconfirmed, paused again until it shows paused`,
            };
          return same;
        }
        case "terminate":
          await this.#transport.deleteEndpoint(this.namespace, key.name);
          return { kind: "accepted" };
        default:
          return assertNever(mode, "stop mode");
      }
    } catch (error) {
      return this.#actionFailure(error);
    }
  }

  async resume(key: ResourceKey): Promise<ResumeOutcome> {
    const target = await this.#target(key);
    if (!target.ok) return target.error;
    try {
      const after = await this.#transport.resume(this.namespace, key.name);
      return this.#sameIncarnation(key, after, "resume");
    } catch (error) {
      return this.#actionFailure(error);
    }
  }

  /** Delete the exact incarnation (cleanup; irreversible on HF). */
  delete(key: ResourceKey): Promise<StopOutcome> {
    return this.stop(key, "terminate");
  }

  #ownsKey(key: ResourceKey): Result<true, string> {
    if (key.provider !== HF_ENDPOINT_PROVIDER || key.account !== this.namespace)
      return err(
        `key ${key.provider}:${key.account}/${key.name} is not a ${HF_ENDPOINT_PROVIDER} of namespace ${this.namespace}`,
      );
    return ok(true);
  }

  /** The endpoint the key names, only if it is that exact incarnation (and ours, when guarded). */
  async #target(key: ResourceKey): Promise<Target> {
    const mine = this.#ownsKey(key);
    if (!mine.ok) return err({ kind: "refused", code: "wrong_account", message: mine.error });
    let endpoint: HfEndpoint;
    try {
      endpoint = await this.#transport.getEndpoint(this.namespace, key.name);
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found")
        return err({
          kind: "refused",
          code: "not_found",
          message: `endpoint ${this.namespace}/${key.name} does not exist`,
        });
      return err(this.#actionFailure(error));
    }
    if (!sameIncarnation(endpoint.incarnation, key.incarnation))
      return err({
        kind: "refused",
        code: "other_incarnation",
        message: `endpoint ${this.namespace}/${key.name} is another incarnation (created ${endpoint.incarnation}, not ${key.incarnation}): left alone`,
      });
    if (
      this.#ownerTag !== undefined &&
      readOwnership(endpoint.tags, endpoint.env).ownerTag !== this.#ownerTag
    )
      return err({
        kind: "refused",
        code: "not_ours",
        message: `endpoint ${this.namespace}/${key.name} does not carry this sponsor's owner tag: left alone`,
      });
    return ok(endpoint);
  }

  /**
   * HF addresses endpoints by name only, so an endpoint deleted and recreated between our check and
   * the action would be hit instead; the answer shows it, and the obligation stays open.
   */
  #sameIncarnation(key: ResourceKey, after: HfEndpoint, action: string): StopOutcome {
    if (sameIncarnation(after.incarnation, key.incarnation)) return { kind: "accepted" };
    return {
      kind: "unknown",
      cause: `the ${action} reached another incarnation of ${this.namespace}/${key.name} (created ${after.incarnation}); ours was not seen`,
    };
  }

  #actionFailure(error: unknown): StopOutcome {
    // A 429's retry-after travels with the outcome: the controller sends no stop again sooner.
    const wait = retryAfterOf(error);
    if (answeredRefusal(error)) return { ...refusedBy(error), ...wait };
    return { kind: "unknown", cause: causeOf(error), ...wait };
  }
}
