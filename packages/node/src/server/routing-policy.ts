/**
 * Which upstreams may take a request, best first: a pure function over a snapshot of what the node
 * knows — its engines and its peers serving the model (alias groups already resolved), the rented
 * nodes with their eligibility as data, what is in flight, what this request already tried — and a
 * list of checks each candidate must pass. No sockets, no clocks, no caches.
 * Must not know: how an upstream is reached or made, how the snapshot is gathered (upstreams.ts).
 */

import type { RoutingUse } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { refusalCodeOfReason } from "@pair/sponsor";

/** What the policy reads of a candidate: the scheduler's target id and its concurrency limit. */
export interface RoutingCandidate {
  readonly id: string;
  readonly maxConcurrent: number;
}

/** A rented node with the model, as its sponsor judged it: usable (with what the order weighs), or why not. */
export type RentedOption<C> =
  | {
      readonly eligible: true;
      readonly candidate: C;
      readonly policy: RoutingUse;
      /** Running now: no cold start. */
      readonly warm: boolean;
      /** Its price (per hour or per million tokens), for the cheaper-first order; null when unknown. */
      readonly price: number | null;
    }
  | { readonly eligible: false; readonly refusal: PairError };

/**
 * One check every candidate (engine, peer or rented) must pass for this request, with the refusal a
 * client gets when no candidate passes. A candidate it refuses does not count as serving the model.
 */
export interface CandidateCheck<C> {
  /** What it checks (`context`): for logs and `x-pair-route-reason`. */
  readonly reason: string;
  /** Why `candidate` may not take the request, or undefined when it may. */
  refuse(candidate: C): PairError | undefined;
}

export interface RoutingSnapshot<C extends RoutingCandidate> {
  /** This node's engines advertising the model (any name of its group), each once. */
  readonly local: readonly C[];
  /** Up peers advertising it, each once; asked only when no local engine is left to try. */
  readonly peers: () => readonly C[];
  /** Rented nodes with the model: this node's, then those peers sponsor, each with its eligibility. */
  readonly rented: readonly RentedOption<C>[];
  /** Candidates this request already tried (failover). */
  readonly tried: ReadonlySet<string>;
  /** Requests in flight on a candidate now. */
  readonly inFlight: (id: string) => number;
  /** Checks on top of the sponsors' eligibility; none by default. */
  readonly checks?: readonly CandidateCheck<C>[];
  /**
   * Batch work: a cold `prefer` node comes after the LAN, so a line runs on a warm engine while a
   * rented node starts rather than holding a slot through its cold start.
   */
  readonly batch?: boolean;
}

export interface Selection<C> {
  readonly upstreams: readonly C[];
  /** Why a node that has the model may not take it (instead of `model_not_found`). */
  readonly refusal?: PairError;
}

/** A rented candidate that passed every check, with what the policy and the order read. */
interface Usable<C> {
  readonly candidate: C;
  readonly policy: RoutingUse;
  readonly warm: boolean;
  readonly price: number | null;
}

const NONE: readonly never[] = [];

/**
 * Where the request may go now. Local means this node's engines, then peers' engines (free); rented
 * means nodes this node sponsors and nodes peers sponsor and share (billed), each with its policy:
 * `prefer` ahead of local; `when-no-local-node` only while no local engine advertises the model (a
 * local engine that went down no longer does); `overflow` also when every local engine serving it is
 * at `max_concurrent`, or every local attempt failed; `never` not at all (its sponsor marks it
 * ineligible). Among rented candidates a warm one beats a cold one, then the cheaper wins. Batch
 * work goes to local engines and peers alike, and takes a cold `prefer` node only when no LAN
 * candidate is left.
 */
export function selectCandidates<C extends RoutingCandidate>(s: RoutingSnapshot<C>): Selection<C> {
  const checks = s.checks ?? NONE;
  const refused: PairError[] = [];
  const rented = usableRented(s, checks, refused);
  const batch = s.batch === true;
  const preferred = withPolicies(batch ? rented.filter((r) => r.warm) : rented, PREFER);
  if (preferred.length > 0) return { upstreams: preferred };
  const localAll = passing(s.local, checks, refused);
  let peersAll: readonly C[] | undefined;
  const peers = () => (peersAll ??= passing(s.peers(), checks, refused));
  const localFresh = untried(localAll, s.tried);
  // Batch work spreads over the LAN (the scheduler takes the least loaded); a user's request asks
  // peers only when no local engine is left to try.
  const lan = batch
    ? [...localFresh, ...untried(peers(), s.tried)]
    : localFresh.length > 0
      ? localFresh
      : untried(peers(), s.tried);
  if (lan.length > 0) {
    const overflow = withPolicies(rented, OVERFLOW);
    return { upstreams: overflow.length > 0 && allAtLimit(s, lan) ? overflow : lan };
  }
  // No local engine left to try: rented nodes, as their policies allow.
  const advertised = localAll.length > 0 || peers().length > 0;
  const uses = advertised ? OVERFLOW : NO_LOCAL_OR_OVERFLOW;
  const upstreams = withPolicies(rented, batch ? [...uses, ...PREFER] : uses);
  if (upstreams.length > 0 || advertised) return { upstreams };
  const refusal = refused[0];
  return refusal === undefined ? { upstreams } : { upstreams, refusal };
}

