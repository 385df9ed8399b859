/**
 * Forwarding one validated request: take a slot on the least loaded upstream that serves the model
 * (which upstreams, in which order: upstreams.ts), send the request, and relay the reply with
 * backpressure — over mTLS to a peer, over verified HTTPS to a rented node (waiting out its warming).
 * Nothing is written to the client until the upstream's first body byte (or its complete non-streamed
 * reply) arrives, so any failure before that — refused connection, 5xx, the model gone, no first byte
 * in time — fails over to the next upstream, and the workload records every attempt. After the first
 * byte, never: the stream is cut instead. A client that goes away aborts the upstream request (and
 * so, through a peer, the whole chain). A peer found down (a failed membership poll) that has sent
 * nothing for its silence window is given up: before the first byte that is a failover, after it a
 * cut — a frozen peer keeps its sockets open, and no timeout would end a stream that may pause.
 * Here: the attempt loop (candidates, a slot, an attempt, failover). Which upstreams in which order:
 * upstreams.ts and routing-policy.ts; one attempt's steps: attempt.ts; the relay: relay.ts.
 * Must not know: which dialect the client speaks beyond the plan it is given, how peers are trusted.
 */

import type { ServerResponse } from "node:http";
import { refineFit, requestFit } from "../context/index.js";
import type { PairError } from "@pair/dialects";
import type { CancelSignal } from "../scheduler/scheduler.js";
import { attemptOn } from "./attempt.js";
import { CANCELLED_OUTCOME, type Attempt, type ForwardOutcome } from "./attempt-run.js";
import { NO_ALIASES } from "./model-aliases.js";
import { forPeer } from "./upstream-failures.js";
import { candidates, markDown, type ForwardDeps, type ForwardRequest } from "./upstreams.js";

export { type ForwardOutcome } from "./attempt-run.js";
export {
  OFF_LAN_HEADER,
  PEER_PRIORITY_HEADER,
  PEER_REQUESTER_HEADER,
  SERVED_BY_HEADER,
  type ForwardDeps,
  type ForwardRequest,
  type PeerUpstream,
  type PeerUpstreams,
  type RentedPrepared,
  type RentedServing,
  type RentedUpstreams,
  type SponsoredRented,
} from "./upstreams.js";

/**
 * A client's going away, as forwarding and the scheduler watch it: what they need of an
 * AbortSignal, without the EventTarget a request would otherwise build for it.
 */
export class ClientGone implements CancelSignal {
  #aborted = false;
  readonly #listeners = new Set<() => void>();
  #res: ServerResponse | undefined = undefined;
  /** Bound once: no closure made per request for the response's `close`. */
  readonly #onClose = this.#closed.bind(this);

  /** Abort when `res` closes before its reply finished (the client went away), until `unwatch()`. */
  watch(res: ServerResponse): void {
    this.#res = res;
    res.on("close", this.#onClose);
  }

  unwatch(): void {
    this.#res?.off("close", this.#onClose);
  }

  #closed(): void {
    // Both, for a peer's HTTP/2 stream: reset by the peer, Node's compatibility response reports
    // writableFinished (its stream's writable side is done) though end() was never called.
    const res = this.#res;
    if (res !== undefined && !(res.writableEnded && res.writableFinished)) this.abort();
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.#aborted) this.#listeners.add(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    this.#listeners.delete(listener);
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener();
  }
}

export async function forward(deps: ForwardDeps, fr: ForwardRequest): Promise<ForwardOutcome> {
  const model = fr.request.model;
  const tried = new Set<string>();
  let last: PairError | undefined;
  // context: the request's fit, counted by an engine's tokenizer when near its window (docs/context.md)
  const fit = requestFit(fr, deps.defaultOutputTokens);
  const counting = refineFit(
    fit,
    deps.inventory,
    (deps.aliases ?? NO_ALIASES).namesOf(model),
    deps.dispatcher,
    fr,
  );
  if (counting !== undefined) await counting;
  for (;;) {
    const { upstreams, refusal } = candidates(deps, fr, tried, fit);
    // context: what history records, and the reason when windows decided the route
    if (fit.estimated !== undefined) fr.workload.estPromptTokens = fit.estimated;
    if (fit.decided) fr.workload.routeReason = "context";
    if (upstreams.length === 0) {
      // context: nothing left can hold it
      if (fit.skippedAny && (last === undefined || last.code === "context_too_long"))
        return { kind: "error", error: fit.tooLong(model, deps.nodeName) };
      return {
        kind: "error",
        error: last ??
          refusal ?? {
            code: "model_not_found",
            message: `no node serves the model "${model}"; \`pair models\` lists what the cluster serves`,
          },
      };
    }
    const slot = await deps.scheduler.acquire(upstreams, fr.signal, fr.priority);
    if (!slot.ok) {
      if (slot.reason === "aborted") return CANCELLED_OUTCOME;
      return {
        kind: "error",
        error: {
          code: "upstream_error",
          message:
            slot.reason === "queue-full"
              ? `every node serving "${model}" is busy and the queue is full; retry later`
              : `every node serving "${model}" stayed busy for the whole queue wait; retry later`,
          node: deps.nodeName,
        },
      };
    }
    fr.timeline?.mark("slot");
    const upstream = upstreams.find((u) => u.id === slot.slot.target.id)!;
    tried.add(upstream.id);
    let attempt: Attempt;
    try {
      attempt = await attemptOn(deps, fr, upstream, fit);
    } finally {
      slot.slot.release();
    }
    if (attempt.kind === "done") {
      fr.workload.attempts.push({ target: upstream.label });
      return attempt.outcome;
    }
    fr.workload.attempts.push({ target: upstream.label, error: attempt.error.code });
    last = fr.localOnly === true ? forPeer(upstream, attempt.error) : attempt.error;
    if (attempt.markDown !== undefined) markDown(deps, upstream, attempt.markDown);
    if (fr.signal.aborted) return CANCELLED_OUTCOME;
  }
}
