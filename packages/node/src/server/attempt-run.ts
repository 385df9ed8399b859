/**
 * One attempt on one upstream, as its steps share it (attempt.ts, relay.ts): the plan, the abort that
 * ends the upstream request (client gone, no first byte in time, a silent peer), when the upstream
 * was last heard from, the warming wait and its log lines, and the results an attempt can end in.
 * Must not know: how the steps send, classify or relay.
 */

import { EventEmitter } from "node:events";
import type { TimerHandle, Timers } from "@pair/cluster";
import type { PairError, ExchangePlan } from "@pair/dialects";
import { WARMING_NOTE_MS, type ForwardDeps, type ForwardRequest, type Upstream } from "./forward-deps.js";
import { FirstByteTimeout, isHeadersTimeout, PeerSilent } from "./upstream-failures.js";
import { UpstreamExchange } from "./upstream-exchange.js";
import { DEFAULT_MAX_UPSTREAM_BODY_BYTES, watchDown } from "./upstreams.js";

export type ForwardOutcome =
  | { readonly kind: "completed" }
  | { readonly kind: "cancelled" }
  | { readonly kind: "cut"; readonly detail: string }
  | {
      readonly kind: "error";
      readonly error: PairError;
      /** An upstream's own error reply, relayed as it came (with the retry headers of its PAIR code). */
      readonly status?: number;
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    };

/** How an attempt ended: with the request's outcome, or failed over to the next upstream. */
export type Attempt =
  | { readonly kind: "done"; readonly outcome: ForwardOutcome }
  | { readonly kind: "next"; readonly error: PairError; readonly markDown?: string };

/** The client went away: the one result every step (and the loop) returns for it. */
export const CANCELLED_OUTCOME: ForwardOutcome = { kind: "cancelled" };
export const CANCELLED: Attempt = { kind: "done", outcome: CANCELLED_OUTCOME };
export const COMPLETED: Attempt = { kind: "done", outcome: { kind: "completed" } };

const ONCE = { once: true } as const;

/**
 * Aborts one attempt's request upstream, when the client goes away or no first byte came in time:
 * the attempt's UpstreamExchange listens for `abort`. Lighter than a second AbortController per
 * request (the client's is the first).
 */
export class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  /** For the client's `ClientGone`: bound once, not a closure per request. */
  readonly onClientGone = this.#clientGone.bind(this);

  #clientGone(): void {
    this.abort(new Error("client went away"));
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}

/** The state one attempt's steps share; `close()` ends it, whatever step it ended in. */
export class AttemptRun {
  readonly abort = new AttemptAbort();
  readonly startedMs: number;
  /** When the whole attempt must have its first byte (the first-byte timer fires then). */
  readonly deadlineMs: number;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  /** When the upstream last sent anything (or the attempt began), for a silent peer's window. */
  heardMs: number;
  /** The peer's down-watch is on: each chunk counts as hearing from it. */
  readonly watched: boolean;
  exchange: UpstreamExchange | undefined = undefined;
  #firstByteTimer: TimerHandle | undefined;
  readonly #stopWatching: (() => void) | undefined;
  #warmingSinceMs: number | undefined = undefined;
  #warmingNote: TimerHandle | undefined;

  constructor(
    readonly deps: ForwardDeps,
    readonly fr: ForwardRequest,
    readonly upstream: Upstream,
    readonly plan: ExchangePlan,
  ) {
    this.startedMs = this.heardMs = deps.clock.now().monoMs;
    this.timeoutMs = upstream.firstByteTimeoutMs;
    this.deadlineMs = this.startedMs + this.timeoutMs;
    this.maxBodyBytes = deps.maxUpstreamBodyBytes ?? DEFAULT_MAX_UPSTREAM_BODY_BYTES;
    fr.signal.addEventListener("abort", this.abort.onClientGone, ONCE);
    this.#firstByteTimer = deps.timers.after(() => this.abort.abort(new FirstByteTimeout()), this.timeoutMs);
    // A peer found down is given up only if it has been silent for its window, so a busy peer
    // missing one poll does not cut live streams.
    const watch = watchDown(deps, upstream, () => {
      if (deps.clock.now().monoMs - this.heardMs >= watch!.silentMs)
        this.abort.abort(new PeerSilent(upstream.label, watch!.silentMs));
    });
    this.#stopWatching = watch?.stop;
    this.watched = watch !== undefined;
  }

  /** A fresh exchange for the next request upstream (the previous one, a warming reply, is closed). */
  newExchange(): UpstreamExchange {
    this.exchange?.close();
    return (this.exchange = new UpstreamExchange(this.fr.res, this.abort));
  }