/** The rented options usable now: eligible, not tried, each once, passing every check. */
function usableRented<C extends RoutingCandidate>(
  s: RoutingSnapshot<C>,
  checks: readonly CandidateCheck<C>[],
  refused: PairError[],
): Usable<C>[] {
  const out: Usable<C>[] = [];
  for (const option of s.rented) {
    if (!option.eligible) {
      refused.push(option.refusal);
      continue;
    }
    const c = option.candidate;
    if (s.tried.has(c.id) || out.some((u) => u.candidate.id === c.id)) continue;
    const refusal = firstRefusal(c, checks);
    if (refusal !== undefined) refused.push(refusal);
    else out.push(option);
  }
  return out;
}

function firstRefusal<C>(candidate: C, checks: readonly CandidateCheck<C>[]): PairError | undefined {
  for (const check of checks) {
    const refusal = check.refuse(candidate);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/** `list` without what a check refuses (the list itself without checks, the common case). */
function passing<C>(
  list: readonly C[],
  checks: readonly CandidateCheck<C>[],
  refused: PairError[],
): readonly C[] {
  if (checks.length === 0) return list;
  return list.filter((c) => {
    const refusal = firstRefusal(c, checks);
    if (refusal !== undefined) refused.push(refusal);
    return refusal === undefined;
  });
}

/** `list` without candidates already tried (the list itself when none was). */
function untried<C extends RoutingCandidate>(list: readonly C[], tried: ReadonlySet<string>): readonly C[] {
  if (tried.size === 0) return list;
  return list.filter((c) => !tried.has(c.id));
}

/** Every one of these candidates is at its `max_concurrent`. */
function allAtLimit<C extends RoutingCandidate>(s: RoutingSnapshot<C>, list: readonly C[]): boolean {
  for (const c of list) if (s.inFlight(c.id) < c.maxConcurrent) return false;
  return true;
}

const PREFER: readonly RoutingUse[] = ["prefer"];
const OVERFLOW: readonly RoutingUse[] = ["overflow"];
const NO_LOCAL_OR_OVERFLOW: readonly RoutingUse[] = ["when-no-local-node", "overflow"];

/** Warm first (waking a node costs time and money), then cheaper, then unknown prices. */
function byWarmthAndPrice<C>(a: Usable<C>, b: Usable<C>): number {
  if (a.warm !== b.warm) return a.warm ? -1 : 1;
  return (a.price ?? Number.POSITIVE_INFINITY) - (b.price ?? Number.POSITIVE_INFINITY);
}

/** The rented candidates under one of these policies, warm and cheap first. */
function withPolicies<C>(rented: readonly Usable<C>[], uses: readonly RoutingUse[]): readonly C[] {
  if (rented.length === 0) return NONE;
  return rented
    .filter((c) => uses.includes(c.policy))
    .sort(byWarmthAndPrice)
    .map((c) => c.candidate);
}

/** A rented node a peer sponsors, as that peer publishes it (the fields routing reads). */
export interface SponsoredView {
  readonly name: string;
  /** Its sponsor. */
  readonly peer: { readonly name: string };
  readonly shared: boolean;
  readonly eligible: boolean;
  readonly reason: string | null;
}

/** Why a rented node a peer sponsors may not take this node's request, or undefined when it may. */
export function sponsoredRefusal(r: SponsoredView, model: string): PairError | undefined {
  const sponsor = r.peer.name;
  if (!r.shared)
    return {
      code: "rented_node_not_shared",
      message:
        `the only node serving "${model}" is rented node ${r.name}, and its sponsor ` +
        `${sponsor} does not share it with the cluster (on ${sponsor}: ` +
        `pair rented share ${r.name} on)`,
      node: r.name,
    };
  if (!r.eligible)
    return {
      code: refusalCodeOfReason(r.reason),
      message: `rented node ${r.name} (sponsored by ${sponsor}) cannot take requests now: ${r.reason ?? "ineligible"}`,
      node: r.name,
    };
  return undefined;
}
