/**
 * RunpodProvider: the hosting contract's ProviderPort over a RunpodTransport. Create walks the
 * model's GPU types in order: a capacity refusal tries the next; funds (`insufficient_funds`), the
 * key (`credential_rejected`) and anything unclassified end it; a lost answer (`uncertain`) ends
 * the attempt as `lost` at once — Runpod takes no idempotency key, so a second type could pay twice.
 * Stop terminates (DELETE): EXITED still bills the volume, so Runpod has no pause in the contract's
 * sense and a pause is refused; a 204 to the terminate counts as accepted only once the pod no longer
 * shows a billed state (otherwise `unknown`: sent again at the next pass). Listings are complete (`GET /v2/pods` is not paginated, reference
 * §3.3) and carry every pod of the account; identity comes from the pod's own env.
 * Must not know: HTTP libraries, leases, the store, the vLLM key's value.
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
  StopMode,
  StopOutcome,
} from "@pair/provision";
import { RunpodApiError, type RunpodErrorKind } from "../errors.js";
import type { RunpodTransport } from "../transport.js";
import type { Pod } from "../wire.js";
import { RUNPOD_CAPABILITIES, RUNPOD_PROVIDER } from "./capabilities.js";
import {
  IDENTITY_ENV,
  POD_NAME_PREFIX,
  RUNPOD_PROXY_URL,
  reportOf,
  type ProxyUrlOf,
} from "./pod-identity.js";
import { podRequest } from "./pod-request.js";
import { readRunpodModel } from "./runpod-model.js";

export interface RunpodProviderOptions {
  readonly transport: RunpodTransport;
  /** The Runpod account the API key belongs to (part of every ResourceKey). */
  readonly account: string;
  /** Wall time of listings (`startedAtMs`). */
  readonly clock: Clock;
  /** A pod's proxy base URL (default `https://{podId}-{port}.proxy.runpod.net`). */
  readonly proxyUrl?: ProxyUrlOf;
  /**
   * This controller's owner tag. When set, `stop` refuses a pod whose env names another owner (or
   * none): a second guard beside the core's, so a wrong key can never terminate someone else's pod.
   */
  readonly ownerTag?: string;
}

/**
 * Codes of the `refused` outcomes this adapter answers (create and stop), besides the transport's
 * error kinds (`RunpodErrorKind`) it passes through. For the error catalogue and history views.
 */
/** The refusals of a create a person acts on (docs/errors.md lists them): capacity, money, the key. */
export const RUNPOD_CREATE_REFUSAL_CODES = [
  "no_capacity",
  "insufficient_funds",
  "credential_rejected",
] as const;

export const RUNPOD_REFUSAL_CODES = [
  "wrong_account",
  "invalid_name",
  "invalid_settings",
  ...RUNPOD_CREATE_REFUSAL_CODES,
  "pause_unsupported",
  "not_found",
  "key_mismatch",
  "foreign_pod",
] as const;
export type RunpodRefusalCode = (typeof RUNPOD_REFUSAL_CODES)[number];

/** One GPU type tried during a create, and what Runpod said. */
export interface PlacementAttempt {
  readonly gpuType: string;
  readonly outcome: "created" | "no_capacity" | "lost" | "refused";
}