  /** The first byte came: no more first-byte timer. */
  heard(): void {
    this.#firstByteTimer?.cancel();
    this.#firstByteTimer = undefined;
    this.heardMs = this.deps.clock.now().monoMs;
  }

  /** The request waits for a warming node: logged when the wait starts, then every 30 s. */
  warming(): void {
    this.fr.workload.warming = true;
    if (this.#warmingSinceMs !== undefined) return;
    const since = (this.#warmingSinceMs = this.deps.clock.now().monoMs);
    const log = this.#log();
    if (log === undefined) return;
    log(`request ${this.fr.id} waits for ${this.upstream.label} to warm up`);
    // Only a warming wait pays for this timer (rare; never on a warm request's path).
    this.#warmingNote = this.deps.timers.every(() => {
      const s = Math.round((this.deps.clock.now().monoMs - since) / 1000);
      log(`request ${this.fr.id} still waits for ${this.upstream.label} to warm up (${s} s)`);
    }, this.deps.warmingNoteMs ?? WARMING_NOTE_MS);
  }

  /** The wait, if any, ended: `how` says whether the node answered or why the request gave up. */
  warmed(how: string): void {
    this.fr.workload.warming = false;
    const since = this.#warmingSinceMs;
    if (since === undefined) return;
    this.#warmingSinceMs = undefined;
    this.#warmingNote?.cancel();
    this.#warmingNote = undefined;
    const ms = Math.round(this.deps.clock.now().monoMs - since);
    this.#log()?.(`request ${this.fr.id}: ${this.upstream.label} ${how} after ${ms} ms of warming`);
  }

  /** A batch line logs nothing of its own: its batch logs progress for all its lines (batch-runner.ts). */
  #log(): ((line: string) => void) | undefined {
    return this.fr.priority === "batch" ? undefined : this.deps.log;
  }

  close(result: Attempt): void {
    if (this.#warmingSinceMs !== undefined) this.warmed(`given up (${gaveUpBecause(result)})`);
    this.#firstByteTimer?.cancel();
    this.#stopWatching?.();
    this.fr.signal.removeEventListener("abort", this.abort.onClientGone);
    this.exchange?.close();
  }

  scrub(text: string): string {
    return this.deps.redactor === undefined ? text : this.deps.redactor.redact(text);
  }

  /**
   * Why the upstream request ended early, when it did: the client went away (cancelled), no first
   * byte in time, a peer found down and silent. Undefined when it failed on its own.
   */
  interrupted(cause?: unknown): Attempt | undefined {
    if (this.fr.signal.aborted) return CANCELLED;
    const reason = this.abort.reason;
    if (reason instanceof FirstByteTimeout || isHeadersTimeout(cause)) return this.timedOut();
    if (reason instanceof PeerSilent) return this.unreachable(reason.message);
    return undefined;
  }

  /** The upstream failed before its first byte: the next one may do better. */
  unreachable(detail: string): Attempt {
    const error: PairError = {
      code: "upstream_error",
      message: `${this.upstream.label} failed: ${this.scrub(detail)}`,
      node: this.deps.nodeName,
    };
    return { kind: "next", error };
  }

  timedOut(): Attempt {
    const error: PairError = {
      code: "cold_start_timeout",
      message: `${this.upstream.label} sent no first byte within ${this.timeoutMs / 1000} s`,
      node: this.deps.nodeName,
    };
    return { kind: "next", error };
  }

  /** The reply outgrew the cap: 502, naming the cap and its key (no failover: another node's reply would be as big). */
  tooLarge(): Attempt {
    const mib = Math.round((this.maxBodyBytes / 1024 / 1024) * 100) / 100;
    const error: PairError = {
      code: "upstream_error",
      message:
        `${this.upstream.label} sent a reply larger than ${mib} MiB, this node's cap on a non-streamed reply ` +
        "(node.max_upstream_body_mb); ask for a streamed reply, or raise the cap",
      node: this.deps.nodeName,
    };
    return { kind: "done", outcome: { kind: "error", error } };
  }
}

function gaveUpBecause(result: Attempt): string {
  if (result.kind === "next") return result.error.code;
  return result.outcome.kind === "error" ? result.outcome.error.code : "the client went away";
}

/** Resolves true after `ms`, false if the attempt is aborted first. */
export function sleep(after: Timers["after"], ms: number, abort: AttemptAbort): Promise<boolean> {
  if (abort.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = after(() => {
      abort.off("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      timer.cancel();
      resolve(false);
    };
    abort.once("abort", onAbort);
  });
}
