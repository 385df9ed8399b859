// Whole pairings through the public API: honest runs, wrong and burnt PINs, expiry, reuse, a
// man-in-the-middle with its own certificate, tampering with every field, and what an eavesdropper sees.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  createInitiatorPairing,
  INITIATOR_TRANSITIONS,
  RESPONDER_TRANSITIONS,
  ResponderPairing,
} from "../../src/pairing/index.js";
import {
  DESKTOP_3090,
  issuerWithPin,
  LAPTOP,
  MALLORY,
  otherPin,
  runPairing,
  seededRandom,
  type PairingRun,
} from "./pairing-harness.js";

function codes(run: PairingRun): [string, string] {
  const code = (o: PairingRun["initiator"]): string => (o.ok ? "paired" : o.error.code);
  return [code(run.initiator), code(run.responder)];
}

describe("PIN pairing", () => {
  it("pairs two honest nodes, each learning the other's id, name and fingerprint", () => {
    const { issuer, pin } = issuerWithPin();
    const run = runPairing({ issuer, pin });
    expect(run.initiator).toEqual({ ok: true, peer: DESKTOP_3090 });
    expect(run.responder).toEqual({ ok: true, peer: LAPTOP });
    expect(run.wire).toHaveLength(4);
    expect(issuer.status(2_000)).toEqual({ state: "consumed" });
  });

  it("fails on a wrong PIN and counts the attempt", () => {
    const { issuer, pin } = issuerWithPin();
    const run = runPairing({ issuer, pin: otherPin(pin) });
    expect(codes(run)).toEqual(["pairing_failed", "pairing_failed"]);
    expect(run.initiator).toMatchObject({ error: { remote: true } });
    expect(issuer.status(2_000)).toMatchObject({ state: "active", attemptsLeft: 2 });
  });

  it("burns the PIN after three failures, even for the right PIN", () => {
    const { issuer, pin } = issuerWithPin();
    for (let i = 0; i < 3; i++) {
      expect(codes(runPairing({ issuer, pin: otherPin(pin), seed: `wrong-${i}` }))).toEqual([
        "pairing_failed",
        "pairing_failed",
      ]);
    }
    expect(codes(runPairing({ issuer, pin }))).toEqual(["pin_attempts_exhausted", "pin_attempts_exhausted"]);
  });

  it("refuses an expired PIN, also when it expires during the exchange", () => {
    const late = issuerWithPin();
    expect(codes(runPairing({ ...late, nowMs: 120_000 }))).toEqual(["pin_expired", "pin_expired"]);
    const straddling = issuerWithPin();
    const run = runPairing({ ...straddling, nowMs: 119_000, finishAtMs: 120_500 });
    expect(codes(run)).toEqual(["pin_expired", "pin_expired"]);
  });

  it("does not accept a used PIN again", () => {
    const { issuer, pin } = issuerWithPin();
    expect(codes(runPairing({ issuer, pin }))).toEqual(["paired", "paired"]);
    const again = runPairing({ issuer, pin, initiator: MALLORY, seed: "again" });
    expect(codes(again)).toEqual(["pin_expired", "pin_expired"]);
  });

  it("lets one pairing at a time use the PIN; an abandoned one spends an attempt", () => {
    const { issuer, pin } = issuerWithPin();
    const first = new ResponderPairing({
      self: DESKTOP_3090,
      issuer,
      peerFingerprint: LAPTOP.fingerprint,
      randomBytes: seededRandom("first"),
    });
    const joining = createInitiatorPairing({
      self: LAPTOP,
      pin,
      randomBytes: seededRandom("joining"),
    });
    if (!joining.ok) throw new Error("PIN refused");
    expect(first.receive(joining.value.start(), 1_000).ok).toBe(true);
    expect(codes(runPairing({ issuer, pin, initiator: MALLORY, seed: "second" }))).toEqual([
      "pairing_busy",
      "pairing_busy",
    ]);
    first.abort(1_500);
    expect(first.phase).toBe("failed");
    expect(issuer.status(1_500)).toMatchObject({ attemptsLeft: 2, inFlight: false });
    expect(codes(runPairing({ issuer, pin, seed: "third", nowMs: 2_000 }))).toEqual(["paired", "paired"]);
  });
});

