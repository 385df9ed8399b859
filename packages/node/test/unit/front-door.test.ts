// The front door's decisions over headers alone: Host (DNS rebinding), Origin and Sec-Fetch-Site,
// CORS for allowed origins; and the policy built from config, PAIR_ORIGINS and the machine's name.
import { describe, expect, it } from "vitest";
import { DEFAULT_ALLOWED_ORIGINS, parseOriginsEnv } from "../../src/config/index.js";
import { frontDoorPolicy } from "../../src/http/front-door-policy.js";
import {
  frontDoor,
  hostNameOf,
  type FrontDoorPolicy,
  type FrontDoorRequest,
} from "../../src/http/front-door.js";

const LOOPBACK_LISTEN: FrontDoorPolicy = {
  checkHostOf: "every-caller",
  machineNames: ["ada-laptop", "ada-laptop.local"],
  allowedHosts: ["pair-box.lan", "*.home.arpa"],
  allowedOrigins: [...DEFAULT_ALLOWED_ORIGINS, "https://chat.example.com", "https://*.tools.example"],
};

const request = (over: Partial<FrontDoorRequest> = {}): FrontDoorRequest => ({
  method: "POST",
  host: "127.0.0.1:11434",
  origin: undefined,
  secFetchSite: undefined,
  preflightMethod: undefined,
  preflightHeaders: undefined,
  preflightPrivateNetwork: undefined,
  loopbackCaller: true,
  ...over,
});

const decide = frontDoor(LOOPBACK_LISTEN);
const kindOf = (over: Partial<FrontDoorRequest>, policy = LOOPBACK_LISTEN) => {
  const d = frontDoor(policy)(request(over));
  return d.kind === "refuse" ? d.error.code : d.kind;
};

describe("Host on a loopback listen", () => {
  it.each([
    "127.0.0.1:11434",
    "127.9.8.7",
    "localhost:11434",
    "LOCALHOST",
    "localhost.:11434",
    "chat.localhost:11434",
    "[::1]:11434",
    "[::1]",
    "ada-laptop:11434",
    "Ada-Laptop.local",
    "pair-box.lan:11434",
    "nas.home.arpa",
  ])("admits %s", (host) => expect(kindOf({ host })).toBe("pass"));

  it.each([
    "evil.example:11434",
    "evil.example",
    "127.0.0.1.evil.example",
    "localhost.evil.example",
    "home.arpa",
    "192.168.1.5:11434",
    "[::2]:11434",
    "::1",
    "127.0.0.1:port",
    "[::1",
    "",
  ])("refuses %j with host_refused", (host) => expect(kindOf({ host })).toBe("host_refused"));

  it("refuses before looking at the Origin, on every method", () => {
    for (const method of ["GET", "POST", "OPTIONS", "DELETE"])
      expect(kindOf({ method, host: "evil.example:11434", origin: "http://evil.example:11434" })).toBe(
        "host_refused",
      );
  });

  it("admits a request without Host (HTTP/1.0: no browser sends one)", () =>
    expect(kindOf({ host: undefined })).toBe("pass"));

  it("reads host names from Host headers", () => {
    expect(hostNameOf("[::1]:80")).toBe("::1");
    expect(hostNameOf("Box.LAN.")).toBe("box.lan");
    expect(hostNameOf("[fe80::1]x")).toBeUndefined();
    expect(hostNameOf("[evil.example]")).toBeUndefined();
  });
});

describe("Host on a listen beyond loopback", () => {
  const lan: FrontDoorPolicy = { ...LOOPBACK_LISTEN, checkHostOf: "loopback-callers" };

  it("admits any Host from another machine (those callers need an API key)", () => {
    expect(kindOf({ host: "192.168.1.5:11434", loopbackCaller: false }, lan)).toBe("pass");
    expect(kindOf({ host: "gpu-box.lan:11434", loopbackCaller: false }, lan)).toBe("pass");
  });

  it("still refuses a foreign name from this machine (no key needed there), but admits its addresses", () => {
    expect(kindOf({ host: "evil.example:11434", loopbackCaller: true }, lan)).toBe("host_refused");
    expect(kindOf({ host: "192.168.1.5:11434", loopbackCaller: true }, lan)).toBe("pass");
    expect(kindOf({ host: "[fe80::1]:11434", loopbackCaller: true }, lan)).toBe("pass");
  });
});

