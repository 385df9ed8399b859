/**
 * FaultyProvider: a seeded fault wrapper around any provider port (convention 11). It loses create
 * answers, answers 5xx, returns partial listings, hides new resources for up to the declared listing
 * lag, fails list and stop calls, accepts stops it never performs, and loses resume answers. The seed is printed by the
 * caller on failure so a schedule replays.
 * Must not know: which provider it wraps.
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
import { formatKey } from "@pair/provision";
import { SeededRandom } from "./seeded-random.js";

/** Probabilities in [0, 1] of each fault, per call. */
export interface FaultRates {
  /** The resource is created; the answer never arrives. */
  readonly lostCreateAnswer: number;
  /** The provider answers 5xx; half of the time it had created the resource anyway. */
  readonly create5xx: number;
  /** The provider refuses the create (nothing created). */
  readonly createRefused: number;
  /** A new resource stays out of listings for a random time up to the declared listing lag. */
  readonly slowVisibility: number;
  /** The listing misses some resources and says so (`complete: false`). */
  readonly partialListing: number;
  readonly listFailure: number;
  /** The stop call fails with no answer (nothing stopped). */
  readonly stopFailure: number;
  /** The stop is accepted, and the resource goes on billing. */
  readonly stopAcceptedStillBilling: number;
  /** The resume's answer never arrives; half of the time the provider had resumed it anyway. */
  readonly lostResumeAnswer: number;
}

export const NO_FAULTS: FaultRates = {
  lostCreateAnswer: 0,
  create5xx: 0,
  createRefused: 0,
  slowVisibility: 0,
  partialListing: 0,
  listFailure: 0,
  stopFailure: 0,
  stopAcceptedStillBilling: 0,
  lostResumeAnswer: 0,
};

/** The inner port plus what the wrapper needs to create without answering. */
export interface FaultableProvider extends ProviderPort {
  /** Create and return the new resource's key, whatever the wrapper then tells the caller. */
  createNow(request: CreateRequest): { key: ResourceKey };
}

export class FaultyProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities;
  readonly random: SeededRandom;
  rates: FaultRates;
  /** Every create the caller asked for, whether or not it reached the provider. */
  readonly createRequests: CreateRequest[] = [];
  /** Keys of stops this wrapper answered "accepted" without performing them. */
  readonly liedAboutStops = new Set<string>();
  /** Every stop the caller asked for, whether or not it reached the provider. */
  readonly stopRequests: { readonly key: ResourceKey; readonly mode: StopMode }[] = [];
  /** Every resume the caller asked for, whether or not it reached the provider. */
  readonly resumeRequests: ResourceKey[] = [];
  readonly #inner: FaultableProvider;
  readonly #clock: Clock;
  /** Key → wall time from which the resource shows in listings. */
  readonly #visibleFrom = new Map<string, number>();

  constructor(inner: FaultableProvider, options: { seed: number; rates: FaultRates; clock: Clock }) {
    this.#inner = inner;
    this.capabilities = inner.capabilities;
    this.random = new SeededRandom(options.seed);
    this.rates = options.rates;
    this.#clock = options.clock;
  }

  create(request: CreateRequest): Promise<CreateOutcome> {
    this.createRequests.push(request);
    const r = this.random;
    if (r.chance(this.rates.createRefused))
      return Promise.resolve({ kind: "refused", code: "capacity", message: "no capacity for this GPU type" });
    if (r.chance(this.rates.create5xx)) {
      if (r.chance(0.5)) this.#made(this.#inner.createNow(request).key);
      return Promise.resolve({ kind: "lost", cause: "HTTP 502 from the provider" });
    }
    const made = this.#inner.createNow(request);
    this.#made(made.key);
    if (r.chance(this.rates.lostCreateAnswer)) return Promise.reject(new Error("socket hang up"));
    return this.#inner
      .describe(made.key)
      .then((d) =>
        d.kind === "found" ? { kind: "created", report: d.report } : { kind: "lost", cause: "vanished" },
      );
  }

  async list(): Promise<Listing> {
    if (this.random.chance(this.rates.listFailure)) throw new Error("HTTP 503 from the provider");
    const listing = await this.#inner.list();
    const now = this.#clock.now().wallMs;
    const visible = listing.resources.filter((r) => (this.#visibleFrom.get(formatKey(r.key)) ?? 0) <= now);
    if (this.random.chance(this.rates.partialListing)) {
      const kept = visible.filter(() => this.random.chance(0.5));
      return { complete: false, startedAtMs: listing.startedAtMs, resources: kept };
    }
    return { ...listing, resources: visible };
  }

  describe(key: ResourceKey): Promise<DescribeOutcome> {
    return this.#inner.describe(key);
  }

  stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    this.stopRequests.push({ key, mode });
    if (this.random.chance(this.rates.stopFailure))
      return Promise.resolve({ kind: "unknown", cause: "timeout" });
    if (this.random.chance(this.rates.stopAcceptedStillBilling)) {
      this.liedAboutStops.add(formatKey(key));
      return Promise.resolve({ kind: "accepted" });
    }
    return this.#inner.stop(key, mode);
  }

  async resume(key: ResourceKey): Promise<ResumeOutcome> {
    this.resumeRequests.push(key);
    const inner = this.#inner;
    const resume = (k: ResourceKey): Promise<ResumeOutcome> =>
      inner.resume === undefined
        ? Promise.resolve({ kind: "refused", code: "no_resume", message: "the provider has no resume" })
        : inner.resume(k);
    if (this.random.chance(this.rates.lostResumeAnswer)) {
      if (this.random.chance(0.5)) await resume(key);
      throw new Error("socket hang up");
    }
    return resume(key);
  }

  #made(key: ResourceKey): void {
    if (this.random.chance(this.rates.slowVisibility)) {
      const lag = this.random.int(this.capabilities.maxListingLagMs + 1);
      this.#visibleFrom.set(formatKey(key), this.#clock.now().wallMs + lag);
    }
  }
}
