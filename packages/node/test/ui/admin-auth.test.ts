// Who may call the admin API: the bearer token, or a dashboard session whose changes carry the CSRF
// token from the dashboard's own origin. Decided from headers alone (no socket).
import { clockAt } from "@pair/cluster";
import { describe, expect, it } from "vitest";
import {
  adminCaller,
  readCookie,
  sessionCookie,
  sessionCookieName,
  UiSessions,
  type AdminRequestFacts,
} from "../../src/ui/index.js";

const TOKEN = "a".repeat(64);
const COOKIE = "pair_ui_test";

function setup() {
  let n = 0;
  const sessions = new UiSessions({ clock: clockAt(() => 1_000), randomBytes: (k) => Buffer.alloc(k, ++n) });
  const r = sessions.redeem(sessions.issueCode().code);
  if (!r.ok) throw new Error("redeem failed");
  const deps = { adminToken: TOKEN, sessions, cookieName: COOKIE };
  /** A browser's same-origin POST from the dashboard, with `over` changed. */
  const req = (over: Partial<AdminRequestFacts> = {}): AdminRequestFacts => ({
    method: "POST",
    authorization: undefined,
    cookie: `other=1; ${COOKIE}=${r.sessionId}`,
    host: "127.0.0.1:11434",
    origin: "http://127.0.0.1:11434",
    secFetchSite: "same-origin",
    csrf: r.session.csrfToken,
    ...over,
  });
  return { deps, req, sessionId: r.sessionId, sessions };
}

describe("the admin API's callers", () => {
  it("the bearer token is enough, for reads and changes, with no cookie and no origin", () => {
    const { deps } = setup();
    const bare = {
      method: "POST",
      cookie: undefined,
      host: undefined,
      origin: undefined,
      secFetchSite: undefined,
      csrf: undefined,
    };
    expect(adminCaller(deps, { ...bare, authorization: `Bearer ${TOKEN}` })).toEqual({
      ok: true,
      via: "bearer",
    });
    expect(adminCaller(deps, { ...bare, authorization: `Bearer ${"b".repeat(64)}` })).toMatchObject({
      ok: false,
      status: 401,
      code: "unauthorized",
    });
  });

  it("a session may read with its cookie alone (GET, HEAD)", () => {
    const { deps, req } = setup();
    for (const method of ["GET", "HEAD", "get"])
      expect(
        adminCaller(deps, req({ method, origin: undefined, csrf: undefined, secFetchSite: undefined })),
      ).toMatchObject({
        ok: true,
        via: "session",
      });
  });

  it("a session's change from its own page passes", () => {
    const { deps, req } = setup();
    expect(adminCaller(deps, req())).toMatchObject({ ok: true, via: "session" });
    // Sec-Fetch-Site is optional (older browsers), the rest is not.
    expect(adminCaller(deps, req({ secFetchSite: undefined }))).toMatchObject({ ok: true });
  });

  it.each([
    ["no CSRF header", { csrf: undefined }, /missing or wrong x-pair-csrf/],
    ["a wrong CSRF token", { csrf: "x".repeat(43) }, /missing or wrong x-pair-csrf/],
    ["no Origin", { origin: undefined }, /no Origin header/],
    ["another site's Origin", { origin: "http://evil.example" }, /not this node's address/],
    ["another port's Origin", { origin: "http://127.0.0.1:9999" }, /not this node's address/],
    ["an Origin of null", { origin: "null" }, /not a URL/],
    ["a cross-site fetch", { secFetchSite: "cross-site" }, /Sec-Fetch-Site is cross-site/],
    ["a same-site (other port) fetch", { secFetchSite: "same-site" }, /Sec-Fetch-Site is same-site/],
  ] as const)("a session's change with %s is refused (403 csrf_refused)", (_what, over, why) => {
    const { deps, req } = setup();
    const caller = adminCaller(deps, req(over));
    expect(caller).toMatchObject({ ok: false, status: 403, code: "csrf_refused" });
    if (!caller.ok) expect(caller.message).toMatch(why);
  });

  it("without a live session nothing passes: no cookie, an unknown cookie, an ended session", () => {
    const { deps, req, sessionId, sessions } = setup();
    expect(adminCaller(deps, req({ cookie: undefined }))).toMatchObject({ ok: false, status: 401 });
    expect(adminCaller(deps, req({ method: "GET", cookie: `${COOKIE}=nope` }))).toMatchObject({
      ok: false,
      status: 401,
      message: expect.stringMatching(/session has ended/) as unknown,
    });
    sessions.end(sessionId);
    expect(adminCaller(deps, req({ method: "GET" }))).toMatchObject({ ok: false, status: 401 });
  });

  it("another node's cookie name is not this node's session", () => {
    const { deps, req, sessionId } = setup();
    expect(adminCaller(deps, req({ method: "GET", cookie: `pair_ui_other=${sessionId}` }))).toMatchObject({
      ok: false,
      status: 401,
    });
  });
});

describe("the session cookie", () => {
  it("is HttpOnly, SameSite=Strict, Path=/, with a Max-Age", () => {
    expect(sessionCookie("pair_ui_x", "v", 43_200.7)).toBe(
      "pair_ui_x=v; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200",
    );
    expect(sessionCookie("pair_ui_x", "", -5)).toMatch(/Max-Age=0$/);
  });

  it("is read by exact name", () => {
    expect(readCookie("a=1; pair_ui_x=abc; pair_ui_xy=zzz", "pair_ui_x")).toBe("abc");
    expect(readCookie("pair_ui_xy=zzz", "pair_ui_x")).toBeUndefined();
    expect(readCookie("pair_ui_x=", "pair_ui_x")).toBeUndefined();
    expect(readCookie(undefined, "pair_ui_x")).toBeUndefined();
  });

  it("is named per node, from the node id, with cookie-safe characters only", () => {
    expect(sessionCookieName("ab-CD_12.34/xyz:9999999999")).toBe("pair_ui_abCD1234xyz99999");
    expect(sessionCookieName("n1")).not.toBe(sessionCookieName("n2"));
  });
});