describe("a man-in-the-middle with its own certificate", () => {
  it("is refused when it relays the messages unchanged (claimed ≠ certificate sent)", () => {
    const { issuer, pin } = issuerWithPin();
    const run = runPairing({ issuer, pin, initiatorSeesFingerprint: MALLORY.fingerprint });
    expect(codes(run)).toEqual(["pairing_failed", "pairing_failed"]);
  });

  it("cannot complete on either side when it substitutes its fingerprint, even knowing the protocol", () => {
    const { issuer, pin } = issuerWithPin();
    const swapFingerprint = (index: number, message: Record<string, unknown>): Record<string, unknown> =>
      index <= 1
        ? { ...message, node: { ...(message["node"] as object), fingerprint: MALLORY.fingerprint } }
        : message;
    const run = runPairing({
      issuer,
      pin,
      initiatorSeesFingerprint: MALLORY.fingerprint,
      responderSeesFingerprint: MALLORY.fingerprint,
      relay: swapFingerprint,
    });
    expect(codes(run)).toEqual(["pairing_failed", "pairing_failed"]);
    expect(issuer.status(2_000)).toMatchObject({ attemptsLeft: 2 });
  });

  it("is refused when only one side's view of a fingerprint differs", () => {
    for (const which of ["initiator", "responder"] as const) {
      const { issuer, pin } = issuerWithPin(which);
      const relay = (index: number, message: Record<string, unknown>): Record<string, unknown> =>
        (which === "initiator" ? index === 1 : index === 0)
          ? { ...message, node: { ...(message["node"] as object), fingerprint: MALLORY.fingerprint } }
          : message;
      const run = runPairing({
        issuer,
        pin,
        relay,
        ...(which === "initiator"
          ? { initiatorSeesFingerprint: MALLORY.fingerprint }
          : { responderSeesFingerprint: MALLORY.fingerprint }),
      });
      expect(run.initiator.ok || run.responder.ok).toBe(false);
    }
  });
});

describe("tampering", () => {
  const mutateString = (value: string, key: string): string => {
    const first = value[0] ?? "";
    const replacement =
      key === "fingerprint"
        ? first === "0"
          ? "1"
          : "0"
        : key === "type"
          ? "pair.other"
          : first === "A"
            ? "B"
            : "A";
    return key === "type" ? replacement : replacement + value.slice(1);
  };
  const fieldsOf = (message: Record<string, unknown>): string[][] =>
    Object.entries(message).flatMap(([key, value]) =>
      typeof value === "object" && value !== null ? Object.keys(value).map((inner) => [key, inner]) : [[key]],
    );
  const tampered = (message: Record<string, unknown>, path: string[]): Record<string, unknown> => {
    const copy = JSON.parse(JSON.stringify(message)) as Record<string, Record<string, unknown>>;
    const [outer = "", inner] = path;
    const holder: Record<string, unknown> = inner === undefined ? copy : (copy[outer] ?? {});
    const key = inner ?? outer;
    const value = holder[key];
    holder[key] = typeof value === "number" ? value + 1 : mutateString(String(value), key);
    return copy;
  };

  it("of any field of any message stops the pairing", () => {
    const honest = issuerWithPin("honest");
    const wire = runPairing(honest).wire.map((text) => JSON.parse(text) as Record<string, unknown>);
    let cases = 0;
    wire.forEach((message, index) => {
      for (const path of fieldsOf(message)) {
        const { issuer, pin } = issuerWithPin(`tamper-${index}-${path.join(".")}`);
        const relay = (at: number, m: Record<string, unknown>): Record<string, unknown> =>
          at === index ? tampered(m, path) : m;
        const run = runPairing({ issuer, pin, relay });
        expect(run.initiator.ok, `message ${index} field ${path.join(".")}`).toBe(false);
        if (index < 3) expect(run.responder.ok, `message ${index} field ${path.join(".")}`).toBe(false);
        cases++;
      }
    });
    expect(cases).toBe(6 + 7 + 4 + 3); // hello, share, confirm, confirmed (node.* counted per field)
  });

  it("an invalid or neutral group element as a share aborts and spends the attempt", () => {
    const identityShare = "A".repeat(43);
    const { issuer, pin } = issuerWithPin("neutral");
    const atResponder = runPairing({
      issuer,
      pin,
      relay: (at, m) => (at === 2 ? { ...m, share: identityShare } : m),
    });
    expect(codes(atResponder)).toEqual(["pairing_failed", "pairing_failed"]);
    expect(issuer.status(2_000)).toMatchObject({ attemptsLeft: 2 });
    const atInitiator = runPairing({
      issuer,
      pin,
      seed: "neutral-2",
      relay: (at, m) => (at === 1 ? { ...m, share: "_".repeat(42) + "8" } : m),
    });
    expect(atInitiator.initiator).toMatchObject({ ok: false, error: { code: "pairing_failed" } });
  });
});

