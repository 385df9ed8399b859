/**
 * Fault injection for the Runpod emulator: in-process switches a test flips. Call-level faults
 * (the next N control-plane calls answer 5xx; the next create's answer is lost after the pod was
 * created) live here; capacity and per-pod faults are forwarded to the catalogue and the control
 * plane, which own that state.
 * Must not know: HTTP framing (the server asks `takeCallFailure` / `takeLostCreate`).
 */

import type { GpuCatalog } from "./catalog.js";
import type { RunpodControlPlane } from "./control-plane.js";

export interface RunpodFaults {
  /** No free GPU of this type: creates on it get the no-capacity error, starts the no-free-GPU one. */
  outOfCapacity(gpuTypeId: string): void;
  /** Sets the free GPUs of a type. */
  setCapacity(gpuTypeId: string, gpus: number): void;
  /** The next `count` creates (default 1) create their pod, then drop the connection unanswered. */
  loseCreateAnswers(count?: number): void;
  /** The next `count` control-plane calls answer `status` (default 500) problem+json, doing nothing. */
  failNextCalls(count: number, status?: number): void;
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
  /** Clears the call-level faults and the switches for new pods (capacity and pod states stay). */
  clear(): void;
}

export class CallFaults {
  #failCount = 0;
  #failStatus = 500;
  #lostCreates = 0;
  /** The status every catalogue read answers with, while set. */
  catalogFailure: number | undefined;

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
    loseCreateAnswers: (count = 1) => calls.loseCreates(count),
    failNextCalls: (count, status = 500) => calls.failNext(count, status),
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
      calls.failNext(0, 500);
      calls.loseCreates(0);
      calls.catalogFailure = undefined;
      plane.newPodFaults.crashLoop = false;
      plane.newPodFaults.extraStartMs = 0;
    },
  };
}
