// The PIN issuer: uniform 6-digit PINs, lifetime, single use, bounded failures, one pairing in flight.
import { describe, expect, it } from "vitest";
import { drawPin } from "../../src/pairing/pin-issuer.js";
import {
  DEFAULT_MAX_FAILED_ATTEMPTS,
  DEFAULT_PIN_LIFETIME_MS,
  PIN_TRANSITIONS,
  PinIssuer,
  parsePin,
  pinAnnouncement,
  type PinClaim,
} from "../../src/pairing/index.js";
import { seededRandom } from "./pairing-harness.js";

const LIMIT = 4_294_000_000; // floor(2^32 / 10^6) * 10^6

function uint32Source(values: readonly number[]): (n: number) => Uint8Array {
  const queue = [...values];
  return (n) => {
    const bytes = new Uint8Array(n);
    new DataView(bytes.buffer).setUint32(0, queue.shift() ?? 0);
    return bytes;
  };
}

function claimed(issuer: PinIssuer, nowMs: number): PinClaim {
  const claim = issuer.claim(nowMs);
  if (!claim.ok) throw new Error(`claim refused: ${claim.error.code}`);
  return claim.value;
}

describe("drawing a PIN", () => {
  it("is six digits, zero-padded", () => {
    expect(drawPin(uint32Source([42]))).toBe("000042");
    expect(drawPin(uint32Source([LIMIT - 1]))).toBe("999999");
    for (let i = 0; i < 200; i++) expect(drawPin(seededRandom(`pin-${i}`))).toMatch(/^[0-9]{6}$/);
  });

  it("rejects draws at or above the largest multiple of 10^6 (no modulo bias)", () => {
    expect(LIMIT % 1_000_000).toBe(0);
    expect(2 ** 32 - LIMIT).toBeLessThan(1_000_000);
    expect(drawPin(uint32Source([LIMIT, 2 ** 32 - 1, 123_456_789]))).toBe("456789");
  });

  it("gives up on a source that never yields an acceptable draw", () => {
    expect(() => drawPin((n) => new Uint8Array(n).fill(0xff))).toThrow(/64 PIN draws/);
  });

  it("parses a typed PIN strictly", () => {
    expect(parsePin(" 012345 ")).toEqual({ ok: true, value: "012345" });
    for (const bad of ["12345", "1234567", "12 3456", "abcdef", "", "１２３４５６"]) {
      const parsed = parsePin(bad);
      expect(parsed.ok ? "accepted" : parsed.error.code).toBe("invalid_pin");
    }
  });
});