function why(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export class RunpodProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities = RUNPOD_CAPABILITIES;
  /** Every GPU type tried, in order, for inspection (tests, history). Bounded to the last 100. */
  readonly placements: PlacementAttempt[] = [];
  readonly #transport: RunpodTransport;
  readonly #account: string;
  readonly #clock: Clock;
  readonly #proxyUrl: ProxyUrlOf;
  readonly #ownerTag: string | undefined;

  constructor(options: RunpodProviderOptions) {
    if (options.account.trim() === "") throw new RangeError("RunpodProvider: account must not be empty");
    this.#transport = options.transport;
    this.#account = options.account;
    this.#clock = options.clock;
    this.#proxyUrl = options.proxyUrl ?? RUNPOD_PROXY_URL;
    this.#ownerTag = options.ownerTag;
  }

  async create(request: CreateRequest): Promise<CreateOutcome> {
    const { spec } = request;
    if (spec.provider !== RUNPOD_PROVIDER || spec.account !== this.#account)
      return refused(
        "wrong_account",
        `spec is for ${spec.provider}:${spec.account}, this adapter is ${RUNPOD_PROVIDER}:${this.#account}`,
      );
    if (!spec.name.startsWith(POD_NAME_PREFIX))
      return refused("invalid_name", `pod names must start with "${POD_NAME_PREFIX}", got "${spec.name}"`);
    const model = readRunpodModel(spec);
    if (!model.ok) return refused("invalid_settings", model.error);
    const full: string[] = [];
    for (const gpuType of model.value.gpuTypes) {
      try {
        const pod = await this.#transport.createPod(podRequest(request, model.value, gpuType));
        this.#placed(gpuType, "created");
        return { kind: "created", report: this.#report(pod) };
      } catch (error) {
        if (!(error instanceof RunpodApiError)) {
          this.#placed(gpuType, "lost");
          return { kind: "lost", cause: why(error) };
        }
        switch (error.kind) {
          case "no_capacity":
            this.#placed(gpuType, "no_capacity");
            full.push(gpuType);
            continue;
          case "uncertain":
          case "server":
          case "timeout":
          case "protocol":
            // The pod may exist and bill: end the attempt, reconciliation finds it by request id.
            this.#placed(gpuType, "lost");
            return { kind: "lost", cause: error.message };
          case "unauthorized":
          case "forbidden":
            // The key, not the GPU type: another type would be refused the same way.
            this.#placed(gpuType, "refused");
            return refused("credential_rejected", error.message);
          case "network":
          case "tls":
          case "not_found":
          case "conflict":
          case "invalid_request":
          case "rate_limited":
          case "insufficient_funds":
            // Unclassified or not the GPU type's fault: stop trying, never a blind retry.
            this.#placed(gpuType, "refused");
            return refused(error.kind, error.message);
        }
      }
    }
    return refused("no_capacity", `no capacity on any declared GPU type (tried ${full.join(", ")})`);
  }

  async list(): Promise<Listing> {
    const startedAtMs = this.#clock.now().wallMs;
    const pods = await this.#transport.listPods();
    return { complete: true, startedAtMs, resources: pods.map((pod) => this.#report(pod)) };
  }

  async describe(key: ResourceKey): Promise<DescribeOutcome> {
    if (!this.#mine(key)) return { kind: "not-found" };
    try {
      const pod = await this.#transport.getPod(key.incarnation);
      if (pod === undefined || pod.name !== key.name) return { kind: "not-found" };
      return { kind: "found", report: this.#report(pod) };
    } catch (error) {
      return { kind: "unknown", cause: why(error) };
    }
  }

  /** The pod behind a key, as Runpod reports it (status, startedAt, uptime): for the supervisor. */
  async describePod(key: ResourceKey): Promise<Pod | undefined> {
    if (!this.#mine(key)) return undefined;
    const pod = await this.#transport.getPod(key.incarnation);
    return pod !== undefined && pod.name === key.name ? pod : undefined;
  }

  async stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    if (mode === "pause")
      return refused(
        "pause_unsupported",
        "Runpod has no pause that ends billing (a stopped pod bills its volume): terminate instead",
      );
    if (!this.#mine(key))
      return refused("wrong_account", `${key.provider}:${key.account} is not this adapter's account`);
    try {
      const pod = await this.#transport.getPod(key.incarnation);
      if (pod === undefined) return refused("not_found", `pod ${key.incarnation} is gone (404)`);
      if (pod.name !== key.name)
        return refused("key_mismatch", `pod ${key.incarnation} is named "${pod.name}", not "${key.name}"`);
      const owner = pod.env[IDENTITY_ENV.owner];
      if (this.#ownerTag !== undefined && owner !== this.#ownerTag)
        return refused(
          "foreign_pod",
          `pod ${key.incarnation} belongs to ${owner ?? "nobody we know"}: never touched`,
        );
      if (pod.status === "TERMINATED") return { kind: "accepted" };
      const answer = await this.#transport.deletePod(key.incarnation);
      if (answer !== "deleted") return refused("not_found", `pod ${key.incarnation} is gone (404)`);
      // Runpod answered 204; accepted only once the pod no longer shows a billed state. A pod that
      // still runs is not proof that billing stopped: the obligation stays open and the terminate is
      // sent again at the next pass until it shows TERMINATED (or is gone).
      const after = await this.#transport.getPod(key.incarnation);
      if (after === undefined || after.status === "TERMINATED") return { kind: "accepted" };
      return {
        kind: "unknown",
        cause:
          `Runpod accepted the terminate of pod ${key.incarnation} but still reports it ${after.status} ` +
          "(billed): unconfirmed, terminated again until it shows TERMINATED",
      };
    } catch (error) {
      // A 429's retry-after travels with the outcome: the controller sends no terminate again sooner.
      const wait =
        error instanceof RunpodApiError && error.retryAfterMs !== undefined
          ? { retryAfterMs: error.retryAfterMs }
          : {};
      if (error instanceof RunpodApiError && !error.retryable && error.kind !== "uncertain")
        return { ...refused(error.kind, error.message), ...wait };
      return { kind: "unknown", cause: why(error), ...wait };
    }
  }

  #mine(key: ResourceKey): boolean {
    return key.provider === RUNPOD_PROVIDER && key.account === this.#account;
  }

  #report(pod: Pod) {
    return reportOf(pod, this.#account, this.#proxyUrl);
  }

  #placed(gpuType: string, outcome: PlacementAttempt["outcome"]): void {
    this.placements.push({ gpuType, outcome });
    if (this.placements.length > 100) this.placements.shift();
  }
}

function refused(
  code: RunpodRefusalCode | RunpodErrorKind,
  message: string,
): { kind: "refused"; code: string; message: string } {
  return { kind: "refused", code, message };
}
