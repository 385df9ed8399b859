/**
 * FakeProvider: a correct, in-memory GPU provider behind the hosting contract's provider port. It
 * keeps a world of resources (ours and other owners'), bills them while they start or run, and logs
 * every create and stop so tests can check what a controller did. Faults live in `FaultyProvider`,
 * a seeded wrapper around any port.
 * Must not know: the contract's decisions (it only answers calls).
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
  ResourceReport,
  ResumeOutcome,
  StopMode,
  StopOutcome,
} from "@pair/provision";
import { sameResource } from "@pair/provision";

export type FakeStatus = "STARTING" | "RUNNING" | "PAUSED" | "TERMINATED";

export interface FakeResource {
  key: ResourceKey;
  status: FakeStatus;
  ownerTag?: string;
  requestId?: string;
  epoch?: number;
  idempotencyKey?: string;
  createdAtMs: number;
  /** Wall time the resource started billing and, once it ended, when. */
  billedFromMs: number;
  billedUntilMs?: number;
}

export interface StopCall {
  readonly key: ResourceKey;
  readonly mode: StopMode;
  /** The resource the key named when the call arrived, or undefined if none had that exact key. */
  readonly targetOwnerTag: string | undefined;
  readonly found: boolean;
}

export const FAKE_CAPABILITIES: ProviderCapabilities = {
  provider: "fake",
  idempotencyKeys: false,
  pauseResume: true,
  billingEndedStatuses: ["TERMINATED", "PAUSED"],
  chargingStatuses: ["STARTING", "RUNNING"],
  idleStatuses: [],
  billingGranularityMs: 1_000,
  maxListingLagMs: 5_000,
  stopSettleMs: 0,
  stopLatencyMs: 0,
  stopMode: "terminate",
};

export interface FakeProviderOptions {
  readonly account: string;
  readonly clock: Clock;
  /** How long a new resource stays STARTING before RUNNING. */
  readonly startupMs?: number;
  readonly capabilities?: Partial<ProviderCapabilities>;
}

export class FakeProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities;
  readonly resources: FakeResource[] = [];
  readonly creates: CreateRequest[] = [];
  readonly stops: StopCall[] = [];
  readonly #account: string;
  readonly #clock: Clock;
  readonly #startupMs: number;
  #incarnations = 0;

  constructor(options: FakeProviderOptions) {
    this.capabilities = { ...FAKE_CAPABILITIES, ...options.capabilities };
    this.#account = options.account;
    this.#clock = options.clock;
    this.#startupMs = options.startupMs ?? 10_000;
  }

  /** Put a resource in the world directly: another owner's, or one of ours a crash left behind. */
  plant(resource: {
    name: string;
    ownerTag?: string;
    requestId?: string;
    status?: FakeStatus;
  }): FakeResource {
    const now = this.#clock.now().wallMs;
    const planted: FakeResource = {
      key: this.#newKey(resource.name),
      status: resource.status ?? "RUNNING",
      createdAtMs: now,
      billedFromMs: now,
      ...(resource.ownerTag === undefined ? {} : { ownerTag: resource.ownerTag }),
      ...(resource.requestId === undefined ? {} : { requestId: resource.requestId }),
    };
    this.resources.push(planted);
    return planted;
  }

  /** Resources the provider is charging for right now. */
  billing(): FakeResource[] {
    this.#advance();
    return this.resources.filter((r) => r.status === "STARTING" || r.status === "RUNNING");
  }

  /** Create a resource; exported for the fault wrapper, which may drop the answer. */
  createNow(request: CreateRequest): FakeResource {
    this.creates.push(request);
    if (this.capabilities.idempotencyKeys && request.idempotencyKey !== undefined) {
      const existing = this.resources.find((r) => r.idempotencyKey === request.idempotencyKey);
      if (existing !== undefined) return existing;
    }
    const now = this.#clock.now().wallMs;
    const created: FakeResource = {
      key: this.#newKey(request.spec.name),
      status: "STARTING",
      ownerTag: request.ownerTag,
      requestId: request.requestId,
      epoch: request.epoch,
      createdAtMs: now,
      billedFromMs: now,
      ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
    };
    this.resources.push(created);
    return created;
  }

  create(request: CreateRequest): Promise<CreateOutcome> {
    return Promise.resolve({ kind: "created", report: this.report(this.createNow(request)) });
  }

  list(): Promise<Listing> {
    this.#advance();
    const startedAtMs = this.#clock.now().wallMs;
    // Terminated resources stay listed for a while on real providers; here they stay for good.
    return Promise.resolve({
      complete: true,
      startedAtMs,
      resources: this.resources.map((r) => this.report(r)),
    });
  }

  describe(key: ResourceKey): Promise<DescribeOutcome> {
    this.#advance();
    const found = this.resources.find((r) => sameResource(r.key, key));
    return Promise.resolve(
      found === undefined ? { kind: "not-found" } : { kind: "found", report: this.report(found) },
    );
  }

  stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    const target = this.resources.find((r) => sameResource(r.key, key));
    this.stops.push({ key, mode, targetOwnerTag: target?.ownerTag, found: target !== undefined });
    if (target === undefined)
      return Promise.resolve({ kind: "refused", code: "not_found", message: "no such resource" });
    if (target.status === "STARTING" || target.status === "RUNNING") {
      target.status = mode === "pause" ? "PAUSED" : "TERMINATED";
      target.billedUntilMs = this.#clock.now().wallMs;
    }
    return Promise.resolve({ kind: "accepted" });
  }

  /** A paused resource starts again under the same key and bills again. */
  resume(key: ResourceKey): Promise<ResumeOutcome> {
    const target = this.resources.find((r) => sameResource(r.key, key));
    if (target === undefined)
      return Promise.resolve({ kind: "refused", code: "not_found", message: "no such resource" });
    if (target.status !== "PAUSED")
      return Promise.resolve({
        kind: "refused",
        code: "not_paused",
        message: `resume needs a PAUSED resource, this one is ${target.status}`,
      });
    const now = this.#clock.now().wallMs;
    target.status = "STARTING";
    target.createdAtMs = now;
    target.billedFromMs = now;
    delete target.billedUntilMs;
    return Promise.resolve({ kind: "accepted" });
  }

  report(resource: FakeResource): ResourceReport {
    return {
      key: resource.key,
      status: resource.status,
      ready: resource.status === "RUNNING",
      createdAtMs: resource.createdAtMs,
      ...(resource.ownerTag === undefined ? {} : { ownerTag: resource.ownerTag }),
      ...(resource.requestId === undefined ? {} : { requestId: resource.requestId }),
      ...(resource.epoch === undefined ? {} : { epoch: resource.epoch }),
    };
  }

  #newKey(name: string): ResourceKey {
    this.#incarnations += 1;
    return {
      provider: this.capabilities.provider,
      account: this.#account,
      name,
      incarnation: `inc-${this.#incarnations}`,
    };
  }

  #advance(): void {
    const now = this.#clock.now().wallMs;
    for (const r of this.resources)
      if (r.status === "STARTING" && now - r.createdAtMs >= this.#startupMs) r.status = "RUNNING";
  }
}
