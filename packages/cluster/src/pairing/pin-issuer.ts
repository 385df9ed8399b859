/**
 * The responder's PIN: drawn uniformly from 000000–999999, valid for `pinLifetimeMs`, used at most
 * once, burnt after `maxFailedAttempts` failures, with at most one pairing in flight at a time.
 * A pairing claims the PIN before it sends anything derived from it and settles the claim as
 * paired or failed; a claim left open past `handshakeTimeoutMs` counts as a failure.
 * Must not know: the key exchange, messages, sockets, the wall clock (time is `nowMs`).
 */

import { assertNever, err, ok, type Result } from "@pair/provision";
import { takeRandomBytes, type RandomBytes } from "./cpace-ristretto255.js";
import { pairingError, type PairingError } from "./pairing-errors.js";

export const PIN_DIGITS = 6;
const PIN_VALUES = 10 ** PIN_DIGITS;
/** Largest multiple of 10^6 below 2^32: uint32 draws at or above it are rejected (no modulo bias). */
const UNBIASED_DRAW_LIMIT = Math.floor(2 ** 32 / PIN_VALUES) * PIN_VALUES;
/** A fair source rejects with probability 2^-12.9 per draw; 64 rejections in a row mean it is broken. */
const MAX_PIN_DRAWS = 64;

export const DEFAULT_PIN_LIFETIME_MS = 120_000;
export const DEFAULT_MAX_FAILED_ATTEMPTS = 3;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 30_000;
const MAX_PIN_LIFETIME_MS = 3_600_000;
const MAX_FAILED_ATTEMPTS_LIMIT = 10;
const MAX_HANDSHAKE_TIMEOUT_MS = 300_000;

export interface PinIssuerOptions {
  readonly randomBytes: RandomBytes;
  /** How long a shown PIN stays valid. Default 2 minutes, at most 1 hour. */
  readonly pinLifetimeMs?: number;
  /** Failed pairings a PIN survives before it is burnt. Default 3, at most 10. */
  readonly maxFailedAttempts?: number;
  /** How long one pairing may hold the PIN before it counts as failed. Default 30 s, at most 5 min. */
  readonly handshakeTimeoutMs?: number;
}

/** A freshly shown PIN. `pin` is the secret the user reads; print it, never log it. */
export interface IssuedPin {
  readonly pin: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
}

/** What `pair pin --json` prints. */
export interface PinAnnouncement {
  readonly pin: string;
  readonly expires_at: string;
}

/** A pairing's hold on the current PIN, from `claim` to `settle`. */
export interface PinClaim {
  readonly claimId: number;
  readonly generation: number;
  readonly pin: string;
}

export type PinStatus =
  | { readonly state: "none" }
  | {
      readonly state: "active";
      readonly expiresAtMs: number;
      readonly attemptsLeft: number;
      readonly inFlight: boolean;
    }
  | { readonly state: "expired"; readonly expiresAtMs: number }
  | { readonly state: "consumed" }
  | { readonly state: "burnt" };

/** Phases of the current PIN; "expired" is not a phase but an active PIN past its time. */
export type PinPhase = "none" | "active" | "consumed" | "burnt";

/** Every allowed move (`issue` replaces any PIN, `withdraw` takes the active one back). */
export const PIN_TRANSITIONS: Readonly<Record<PinPhase, readonly PinPhase[]>> = {
  none: ["active"],
  active: ["active", "consumed", "burnt", "none"],
  consumed: ["active"],
  burnt: ["active"],
};

interface ActivePin {
  readonly generation: number;
  readonly pin: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
  failedAttempts: number;
  claim: { readonly claimId: number; readonly deadlineMs: number } | undefined;
}

export class PinIssuer {
  readonly pinLifetimeMs: number;
  readonly maxFailedAttempts: number;
  readonly handshakeTimeoutMs: number;
  readonly #randomBytes: RandomBytes;
  #phase: PinPhase = "none";
  #active: ActivePin | undefined;
  #generation = 0;
  #nextClaimId = 1;

  constructor(options: PinIssuerOptions) {
    this.#randomBytes = options.randomBytes;
    this.pinLifetimeMs = bounded(
      "pinLifetimeMs",
      options.pinLifetimeMs,
      DEFAULT_PIN_LIFETIME_MS,
      MAX_PIN_LIFETIME_MS,
    );
    this.maxFailedAttempts = bounded(
      "maxFailedAttempts",
      options.maxFailedAttempts,
      DEFAULT_MAX_FAILED_ATTEMPTS,
      MAX_FAILED_ATTEMPTS_LIMIT,
    );
    this.handshakeTimeoutMs = bounded(
      "handshakeTimeoutMs",
      options.handshakeTimeoutMs,
      DEFAULT_HANDSHAKE_TIMEOUT_MS,
      MAX_HANDSHAKE_TIMEOUT_MS,
    );
  }

  get phase(): PinPhase {
    return this.#phase;
  }

  /** Shows a new PIN, replacing any other (a pairing holding the old one will find it expired). */
  issue(nowMs: number): IssuedPin {
    checkTime(nowMs);
    this.#generation += 1;
    const pin = drawPin(this.#randomBytes);
    this.#active = {
      generation: this.#generation,
      pin,
      issuedAtMs: nowMs,
      expiresAtMs: nowMs + this.pinLifetimeMs,
      failedAttempts: 0,
      claim: undefined,
    };
    this.#moveTo("active");
    return { pin, issuedAtMs: nowMs, expiresAtMs: nowMs + this.pinLifetimeMs };
  }