describe("Origin", () => {
  it.each([
    "http://localhost:5173",
    "http://localhost",
    "https://127.0.0.1:8443",
    "http://[::1]:3000",
    "app://-",
    "file://",
    "tauri://localhost",
    "vscode-webview://1abc2def",
    "https://chat.example.com",
    "HTTPS://Chat.Example.com",
    "https://a.tools.example",
  ])("admits %s", (origin) => expect(kindOf({ origin, secFetchSite: "cross-site" })).toBe("pass"));

  it.each([
    "https://evil.example",
    "http://localhost.evil.example",
    "http://127.0.0.1.evil.example:11434",
    "https://chat.example.com.evil.example",
    "null",
    "chrome-extension://abcdef",
    "http://192.168.1.5:3000",
  ])("refuses %s with origin_refused", (origin) => expect(kindOf({ origin })).toBe("origin_refused"));

  it("admits the node's own page under an admitted Host (the dashboard by the machine's name)", () => {
    expect(kindOf({ host: "ada-laptop:11434", origin: "http://ada-laptop:11434" })).toBe("pass");
    expect(kindOf({ host: "pair-box.lan:11434", origin: "http://pair-box.lan:11434" })).toBe("pass");
    expect(kindOf({ host: "pair-box.lan:11434", origin: "http://pair-box.lan:3000" })).toBe("origin_refused");
  });

  it("refuses Sec-Fetch-Site: cross-site without an Origin; same-site, same-origin and none pass", () => {
    expect(kindOf({ secFetchSite: "cross-site" })).toBe("origin_refused");
    expect(kindOf({ secFetchSite: "Cross-Site" })).toBe("origin_refused");
    for (const site of ["same-origin", "same-site", "none", undefined])
      expect(kindOf({ secFetchSite: site })).toBe("pass");
  });

  it('"*" admits every origin, as OLLAMA_ORIGINS=* does', () => {
    const all: FrontDoorPolicy = { ...LOOPBACK_LISTEN, allowedOrigins: ["*"] };
    expect(kindOf({ origin: "https://evil.example" }, all)).toBe("pass");
    expect(kindOf({ origin: "https://evil.example", host: "evil.example" }, all)).toBe("host_refused");
  });

  it("answers an allowed origin with CORS headers, and a request without Origin with none", () => {
    const d = decide(request({ origin: "http://localhost:5173" }));
    expect(d).toEqual({
      kind: "pass",
      headers: {
        "access-control-allow-origin": "http://localhost:5173",
        "access-control-expose-headers": expect.stringContaining("x-pair-served-by") as string,
        vary: "Origin",
      },
    });
    expect(decide(request())).toEqual({ kind: "pass", headers: {} });
  });
});

describe("preflight", () => {
  it("is answered for an allowed origin, with the methods and the headers it asked for", () => {
    const d = decide(
      request({
        method: "OPTIONS",
        origin: "http://localhost:5173",
        preflightMethod: "POST",
        preflightHeaders: "Content-Type, Authorization, X-Stainless-OS, bad header, x-a\r\nb",
        preflightPrivateNetwork: "true",
      }),
    );
    expect(d.kind).toBe("preflight");
    if (d.kind !== "preflight") return;
    expect(d.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    expect(d.headers["access-control-allow-methods"]).toContain("POST");
    expect(d.headers["access-control-allow-headers"]).toBe("authorization, content-type, x-stainless-os");
    expect(Number(d.headers["access-control-max-age"])).toBeGreaterThan(0);
    expect(d.headers["access-control-allow-private-network"]).toBe("true");
    expect(d.headers["vary"]).toContain("Origin");
  });

  it("is refused for another origin; an OPTIONS without Access-Control-Request-Method is no preflight", () => {
    expect(kindOf({ method: "OPTIONS", origin: "https://evil.example", preflightMethod: "POST" })).toBe(
      "origin_refused",
    );
    expect(kindOf({ method: "OPTIONS", origin: "http://localhost:5173" })).toBe("pass");
  });
});

describe("the policy", () => {
  const build = (env: Record<string, string>, listenIsLoopback = true) => {
    const lines: string[] = [];
    const policy = frontDoorPolicy({
      node: { allowedHosts: ["pair-box.lan"], allowedOrigins: ["https://chat.example.com"] },
      listenIsLoopback,
      hostName: "Ada-Laptop",
      env,
      log: (line) => lines.push(line),
    });
    return { policy, lines };
  };

  it("adds the config's and PAIR_ORIGINS' origins to the local defaults", () => {
    const { policy, lines } = build({ PAIR_ORIGINS: " 'https://a.example, https://*.b.example' " });
    expect(policy.allowedOrigins).toEqual([
      ...DEFAULT_ALLOWED_ORIGINS,
      "https://chat.example.com",
      "https://a.example",
      "https://*.b.example",
    ]);
    expect(policy.machineNames).toEqual(["ada-laptop", "ada-laptop.local"]);
    expect(policy.checkHostOf).toBe("every-caller");
    expect(build({}, false).policy.checkHostOf).toBe("loopback-callers");
    expect(lines).toEqual([]);
  });

  it("logs PAIR_ORIGINS entries that are no origin by position, without echoing them", () => {
    const { policy, lines } = build({ PAIR_ORIGINS: "https://ok.example,secret-ish/path,," });
    expect(policy.allowedOrigins).toContain("https://ok.example");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/PAIR_ORIGINS: entry 2 ignored/);
    expect(lines[0]).not.toContain("secret-ish");
  });

  it("splits PAIR_ORIGINS as OLLAMA_ORIGINS is split", () => {
    expect(parseOriginsEnv(undefined)).toEqual({ patterns: [], badEntries: [] });
    expect(parseOriginsEnv("*")).toEqual({ patterns: ["*"], badEntries: [] });
    expect(parseOriginsEnv('"http://x.lan:3000"')).toEqual({
      patterns: ["http://x.lan:3000"],
      badEntries: [],
    });
  });
});
