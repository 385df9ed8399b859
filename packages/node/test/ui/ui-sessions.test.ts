// Dashboard sign-in in memory: one-time login codes that expire, sessions that expire, hashes only,
// bounded counts — on a virtual clock and a counter for randomness.
import { clockAt } from "@pair/cluster";
import { createHash } from "node:crypto";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { csrfMatches, UiSessions } from "../../src/ui/index.js";

function sessions(
  options: { codeTtlMs?: number; sessionTtlMs?: number; maxCodes?: number; maxSessions?: number } = {},
) {
  const clock = { now: 1_700_000_000_000 };
  let counter = 0;
  const s = new UiSessions({
    clock: clockAt(() => clock.now),
    // Distinct, predictable bytes per call (the real node uses crypto.randomBytes).
    randomBytes: (n) => Buffer.alloc(n, ++counter),
    ...(options.codeTtlMs === undefined ? {} : { loginCodeTtlMs: options.codeTtlMs }),
    ...(options.sessionTtlMs === undefined ? {} : { sessionTtlMs: options.sessionTtlMs }),
    ...(options.maxCodes === undefined ? {} : { maxLoginCodes: options.maxCodes }),
    ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
  });
  return { s, clock };
}

describe("login codes", () => {
  it("open a session once; a second use of the same code is refused", () => {
    const { s } = sessions();
    const { code } = s.issueCode();
    const first = s.redeem(code);
    expect(first.ok).toBe(true);
    expect(s.redeem(code)).toEqual({ ok: false, reason: "unknown" });
    if (!first.ok) return;
    expect(s.session(first.sessionId)).toEqual(first.session);
    expect(first.session.csrfToken).not.toBe(first.sessionId);
    expect(first.sessionId).not.toBe(code);
  });

  it("expire after their time to live, and an expired code is spent by trying it", () => {
    const { s, clock } = sessions({ codeTtlMs: 60_000 });
    const { code, expiresAtMs } = s.issueCode();
    expect(expiresAtMs).toBe(clock.now + 60_000);
    clock.now += 60_000;
    expect(s.redeem(code)).toEqual({ ok: false, reason: "expired" });
    clock.now -= 1; // even back in time, it was spent
    expect(s.redeem(code)).toEqual({ ok: false, reason: "unknown" });
  });

  it("just before expiry still work", () => {
    const { s, clock } = sessions({ codeTtlMs: 60_000 });
    const { code } = s.issueCode();
    clock.now += 59_999;
    expect(s.redeem(code).ok).toBe(true);
  });

  it("an unknown code is refused and opens nothing", () => {
    const { s } = sessions();
    s.issueCode();
    expect(s.redeem("not-a-code")).toEqual({ ok: false, reason: "unknown" });
    expect(s.counts()).toEqual({ loginCodes: 1, sessions: 0 });
  });

  it("are kept only as hashes: the state shows neither codes nor session ids", () => {
    const { s } = sessions();
    const { code } = s.issueCode();
    const other = s.issueCode().code;
    const r = s.redeem(other);
    if (!r.ok) throw new Error("redeem failed");
    const dump = inspect(s, { showHidden: true, depth: 10 }) + JSON.stringify(s);
    expect(dump).not.toContain(code);
    expect(dump).not.toContain(r.sessionId);
    // …and the hash is really what is kept: the same code still redeems.
    expect(createHash("sha256").update(code).digest("hex")).toHaveLength(64);
    expect(s.redeem(code).ok).toBe(true);
  });

  it("are bounded: the oldest unused code is dropped to make room", () => {
    const { s } = sessions({ maxCodes: 2 });
    const a = s.issueCode().code;
    const b = s.issueCode().code;
    const c = s.issueCode().code;
    expect(s.redeem(a).ok).toBe(false);
    expect(s.redeem(b).ok).toBe(true);
    expect(s.redeem(c).ok).toBe(true);
  });
});

describe("sessions", () => {
  it("end at their absolute expiry", () => {
    const { s, clock } = sessions({ sessionTtlMs: 3_600_000 });
    const r = s.redeem(s.issueCode().code);
    if (!r.ok) throw new Error("redeem failed");
    clock.now += 3_599_999;
    expect(s.session(r.sessionId)).toBeDefined();
    clock.now += 1;
    expect(s.session(r.sessionId)).toBeUndefined();
  });

  it("end when signed out", () => {
    const { s } = sessions();
    const r = s.redeem(s.issueCode().code);
    if (!r.ok) throw new Error("redeem failed");
    expect(s.end(r.sessionId)).toBe(true);
    expect(s.session(r.sessionId)).toBeUndefined();
    expect(s.end(r.sessionId)).toBe(false);
  });

  it("are bounded: the oldest is ended to make room", () => {
    const { s } = sessions({ maxSessions: 2 });
    const open = () => {
      const r = s.redeem(s.issueCode().code);
      if (!r.ok) throw new Error("redeem failed");
      return r.sessionId;
    };
    const [a, b, c] = [open(), open(), open()];
    expect(s.session(a)).toBeUndefined();
    expect(s.session(b)).toBeDefined();
    expect(s.session(c)).toBeDefined();
  });

  it("each have their own CSRF token, compared exactly", () => {
    const { s } = sessions();
    const r1 = s.redeem(s.issueCode().code);
    const r2 = s.redeem(s.issueCode().code);
    if (!r1.ok || !r2.ok) throw new Error("redeem failed");
    expect(csrfMatches(r1.session, r1.session.csrfToken)).toBe(true);
    expect(csrfMatches(r1.session, r2.session.csrfToken)).toBe(false);
    expect(csrfMatches(r1.session, r1.session.csrfToken.slice(1))).toBe(false);
    expect(csrfMatches(r1.session, undefined)).toBe(false);
  });
});

describe("limits", () => {
  it("are checked at construction", () => {
    expect(
      () =>
        new UiSessions({ clock: clockAt(() => 0), randomBytes: (n) => Buffer.alloc(n), loginCodeTtlMs: 0 }),
    ).toThrow(/loginCodeTtlMs must be a positive number/);
    expect(
      () => new UiSessions({ clock: clockAt(() => 0), randomBytes: (n) => Buffer.alloc(n), maxSessions: -1 }),
    ).toThrow(/maxSessions/);
  });
});
