// Strict reading of pairing messages: versions, exact fields, canonical base64url, and no throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parsePairingJson,
  refusalMessage,
  pairingError,
  MAX_MESSAGE_CHARS,
} from "../../src/pairing/index.js";
import {
  confirmedMessage,
  confirmMessage,
  helloMessage,
  readConfirm,
  readConfirmed,
  readHello,
  readShare,
  shareMessage,
} from "../../src/pairing/pairing-messages.js";
import { LAPTOP } from "./pairing-harness.js";

const nonce = new Uint8Array(16).fill(7);
const share = new Uint8Array(32).fill(9);
const mac = new Uint8Array(64).fill(3);
const hello = helloMessage(nonce, LAPTOP);
const code = (result: { ok: boolean; error?: { code: string } }): string =>
  result.ok ? "ok" : (result.error?.code ?? "?");

describe("pairing messages", () => {
  it("round-trip through JSON", () => {
    const again = (value: object): unknown => JSON.parse(JSON.stringify(value));
    expect(readHello(again(hello))).toEqual({ ok: true, value: { nonce, node: LAPTOP } });
    expect(readShare(again(shareMessage(nonce, LAPTOP, share)))).toEqual({
      ok: true,
      value: { nonce, node: LAPTOP, share },
    });
    expect(readConfirm(again(confirmMessage(share, mac)))).toEqual({ ok: true, value: { share, mac } });
    expect(readConfirmed(again(confirmedMessage(mac)))).toEqual({ ok: true, value: { mac } });
  });

  it("refuse another version as unsupported_version, a non-integer one as malformed", () => {
    expect(code(readHello({ ...hello, version: 2 }))).toBe("unsupported_version");
    expect(code(readHello({ version: 0, type: "something-new" }))).toBe("unsupported_version");
    for (const version of ["1", 1.5, null, undefined]) {
      expect(code(readHello({ ...hello, version }))).toBe("malformed_message");
    }
  });

  it("refuse missing, extra and ill-formed fields", () => {
    const { nonce: _dropped, ...noNonce } = hello;
    const cases: unknown[] = [
      noNonce,
      { ...hello, extra: true },
      { ...hello, type: "pair.share" },
      { ...hello, nonce: hello.nonce + "A" },
      { ...hello, nonce: hello.nonce.slice(0, -1) + "I" }, // same length, non-zero trailing bits
      { ...hello, nonce: hello.nonce.replace(/.$/, "=") },
      { ...hello, node: { ...hello.node, fingerprint: LAPTOP.fingerprint.toUpperCase() } },
      { ...hello, node: { ...hello.node, id: "" } },
      { ...hello, node: { ...hello.node, name: "has space" } },
      { ...hello, node: { ...hello.node, role: "admin" } },
      { ...hello, node: [LAPTOP.nodeId] },
      [hello],
      null,
      "pair.hello",
      JSON.parse('{"__proto__": {}, "version": 1, "type": "pair.hello"}'),
    ];
    for (const value of cases)
      expect(code(readHello(value)), JSON.stringify(value)).toBe("malformed_message");
  });

  it("turn a refusal into the other node's error, and refuse refusals where none may come", () => {
    const refused = refusalMessage(pairingError("pin_expired", "x"));
    expect(readShare(refused)).toMatchObject({ ok: false, error: { code: "pin_expired", remote: true } });
    expect(readConfirmed(refused)).toMatchObject({ ok: false, error: { code: "pin_expired", remote: true } });
    expect(code(readHello(refused))).toBe("malformed_message");
    expect(code(readShare({ ...refused, code: "root_granted" }))).toBe("malformed_message");
    expect(refusalMessage(pairingError("invalid_pin", "x")).code).toBe("pairing_failed");
  });

  it("parse text without throwing and within a bound", () => {
    expect(code(parsePairingJson("{not json"))).toBe("malformed_message");
    expect(code(parsePairingJson(" ".repeat(MAX_MESSAGE_CHARS + 1)))).toBe("malformed_message");
    expect(parsePairingJson(JSON.stringify(hello))).toEqual({ ok: true, value: hello });
  });

  it("never throw, whatever arrives", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything()), (value) => {
        for (const read of [readHello, readShare, readConfirm, readConfirmed]) {
          expect(read(value).ok).toBe(false);
        }
      }),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(typeof parsePairingJson(text).ok).toBe("boolean");
      }),
    );
  });
});
