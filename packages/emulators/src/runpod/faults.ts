/**
 * Fault injection for the Runpod emulator: in-process switches a test flips. Call-level faults
 * live here: the next N control-plane calls answer 5xx, or 429 with a retry-after; the next create's
 * (or terminate's) answer is lost after it was carried out; a partial listing (the next N pod
 * listings omit a pod, which its own GET still finds); terminates that are accepted (204) while the
 * pod keeps running and billing; creates or terminates held unanswered until the test releases them
 * (carried out at once with only the answer held, or only if released with "apply"). Capacity and per-pod faults are forwarded to the catalogue and the
 * control plane, which own that state. Deterministic: each switch acts on the calls it names, in
 * arrival order.
 * Must not know: HTTP framing (the server asks `takeCallFailure` / `takeLostCreate` / `takeHold`).
 */

import { HeldRequests, type HeldApplied, type HeldRelease } from "../held-requests.js";
import type { GpuCatalog } from "./catalog.js";
import type { RunpodControlPlane } from "./control-plane.js";
import type { CreateRefusal } from "./problem.js";

export interface RunpodFaults {
  /** No free GPU of this type: creates on it get the no-capacity error, starts the no-free-GPU one. */
  outOfCapacity(gpuTypeId: string): void;
  /** Sets the free GPUs of a type. */
  setCapacity(gpuTypeId: string, gpus: number): void;
  /** The next `count` creates (default 1) are refused: 402 for funds or 403 for the key, nothing created. */
  refuseCreates(reason: CreateRefusal, count?: number): void;
  /** The next `count` creates (default 1) create their pod, then drop the connection unanswered. */
  loseCreateAnswers(count?: number): void;
  /** The next `count` control-plane calls answer `status` (default 500) problem+json, doing nothing. */
  failNextCalls(count: number, status?: number): void;
  /** The next `count` control-plane calls answer 429 with `retry-after: retryAfterS`, doing nothing. */
  rateLimitNext(count: number, retryAfterS: number): void;
  /**
   * The next `count` creates (`POST /v2/pods`) or terminates (`DELETE /v2/pods/{id}`) are held
   * unanswered until `releaseHeld`. `"before-answer"` carries the call out at once and holds only the
   * answer (a client killed while waiting never learns it happened); `"on-release"` (default) holds the
   * call itself: it happens only if released with "apply" — even when the client has gone.
   */
  holdNext(count: number, call: "create" | "terminate", applied?: HeldApplied): void;
  /** Resolves once at least one call is held (for a test that acts while a call hangs). */
  whenHeld(): Promise<void>;
  /** Releases every held call: carried out and answered ("apply", default) or dropped unapplied; how many. */
  releaseHeld(how?: HeldRelease): number;
  /** Calls held now. */
  readonly heldCount: number;
  /** The next `count` terminates (DELETE) terminate their pod, then drop the connection unanswered. */
  loseTerminateAnswers(count?: number): void;
  /** The next `count` listings (`GET /v2/pods`) omit this pod; `GET /v2/pods/{id}` still finds it. */
  hideFromListing(podId: string, count: number): void;
  /**
   * While on, a terminate (DELETE) or a stop action is answered as accepted and does nothing: the
   * pod keeps running and billing (a provider that accepts a stop it never carries out).
   */
  ignoreStops(on?: boolean): void;
  /** `GET /v2/catalog/gpus` answers `status` (default 503) while on (`on` defaults to true). */
  failCatalog(on?: boolean, status?: number): void;
  /** The pod's container crashes shortly after each start and restarts (proxy: 502). `on` defaults to true. */
  crashLoop(podId: string, on?: boolean): void;
  /** Pods created from now on crash-loop. */
  crashLoopNewPods(on: boolean): void;
  /** Pods created from now on take `extraMs` longer to pull their image and start. */
  slowStart(extraMs: number): void;
  /** The pod goes EXITED without a request (volume still billed). */
  exitPod(podId: string): void;
  /** Clears the call-level faults (held calls are dropped) and the switches for new pods (capacity and pod states stay). */
  clear(): void;
}