  /** Takes the active PIN back (the user closed `pair pin`). */
  withdraw(): void {
    if (this.#phase !== "active") return;
    this.#active = undefined;
    this.#moveTo("none");
  }

  status(nowMs: number): PinStatus {
    checkTime(nowMs);
    const phase = this.#phase;
    switch (phase) {
      case "none":
      case "consumed":
      case "burnt":
        return { state: phase };
      case "active": {
        const active = this.#current();
        if (nowMs >= active.expiresAtMs) return { state: "expired", expiresAtMs: active.expiresAtMs };
        const inFlight = active.claim !== undefined && nowMs < active.claim.deadlineMs;
        const staleFailures = active.claim !== undefined && !inFlight ? 1 : 0;
        return {
          state: "active",
          expiresAtMs: active.expiresAtMs,
          attemptsLeft: Math.max(0, this.maxFailedAttempts - active.failedAttempts - staleFailures),
          inFlight,
        };
      }
      default:
        return assertNever(phase, "PIN phase");
    }
  }

  /** Takes the PIN for one pairing. Refused when there is none, it expired or burnt, or it is busy. */
  claim(nowMs: number): Result<PinClaim, PairingError> {
    checkTime(nowMs);
    const usable = this.#usable(nowMs);
    if (!usable.ok) return usable;
    const active = usable.value;
    if (active.claim !== undefined) {
      if (nowMs < active.claim.deadlineMs) {
        return err(pairingError("pairing_busy", "another pairing is using this PIN; try again shortly"));
      }
      this.#fail(active);
      if (this.#phase === "burnt") return err(exhausted());
    }
    const claimId = this.#nextClaimId++;
    active.claim = { claimId, deadlineMs: nowMs + this.handshakeTimeoutMs };
    return ok({ claimId, generation: active.generation, pin: active.pin });
  }

  /**
   * Ends a claim. `paired` consumes the PIN; `failed` counts one attempt and burns the PIN at the
   * limit. Refused (and nothing is consumed) when the PIN expired, was replaced or burnt, or when
   * the claim timed out and was taken over.
   */
  settle(claim: PinClaim, outcome: "paired" | "failed", nowMs: number): Result<void, PairingError> {
    checkTime(nowMs);
    const active = this.#active;
    if (this.#phase === "burnt" && this.#generation === claim.generation) return err(exhausted());
    if (this.#phase !== "active" || active === undefined || active.generation !== claim.generation) {
      return err(noUsablePin());
    }
    if (active.claim?.claimId !== claim.claimId) {
      return err(pairingError("pairing_failed", "this pairing took too long and lost its hold on the PIN"));
    }
    if (nowMs >= active.expiresAtMs) {
      active.claim = undefined;
      return err(noUsablePin());
    }
    if (outcome === "paired") {
      this.#active = undefined;
      this.#moveTo("consumed");
      return ok(undefined);
    }
    this.#fail(active);
    return ok(undefined);
  }

  #usable(nowMs: number): Result<ActivePin, PairingError> {
    const phase = this.#phase;
    switch (phase) {
      case "none":
      case "consumed":
        return err(noUsablePin());
      case "burnt":
        return err(exhausted());
      case "active": {
        const active = this.#current();
        return nowMs >= active.expiresAtMs ? err(noUsablePin()) : ok(active);
      }
      default:
        return assertNever(phase, "PIN phase");
    }
  }

  #fail(active: ActivePin): void {
    active.claim = undefined;
    active.failedAttempts += 1;
    if (active.failedAttempts >= this.maxFailedAttempts) {
      this.#active = undefined;
      this.#moveTo("burnt");
    }
  }

  #current(): ActivePin {
    if (this.#active === undefined) throw new Error("PinIssuer: active phase without a PIN");
    return this.#active;
  }

  #moveTo(next: PinPhase): void {
    if (!PIN_TRANSITIONS[this.#phase].includes(next)) {
      throw new Error(`PinIssuer: illegal move ${this.#phase} -> ${next}`);
    }
    this.#phase = next;
  }
}

/** A uniformly random 6-digit PIN (rejection sampling over uint32, so no modulo bias). */
export function drawPin(randomBytes: RandomBytes): string {
  for (let draw = 0; draw < MAX_PIN_DRAWS; draw++) {
    const bytes = takeRandomBytes(randomBytes, 4);
    const value = new DataView(bytes.buffer).getUint32(0);
    bytes.fill(0);
    if (value < UNBIASED_DRAW_LIMIT) return String(value % PIN_VALUES).padStart(PIN_DIGITS, "0");
  }
  throw new Error(`the random source failed ${MAX_PIN_DRAWS} PIN draws in a row`);
}

/** The `pair pin --json` object: `{"pin": "123456", "expires_at": "<ISO 8601>"}`. */
export function pinAnnouncement(issued: IssuedPin): PinAnnouncement {
  return { pin: issued.pin, expires_at: new Date(issued.expiresAtMs).toISOString() };
}

function noUsablePin(): PairingError {
  return pairingError("pin_expired", "no usable PIN: it expired or was used; show a new one with `pair pin`");
}

function exhausted(): PairingError {
  return pairingError(
    "pin_attempts_exhausted",
    "too many failed attempts: this PIN is burnt; show a new one with `pair pin`",
  );
}

function bounded(name: string, value: number | undefined, fallback: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < 1 || chosen > max) {
    throw new RangeError(`${name} must be an integer from 1 to ${max}, got ${chosen}`);
  }
  return chosen;
}

function checkTime(nowMs: number): void {
  if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be a finite number, got ${nowMs}`);
}

/** A PIN as typed (`pair join --pin`): exactly 6 digits, surrounding spaces ignored. */
export function parsePin(text: string): Result<string, PairingError> {
  const pin = text.trim();
  return /^[0-9]{6}$/.test(pin)
    ? ok(pin)
    : err(pairingError("invalid_pin", `a PIN is ${PIN_DIGITS} digits, as \`pair pin\` shows it`));
}
