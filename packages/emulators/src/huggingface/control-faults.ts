/**
 * Fault switches of the Hugging Face emulator's control plane (endpoints API, hub, catalog): lost
 * answers (the action is applied, then the connection is dropped), held requests (kept unanswered,
 * before or after the action is applied, until the test releases them), failures and 429s for the
 * next N matching requests, slow state changes (with a long enough delay: a pause accepted while the
 * endpoint keeps running and billing), a failed deploy with a message, and a partial listing (the
 * next N listings omit a named endpoint while still answering as whole; its own GET still finds it).
 * Deterministic: a switch acts on exactly the requests it names, in arrival order.
 * Must not know: sockets (the server acts on the decision), endpoint states.
 */

import { HeldRequests, type HeldApplied, type HeldRelease } from "../held-requests.js";

/** Which requests a switch acts on; all control-plane requests when empty. */
export interface FaultFilter {
  /** e.g. "POST". */
  readonly method?: string;
  /** A substring of, or a pattern for, the path (e.g. "/pause" or /^\/v2\/endpoint\/[^/]+$/). */
  readonly path?: string | RegExp;
}

export type ControlDecision =
  | { readonly kind: "none" }
  | { readonly kind: "lose" }
  | { readonly kind: "hold"; readonly applied: HeldApplied }
  | { readonly kind: "fail"; readonly status: number }
  | { readonly kind: "rate-limit"; readonly retryAfterS: number };

interface Armed {
  remaining: number;
  readonly filter: FaultFilter;
  readonly decision: ControlDecision;
}

function matches(filter: FaultFilter, method: string, path: string): boolean {
  if (filter.method !== undefined && filter.method.toUpperCase() !== method) return false;
  if (filter.path === undefined) return true;
  return typeof filter.path === "string" ? path.includes(filter.path) : filter.path.test(path);
}

function checkCount(what: string, count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > 1_000_000)
    throw new RangeError(`faults.${what}: count must be an integer in [1, 1000000], got ${count}`);
}

export class ControlFaults {
  #armed: Armed[] = [];
  readonly #held = new HeldRequests();
  #arrived: { readonly method: string; readonly path: string }[] = [];
  #slowMs = 0;
  #deployFailures: string[] = [];
  /** Endpoint name → how many more listings omit it. */
  #hidden = new Map<string, number>();

  /** The next `count` matching requests are carried out, then their connection is dropped unanswered. */
  loseAnswers(count: number, filter: FaultFilter = {}): void {
    checkCount("loseAnswers", count);
    this.#armed.push({ remaining: count, filter, decision: { kind: "lose" } });
  }

  /**
   * The next `count` matching requests are held unanswered until `releaseHeld`. `applied:
   * "before-answer"` carries the action out at once and holds only the answer (a client killed while
   * waiting never learns it happened); `"on-release"` holds the request itself: the action happens only
   * if released with "apply" — even when the client has gone, as a server that already read the request would.
   */
  holdNext(count: number, filter: FaultFilter = {}, applied: HeldApplied = "on-release"): void {
    checkCount("holdNext", count);
    this.#armed.push({ remaining: count, filter, decision: { kind: "hold", applied } });
  }

  /** Requests currently held. */
  get heldCount(): number {
    return this.#held.count;
  }

  /** Resolves once at least one request is held (for a test that acts while a request hangs). */
  whenHeld(): Promise<void> {
    return this.#held.whenHeld();
  }

  /** Releases every held request: carried out and answered ("apply") or dropped unapplied ("drop"). */
  releaseHeld(how: HeldRelease = "apply"): number {
    return this.#held.release(how);
  }

  /** The server parks a held request here; resolves with how it was released. */
  park(): Promise<HeldRelease> {
    return this.#held.park();
  }

  /** The next `count` matching requests fail with `status` (default 500) and change nothing. */
  failNext(count: number, status = 500, filter: FaultFilter = {}): void {
    checkCount("failNext", count);
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new RangeError(`faults.failNext: status must be in [400, 599], got ${status}`);
    this.#armed.push({ remaining: count, filter, decision: { kind: "fail", status } });
  }

  /** The next `count` matching requests get 429 with `retry-after: retryAfterS` and change nothing. */
  rateLimitNext(count: number, retryAfterS: number, filter: FaultFilter = {}): void {
    checkCount("rateLimitNext", count);
    if (!Number.isInteger(retryAfterS) || retryAfterS < 0 || retryAfterS > 3600)
      throw new RangeError(
        `faults.rateLimitNext: retryAfterS must be an integer in [0, 3600], got ${retryAfterS}`,
      );
    this.#armed.push({ remaining: count, filter, decision: { kind: "rate-limit", retryAfterS } });
  }

  /**
   * Pause, resume, scale-to-zero, update and delete are accepted at once but take effect `delayMs`
   * (virtual) later; until then the endpoint reports (and bills in) its old state. 0 turns it off.
   */
  slowStateChanges(delayMs: number): void {
    if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > 24 * 3_600_000)
      throw new RangeError(
        `faults.slowStateChanges: delayMs must be an integer in [0, 86400000], got ${delayMs}`,
      );
    this.#slowMs = delayMs;
  }

  /** The next deploy to finish (create, resume, wake or update) fails with this message. */
  failNextDeploy(message: string): void {
    if (message.trim() === "") throw new RangeError("faults.failNextDeploy: the message must not be empty");
    this.#deployFailures.push(message);
  }

  /**
   * The next `count` listings of endpoints omit the endpoint `name` (any namespace), yet answer as a
   * whole listing; `GET` of the endpoint itself still answers it. A provider's partial page.
   */
  hideFromListing(name: string, count: number): void {
    checkCount("hideFromListing", count);
    if (name.trim() === "") throw new RangeError("faults.hideFromListing: the name must not be empty");
    this.#hidden.set(name, count);
  }

  /** Disarms every switch and drops held requests unapplied. */
  clear(): void {
    this.releaseHeld("drop");
    this.#armed = [];
    this.#slowMs = 0;
    this.#deployFailures = [];
    this.#hidden.clear();
  }

  /** The names one listing leaves out (and counts that listing against each). */
  takeHiddenFromListing(): ReadonlySet<string> {
    const names = new Set(this.#hidden.keys());
    for (const name of names) {
      const left = (this.#hidden.get(name) ?? 1) - 1;
      if (left > 0) this.#hidden.set(name, left);
      else this.#hidden.delete(name);
    }
    return names;
  }

  get slowMs(): number {
    return this.#slowMs;
  }

  /** Takes the message of the next armed deploy failure, if any. */
  takeDeployFailure(): string | undefined {
    return this.#deployFailures.shift();
  }

  /** How many control-plane requests matching `filter` arrived so far (whatever was decided for them). */
  arrived(filter: FaultFilter = {}): number {
    return this.#arrived.filter((r) => matches(filter, r.method, r.path)).length;
  }

  /** Decides for one arriving request (first armed matching switch wins, in arming order). */
  decide(method: string, path: string): ControlDecision {
    this.#arrived.push({ method, path });
    const armed = this.#armed.find((entry) => entry.remaining > 0 && matches(entry.filter, method, path));
    if (!armed) return { kind: "none" };
    armed.remaining -= 1;
    this.#armed = this.#armed.filter((entry) => entry.remaining > 0);
    return armed.decision;
  }
}
