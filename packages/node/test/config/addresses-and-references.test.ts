// The small parsers other commands reuse (pair rented attach, pair credential): host:port, loopback,
// outbound URLs, credential references, and the "did you mean" of unknown keys.
import { describe, expect, test } from "vitest";
import { closestKey } from "../../src/config/closest-key.js";
import {
  formatCredentialRef,
  formatHostPort,
  isLoopbackHost,
  parseCredentialRef,
  parseHostPort,
  parseOutboundUrl,
} from "../../src/config/index.js";

describe("isLoopbackHost", () => {
  test.each(["127.0.0.1", "127.255.0.9", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"])(
    "%s is loopback",
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );
  test.each(["0.0.0.0", "::", "128.0.0.1", "10.0.0.1", "localhost.example", "my-localhost", "::2", ""])(
    "%s is not",
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );
});

describe("parseHostPort", () => {
  test.each([
    ["127.0.0.1:11434", { host: "127.0.0.1", port: 11434 }],
    ["[::1]:1", { host: "::1", port: 1 }],
    ["node-b.lan:65535", { host: "node-b.lan", port: 65535 }],
  ])("%s", (text, value) => {
    expect(parseHostPort(text)).toEqual({ ok: true, value });
    expect(formatHostPort(value)).toBe(text);
  });
  test.each([
    "127.0.0.1",
    ":80",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "127.0.0.1:+80",
    "[node]:80",
    "-a:1",
    "a_b:1",
  ])("%s is refused", (text) =>
    expect(parseHostPort(text)).toMatchObject({ ok: false, code: "invalid_value" }),
  );
});

describe("parseOutboundUrl", () => {
  test("https anywhere, http only to loopback", () => {
    expect(parseOutboundUrl("https://x.example/v1/")).toEqual({ ok: true, value: "https://x.example/v1" });
    expect(parseOutboundUrl("http://localhost:1/")).toEqual({ ok: true, value: "http://localhost:1" });
    expect(parseOutboundUrl("http://x.example/v1")).toMatchObject({ ok: false, code: "insecure_url" });
  });
  test.each([
    ["ws://127.0.0.1/", "invalid_value"],
    ["https://u:p@x.example", "literal_credential"],
    ["https://x.example/#frag", "invalid_value"],
    ["/relative", "invalid_value"],
  ])("%s → %s", (text, code) => {
    expect(parseOutboundUrl(text)).toMatchObject({ ok: false, code });
  });
});

describe("credential references", () => {
  test("SERVICE/ACCOUNT, and a bare ACCOUNT in service pair", () => {
    expect(parseCredentialRef("os-credential-store:pair/hf")).toEqual({
      ok: true,
      ref: { service: "pair", account: "hf" },
    });
    expect(parseCredentialRef("os-credential-store:hf")).toEqual({
      ok: true,
      ref: { service: "pair", account: "hf" },
    });
    expect(parseCredentialRef("os-credential-store:runpod/me@example.com")).toEqual({
      ok: true,
      ref: { service: "runpod", account: "me@example.com" },
    });
    expect(formatCredentialRef({ service: "pair", account: "hf" })).toBe("os-credential-store:pair/hf");
  });
  test.each([
    ["hf_secret", "literal_credential"],
    ["OS-CREDENTIAL-STORE:pair/hf", "literal_credential"],
    ["os-credential-store:", "invalid_value"],
    ["os-credential-store:/hf", "invalid_value"],
    ["os-credential-store:pair/", "invalid_value"],
    ["os-credential-store:a/b/c", "invalid_value"],
    ["os-credential-store:pair/has space", "invalid_value"],
  ])("%s → %s", (text, code) => {
    const result = parseCredentialRef(text);
    expect(result).toMatchObject({ ok: false, code });
    const given = text.replace(/^os-credential-store:/, "");
    if (given !== "") expect(result.ok ? "" : result.message).not.toContain(given);
  });
});

describe("closestKey", () => {
  test.each([
    ["lisen", "listen"],
    ["rented_node", "rented_nodes"],
    ["cold_start", "cold_start_s"],
    ["Max_Concurrent", "max_concurrent"],
    ["usd_per_days", "usd_per_day"],
  ])("%s → %s", (unknown, known) => {
    expect(
      closestKey(unknown, [
        "listen",
        "rented_nodes",
        "cold_start_s",
        "max_concurrent",
        "usd_per_day",
        "usd_per_month",
      ]),
    ).toBe(known);
  });
  test("nothing close: no suggestion", () => {
    expect(closestKey("verify", ["extra_ca_file"])).toBeUndefined();
  });
});
