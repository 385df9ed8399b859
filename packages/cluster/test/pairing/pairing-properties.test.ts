// Property: an honest pairing succeeds exactly when both sides used the same PIN and the same
// pair of certificate fingerprints (a man-in-the-middle makes the views differ).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PinIssuer, type PairingIdentity } from "../../src/pairing/index.js";
import { runPairing, seededRandom } from "./pairing-harness.js";

const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("hex"));
const pinArb = fc.integer({ min: 0, max: 999_999 }).map((n) => String(n).padStart(6, "0"));

describe("pairing property", () => {
  it("succeeds iff both sides used the same PIN and the same fingerprint pair", () => {
    const seen = { paired: 0, refused: 0 };
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.string({ maxLength: 8 }),
          initiatorPin: pinArb,
          samePin: fc.boolean(),
          responderPin: pinArb,
          initiatorFp: hex32,
          responderFp: hex32,
          // The certificate that reached each side with the other's hello: the real one, or an interposer's.
          initiatorSees: fc.option(hex32, { nil: undefined, freq: 2 }),
          responderSees: fc.option(hex32, { nil: undefined, freq: 2 }),
        }),
        (c) => {
          const initiator: PairingIdentity = { nodeId: "node-a", name: "a", fingerprint: c.initiatorFp };
          const responder: PairingIdentity = { nodeId: "node-b", name: "b", fingerprint: c.responderFp };
          fc.pre(c.initiatorFp !== c.responderFp);
          const responderPin = c.samePin ? c.initiatorPin : c.responderPin;
          // The responder shows exactly `responderPin`: its issuer draws from a source we control.
          const value = Number(responderPin);
          const issuer = new PinIssuer({
            randomBytes: (n) => {
              const bytes = new Uint8Array(n);
              new DataView(bytes.buffer).setUint32(0, value);
              return bytes;
            },
          });
          expect(issuer.issue(0).pin).toBe(responderPin);
          const seenByInitiator = c.initiatorSees ?? c.responderFp;
          const seenByResponder = c.responderSees ?? c.initiatorFp;
          // The interposer rewrites the claimed fingerprints to match the certificates it presents.
          const run = runPairing({
            issuer,
            pin: c.initiatorPin,
            initiator,
            responder,
            initiatorSeesFingerprint: seenByInitiator,
            responderSeesFingerprint: seenByResponder,
            seed: `prop/${c.seed}`,
            relay: (index, message) => {
              const node = message["node"] as Record<string, unknown> | undefined;
              if (index === 0 && node) return { ...message, node: { ...node, fingerprint: seenByResponder } };
              if (index === 1 && node) return { ...message, node: { ...node, fingerprint: seenByInitiator } };
              return message;
            },
          });
          const expected =
            c.initiatorPin === responderPin &&
            seenByInitiator === c.responderFp &&
            seenByResponder === c.initiatorFp;
          expect(run.initiator.ok).toBe(expected);
          expect(run.responder.ok).toBe(expected);
          seen[expected ? "paired" : "refused"] += 1;
          if (run.initiator.ok && run.responder.ok) {
            expect(run.initiator.peer.fingerprint).toBe(c.responderFp);
            expect(run.responder.peer.fingerprint).toBe(c.initiatorFp);
          }
        },
      ),
      { numRuns: 150 },
    );
    expect(seen.paired).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it("random sources stay deterministic per seed", () => {
    expect(seededRandom("s")(8)).toEqual(seededRandom("s")(8));
  });
});
