// Who may use the client port: loopback by the socket's address, a bearer PAIR key otherwise; the
// requester each one becomes; and the 401 in each dialect, which never repeats the key.
import { describe, expect, it } from "vitest";
import {
  authenticateClient,
  bearerToken,
  formatApiKey,
  rememberPerAddress,
  SOCKET_LOOPBACK_POLICY,
  unauthorizedReply,
  type KeyCheck,
  type KeyChecker,
  type LoopbackPolicy,
} from "../../src/auth/index.js";

const GOOD = formatApiKey("laptop", Buffer.alloc(32, 3));
const REVOKED = formatApiKey("old", Buffer.alloc(32, 4));

/** A store holding `laptop` (active) and `old` (revoked), recording what it was asked. */
function fakeKeys(): KeyChecker & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    verify(text): KeyCheck {
      asked.push(text);
      if (text === GOOD) return { ok: true, id: "laptop" };
      if (text === REVOKED) return { ok: false, reason: "revoked" };
      return { ok: false, reason: text.startsWith("pair_") ? "unknown" : "malformed" };
    },
  };
}

const everyoneRemote: LoopbackPolicy = { isLoopbackHost: () => false, isLoopbackPeer: () => false };

describe("the socket decides what is local", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.45.6.7", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["192.168.1.20", false],
    ["::ffff:192.168.1.20", false],
    ["10.0.0.1", false],
    ["fe80::1", false],
    ["::", false],
    ["localhost", false], // a remote address is never a name
    [undefined, false], // a destroyed socket
  ])("%s → %s", (address, local) => {
    expect(SOCKET_LOOPBACK_POLICY.isLoopbackPeer(address)).toBe(local);
  });

  it("asks the same twice and gets the same answer (remembered per address, a bounded number of them)", () => {
    for (const round of [1, 2])
      for (const [address, local] of [
        ["127.0.0.1", true],
        ["192.168.1.20", false],
      ] as const)
        expect(SOCKET_LOOPBACK_POLICY.isLoopbackPeer(address), `${address}, round ${round}`).toBe(local);
    const asked: string[] = [];
    const remembered = rememberPerAddress((address) => {
      asked.push(address);
      return address.startsWith("127.");
    }, 2);
    const answers = [
      "127.0.0.1",
      "127.0.0.1",
      "10.0.0.1",
      "127.0.0.1",
      "10.0.0.2",
      "127.0.0.1",
      undefined,
    ].map(remembered);
    expect(answers).toEqual([true, true, false, true, false, true, false]);
    // The third address made it start over: 127.0.0.1 was asked again after that.
    expect(asked).toEqual(["127.0.0.1", "10.0.0.1", "10.0.0.2", "127.0.0.1"]);
  });

  it.each([
    ["127.0.0.1", true],
    ["localhost", true],
    ["::1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.2", false],
  ])("listen host %s is loopback: %s", (host, loopback) => {
    expect(SOCKET_LOOPBACK_POLICY.isLoopbackHost(host)).toBe(loopback);
  });
});

describe("bearer tokens", () => {
  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["BEARER   abc  ", "abc"],
    ["Basic abc", undefined],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    ["abc", undefined],
    [undefined, undefined],
  ])("%j → %j", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("authenticateClient", () => {
  const ask = (remoteAddress: string, authorization?: string, policy = SOCKET_LOOPBACK_POLICY) => {
    const keys = fakeKeys();
    return { result: authenticateClient(keys, policy, { remoteAddress, authorization }), asked: keys.asked };
  };

  it("lets a loopback caller in without a key, as local", () => {
    expect(ask("127.0.0.1")).toEqual({ result: { ok: true, requester: "local" }, asked: [] });
    expect(ask("::1").result).toEqual({ ok: true, requester: "local" });
  });

  it("ignores a placeholder bearer on loopback (OpenAI clients always send one)", () => {
    expect(ask("127.0.0.1", "Bearer unused")).toEqual({
      result: { ok: true, requester: "local" },
      asked: [],
    });
    expect(ask("127.0.0.1", "Basic dXNlcjpwdw==").result).toEqual({ ok: true, requester: "local" });
  });

  it("names a loopback caller by its key, and refuses a PAIR key that fails even there", () => {
    expect(ask("127.0.0.1", `Bearer ${GOOD}`).result).toEqual({ ok: true, requester: "laptop" });
    expect(ask("127.0.0.1", `Bearer ${REVOKED}`).result).toEqual({ ok: false, reason: "revoked" });
  });

  it("asks a remote caller for a key", () => {
    expect(ask("192.168.1.20")).toEqual({ result: { ok: false, reason: "missing" }, asked: [] });
    expect(ask("192.168.1.20", "Basic dXNlcjpwdw==").result).toEqual({ ok: false, reason: "missing" });
    expect(ask("192.168.1.20", "Bearer unused").result).toEqual({ ok: false, reason: "malformed" });
    expect(ask("192.168.1.20", `Bearer ${REVOKED}`).result).toEqual({ ok: false, reason: "revoked" });
    expect(ask("192.168.1.20", `Bearer ${GOOD}`).result).toEqual({ ok: true, requester: "laptop" });
  });

  it("follows the injected policy, whatever the address", () => {
    expect(ask("127.0.0.1", undefined, everyoneRemote).result).toEqual({ ok: false, reason: "missing" });
    expect(ask("127.0.0.1", `Bearer ${GOOD}`, everyoneRemote).result).toEqual({
      ok: true,
      requester: "laptop",
    });
  });
});

describe("the 401", () => {
  it("speaks OpenAI's envelope with code unauthorized", () => {
    const reply = unauthorizedReply("openai", "missing");
    expect(reply.status).toBe(401);
    expect(reply.headers).toEqual({ "www-authenticate": 'Bearer realm="pair"' });
    expect(reply.body).toEqual({
      error: {
        message: expect.stringMatching(/Authorization: Bearer <key>.*pair apikey create ID/) as string,
        type: "authentication_error",
        param: null,
        code: "unauthorized",
      },
    });
  });

  it("speaks Ollama's shape, and tells a refused key from a missing one", () => {
    const reply = unauthorizedReply("ollama", "revoked");
    expect(reply.headers["www-authenticate"]).toBe('Bearer realm="pair", error="invalid_token"');
    expect(reply.body).toEqual({
      error: expect.stringMatching(/not accepted: it is unknown, revoked or mistyped/) as string,
      code: "unauthorized",
    });
  });

  it("says the same for every refused key, so a caller learns nothing about ids", () => {
    const bodies = (["malformed", "unknown", "mismatch", "revoked", "unavailable"] as const).map((r) =>
      JSON.stringify(unauthorizedReply("openai", r)),
    );
    expect(new Set(bodies).size).toBe(1);
  });
});