describe("PinIssuer", () => {
  const issuer = (): PinIssuer => new PinIssuer({ randomBytes: seededRandom("issuer") });

  it("announces the PIN and its expiry for `pair pin --json`", () => {
    const pins = issuer();
    const issued = pins.issue(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(pins.pinLifetimeMs).toBe(DEFAULT_PIN_LIFETIME_MS);
    expect(pinAnnouncement(issued)).toEqual({ pin: issued.pin, expires_at: "2026-01-02T03:06:05.000Z" });
  });

  it("refuses before a PIN is shown and after it expires", () => {
    const pins = issuer();
    expect(pins.claim(0)).toMatchObject({ ok: false, error: { code: "pin_expired" } });
    pins.issue(1_000);
    expect(pins.claim(1_000 + DEFAULT_PIN_LIFETIME_MS)).toMatchObject({
      ok: false,
      error: { code: "pin_expired" },
    });
    expect(pins.status(1_000 + DEFAULT_PIN_LIFETIME_MS)).toMatchObject({ state: "expired" });
    expect(pins.claim(1_000 + DEFAULT_PIN_LIFETIME_MS - 1).ok).toBe(true);
  });

  it("is single use", () => {
    const pins = issuer();
    pins.issue(0);
    expect(pins.settle(claimed(pins, 10), "paired", 20)).toEqual({ ok: true, value: undefined });
    expect(pins.status(30)).toEqual({ state: "consumed" });
    expect(pins.claim(30)).toMatchObject({ ok: false, error: { code: "pin_expired" } });
  });

  it("burns the PIN after the allowed number of failures, until a new one is shown", () => {
    const pins = issuer();
    pins.issue(0);
    for (let attempt = 1; attempt <= DEFAULT_MAX_FAILED_ATTEMPTS; attempt++) {
      pins.settle(claimed(pins, attempt), "failed", attempt);
    }
    expect(pins.status(10)).toEqual({ state: "burnt" });
    expect(pins.claim(10)).toMatchObject({ ok: false, error: { code: "pin_attempts_exhausted" } });
    pins.issue(20);
    expect(pins.status(20)).toMatchObject({ state: "active", attemptsLeft: 3, inFlight: false });
  });

  it("lets one pairing hold the PIN at a time; a stalled one counts as a failure", () => {
    const pins = new PinIssuer({ randomBytes: seededRandom("busy"), handshakeTimeoutMs: 5_000 });
    pins.issue(0);
    const first = claimed(pins, 100);
    const busy = pins.claim(200);
    expect(busy).toMatchObject({ ok: false, error: { code: "pairing_busy", retryable: true } });
    expect(pins.status(200)).toMatchObject({ inFlight: true, attemptsLeft: 3 });
    expect(pins.status(5_100)).toMatchObject({ inFlight: false, attemptsLeft: 2 });
    const second = claimed(pins, 5_100);
    expect(pins.settle(first, "paired", 5_200)).toMatchObject({
      ok: false,
      error: { code: "pairing_failed" },
    });
    expect(pins.settle(second, "paired", 5_200).ok).toBe(true);
  });

  it("a claim on a replaced PIN cannot consume the new one", () => {
    const pins = issuer();
    pins.issue(0);
    const old = claimed(pins, 10);
    pins.issue(20);
    expect(pins.settle(old, "paired", 30)).toMatchObject({ ok: false, error: { code: "pin_expired" } });
    expect(pins.status(30)).toMatchObject({ state: "active", attemptsLeft: 3 });
  });

  it("a claim settled after expiry consumes nothing", () => {
    const pins = issuer();
    pins.issue(0);
    const claim = claimed(pins, DEFAULT_PIN_LIFETIME_MS - 10);
    expect(pins.settle(claim, "paired", DEFAULT_PIN_LIFETIME_MS)).toMatchObject({
      ok: false,
      error: { code: "pin_expired" },
    });
  });

  it("withdraw takes the PIN back", () => {
    const pins = issuer();
    pins.issue(0);
    pins.withdraw();
    expect(pins.status(1)).toEqual({ state: "none" });
    expect(pins.claim(1)).toMatchObject({ ok: false, error: { code: "pin_expired" } });
  });

  it("checks its limits at construction", () => {
    const randomBytes = seededRandom("limits");
    expect(() => new PinIssuer({ randomBytes, pinLifetimeMs: 0 })).toThrow(RangeError);
    expect(() => new PinIssuer({ randomBytes, pinLifetimeMs: 3_600_001 })).toThrow(RangeError);
    expect(() => new PinIssuer({ randomBytes, maxFailedAttempts: 1.5 })).toThrow(RangeError);
    expect(() => new PinIssuer({ randomBytes, maxFailedAttempts: 11 })).toThrow(RangeError);
    expect(() => new PinIssuer({ randomBytes, handshakeTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => issuer().status(Number.NaN)).toThrow(RangeError);
  });

  it("moves only along the documented table", () => {
    expect(PIN_TRANSITIONS).toEqual({
      none: ["active"],
      active: ["active", "consumed", "burnt", "none"],
      consumed: ["active"],
      burnt: ["active"],
    });
    const pins = issuer();
    const seen = [pins.phase];
    pins.issue(0);
    seen.push(pins.phase);
    pins.settle(claimed(pins, 1), "paired", 1);
    seen.push(pins.phase);
    pins.issue(2);
    seen.push(pins.phase);
    for (let i = 0; i < 3; i++) pins.settle(claimed(pins, 3), "failed", 3);
    seen.push(pins.phase);
    pins.issue(4);
    pins.withdraw();
    seen.push(pins.phase);
    expect(seen).toEqual(["none", "active", "consumed", "active", "burnt", "none"]);
  });
});