describe("an eavesdropper", () => {
  it("sees neither the PIN nor any hash of the PIN alone", () => {
    for (const seed of ["a", "b", "c", "d", "e"]) {
      const { issuer, pin } = issuerWithPin(`eavesdrop-${seed}`);
      const run = runPairing({ issuer, pin, seed });
      expect(codes(run)).toEqual(["paired", "paired"]);
      const text = run.wire.join("\n");
      const fieldBytes = Buffer.concat(
        run.wire.flatMap((line) =>
          Object.entries(JSON.parse(line) as Record<string, unknown>)
            .filter(([key]) => ["nonce", "share", "mac"].includes(key))
            .map(([, value]) => Buffer.from(String(value), "base64url")),
        ),
      );
      for (const digest of [
        createHash("sha256").update(pin).digest(),
        createHash("sha512").update(pin).digest(),
      ]) {
        for (const spelling of ["hex", "base64", "base64url"] as const) {
          expect(text).not.toContain(digest.toString(spelling).replace(/=+$/, ""));
        }
        expect(fieldBytes.includes(digest)).toBe(false);
        expect(fieldBytes.includes(digest.subarray(0, 16))).toBe(false);
      }
      expect(text).not.toContain(pin);
    }
  });
});

describe("the session state machines", () => {
  it("follow their documented tables", () => {
    expect(INITIATOR_TRANSITIONS).toEqual({
      ready: ["awaiting_share", "failed"],
      awaiting_share: ["awaiting_confirmation", "failed"],
      awaiting_confirmation: ["paired", "failed"],
      paired: [],
      failed: [],
    });
    expect(RESPONDER_TRANSITIONS).toEqual({
      awaiting_hello: ["awaiting_confirm", "failed"],
      awaiting_confirm: ["paired", "failed"],
      paired: [],
      failed: [],
    });
  });

  it("refuse steps out of order and end failed", () => {
    const { issuer } = issuerWithPin();
    const joining = createInitiatorPairing({
      self: LAPTOP,
      pin: "123456",
      randomBytes: seededRandom("order"),
    });
    if (!joining.ok) throw new Error("PIN refused");
    expect(joining.value.finish({})).toMatchObject({ ok: false, error: { code: "pairing_failed" } });
    expect(joining.value.phase).toBe("failed");
    expect(() => joining.value.start()).toThrow(/phase failed/);
    const responder = new ResponderPairing({
      self: DESKTOP_3090,
      issuer,
      peerFingerprint: LAPTOP.fingerprint,
      randomBytes: seededRandom("order-r"),
    });
    expect(responder.finish({}, 0)).toMatchObject({ ok: false, error: { code: "pairing_failed" } });
    expect(responder.phase).toBe("failed");
  });

  it("refuse a malformed PIN, a malformed own identity and a reflected hello", () => {
    const base = { self: LAPTOP, randomBytes: seededRandom("x") };
    expect(createInitiatorPairing({ ...base, pin: "12345" })).toMatchObject({
      error: { code: "invalid_pin" },
    });
    expect(() => createInitiatorPairing({ ...base, pin: "123456", self: { ...LAPTOP, name: "" } })).toThrow(
      RangeError,
    );
    const { issuer, pin } = issuerWithPin("reflect");
    const run = runPairing({
      issuer,
      pin,
      initiator: DESKTOP_3090,
      responderSeesFingerprint: DESKTOP_3090.fingerprint,
    });
    expect(run.responder).toMatchObject({ ok: false, error: { code: "pairing_failed" } });
    expect(issuer.status(2_000)).toMatchObject({ attemptsLeft: 3 });
  });

  it("refuse a share that came without a certificate (no fingerprint observed)", () => {
    const { issuer, pin } = issuerWithPin("no-cert");
    const joining = createInitiatorPairing({ self: LAPTOP, pin, randomBytes: seededRandom("no-cert-i") });
    if (!joining.ok) throw new Error("PIN refused");
    const responder = new ResponderPairing({
      self: DESKTOP_3090,
      issuer,
      peerFingerprint: LAPTOP.fingerprint,
      randomBytes: seededRandom("no-cert-r"),
    });
    const share = responder.receive(joining.value.start(), 1_000);
    if (!share.ok) throw new Error("hello refused");
    const refused = joining.value.receive(share.value, undefined);
    expect(refused.ok || refused.error).toMatchObject({ code: "pairing_failed" });
    expect(refused.ok || refused.error.message).toMatch(/sent no certificate/);
    expect(joining.value.phase).toBe("failed");
  });

  it("accept Node's colon-separated uppercase fingerprint spelling for local inputs", () => {
    const { issuer, pin } = issuerWithPin("spelling");
    const colons = (DESKTOP_3090.fingerprint.toUpperCase().match(/../g) ?? []).join(":");
    const run = runPairing({ issuer, pin, initiatorSeesFingerprint: colons });
    expect(run.initiator).toEqual({ ok: true, peer: DESKTOP_3090 });
  });
});