export class CallFaults {
  #failCount = 0;
  #failStatus = 500;
  #lostCreates = 0;
  #lostTerminates = 0;
  #rateLimited = 0;
  #retryAfterS = 1;
  #refusals: CreateRefusal[] = [];
  readonly #hidden = new Map<string, number>();
  readonly #holds: {
    remaining: number;
    readonly call: "create" | "terminate";
    readonly applied: HeldApplied;
  }[] = [];
  /** Calls held now, parked by the server. */
  readonly held = new HeldRequests();
  /** The status every catalogue read answers with, while set. */
  catalogFailure: number | undefined;
  /** Terminates and stops are accepted and do nothing, while set. */
  stopsIgnored = false;

  rateLimitNext(count: number, retryAfterS: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: rateLimitNext count must be an integer ≥ 0");
    if (!Number.isInteger(retryAfterS) || retryAfterS < 0 || retryAfterS > 3600)
      throw new RangeError("runpod emulator: rateLimitNext retryAfterS must be an integer in [0, 3600]");
    this.#rateLimited = count;
    this.#retryAfterS = retryAfterS;
  }

  /** The retry-after (s) to answer this call with, if a 429 is pending (and counts it). */
  takeRateLimit(): number | undefined {
    if (this.#rateLimited === 0) return undefined;
    this.#rateLimited -= 1;
    return this.#retryAfterS;
  }

  holdNext(count: number, call: "create" | "terminate", applied: HeldApplied): void {
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError("runpod emulator: holdNext count must be an integer ≥ 1");
    if (call !== "create" && call !== "terminate")
      throw new RangeError(`runpod emulator: holdNext holds "create" or "terminate", got ${String(call)}`);
    if (applied !== "before-answer" && applied !== "on-release")
      throw new RangeError(`runpod emulator: holdNext applied must be "before-answer" or "on-release"`);
    this.#holds.push({ remaining: count, call, applied });
  }

  /** Whether to hold this call, and when it is carried out (and counts it); first armed hold wins. */
  takeHold(call: "create" | "terminate"): HeldApplied | undefined {
    const hold = this.#holds.find((h) => h.call === call && h.remaining > 0);
    if (hold === undefined) return undefined;
    hold.remaining -= 1;
    if (hold.remaining === 0) this.#holds.splice(this.#holds.indexOf(hold), 1);
    return hold.applied;
  }

  loseTerminates(count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: loseTerminateAnswers count must be an integer ≥ 0");
    this.#lostTerminates = count;
  }

  takeLostTerminate(): boolean {
    if (this.#lostTerminates === 0) return false;
    this.#lostTerminates -= 1;
    return true;
  }

  hide(podId: string, count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: hideFromListing count must be an integer ≥ 0");
    if (count === 0) this.#hidden.delete(podId);
    else this.#hidden.set(podId, count);
  }

  /** The pod ids one listing leaves out (and counts that listing against each). */
  takeHidden(): ReadonlySet<string> {
    const ids = new Set(this.#hidden.keys());
    for (const id of ids) {
      const left = (this.#hidden.get(id) ?? 1) - 1;
      if (left > 0) this.#hidden.set(id, left);
      else this.#hidden.delete(id);
    }
    return ids;
  }

  refuseCreates(reason: CreateRefusal, count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: refuseCreates count must be an integer ≥ 0");
    if (reason !== "funds" && reason !== "forbidden")
      throw new RangeError(`runpod emulator: refuseCreates reason must be "funds" or "forbidden"`);
    this.#refusals = Array.from({ length: count }, () => reason);
  }

  /** The refusal this create gets, if one is armed (and counts it). */
  takeCreateRefusal(): CreateRefusal | undefined {
    return this.#refusals.shift();
  }

  clearCalls(): void {
    this.#refusals = [];
    this.failNext(0, 500);
    this.loseCreates(0);
    this.#lostTerminates = 0;
    this.#rateLimited = 0;
    this.#hidden.clear();
    this.#holds.length = 0;
    this.held.release("drop");
    this.catalogFailure = undefined;
    this.stopsIgnored = false;
  }

  failNext(count: number, status: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: failNextCalls count must be an integer ≥ 0");
    if (!Number.isInteger(status) || status < 500 || status > 599) {
      throw new RangeError("runpod emulator: failNextCalls status must be a 5xx status");
    }
    this.#failCount = count;
    this.#failStatus = status;
  }

  loseCreates(count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError("runpod emulator: loseCreateAnswers count must be an integer ≥ 0");
    this.#lostCreates = count;
  }

  /** The status to fail this call with, if a failure is pending (and counts it). */
  takeCallFailure(): number | undefined {
    if (this.#failCount === 0) return undefined;
    this.#failCount -= 1;
    return this.#failStatus;
  }

  takeLostCreate(): boolean {
    if (this.#lostCreates === 0) return false;
    this.#lostCreates -= 1;
    return true;
  }
}

export function faultSwitches(
  calls: CallFaults,
  catalog: GpuCatalog,
  plane: RunpodControlPlane,
): RunpodFaults {
  return {
    outOfCapacity: (gpuTypeId) => catalog.setFree(gpuTypeId, 0),
    setCapacity: (gpuTypeId, gpus) => catalog.setFree(gpuTypeId, gpus),
    refuseCreates: (reason, count = 1) => calls.refuseCreates(reason, count),
    loseCreateAnswers: (count = 1) => calls.loseCreates(count),
    failNextCalls: (count, status = 500) => calls.failNext(count, status),
    rateLimitNext: (count, retryAfterS) => calls.rateLimitNext(count, retryAfterS),
    holdNext: (count, call, applied = "on-release") => calls.holdNext(count, call, applied),
    whenHeld: () => calls.held.whenHeld(),
    releaseHeld: (how = "apply") => calls.held.release(how),
    get heldCount() {
      return calls.held.count;
    },
    loseTerminateAnswers: (count = 1) => calls.loseTerminates(count),
    hideFromListing: (podId, count) => calls.hide(podId, count),
    ignoreStops: (on = true) => {
      calls.stopsIgnored = on;
    },
    failCatalog: (on = true, status = 503) => {
      if (!Number.isInteger(status) || status < 400 || status > 599)
        throw new RangeError("runpod emulator: failCatalog status must be a 4xx or 5xx status");
      calls.catalogFailure = on ? status : undefined;
    },
    crashLoop: (podId, on = true) => plane.setCrashLoop(podId, on),
    crashLoopNewPods: (on) => {
      plane.newPodFaults.crashLoop = on;
    },
    slowStart: (extraMs) => {
      if (!Number.isInteger(extraMs) || extraMs < 0)
        throw new RangeError("runpod emulator: slowStart takes ms ≥ 0");
      plane.newPodFaults.extraStartMs = extraMs;
    },
    exitPod: (podId) => plane.exitWithoutRequest(podId),
    clear: () => {
      calls.clearCalls();
      plane.newPodFaults.crashLoop = false;
      plane.newPodFaults.extraStartMs = 0;
    },
  };
}
