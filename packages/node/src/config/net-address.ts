/**
 * Addresses in config: loopback detection, and the outbound URL rule (http or https only; `http://`
 * only to a loopback host; no credentials, query or fragment in a URL). `host:port` listen and peer
 * addresses are read by the cluster's parser, re-exported here. Results are unions, never throws; no message echoes the text it was given.
 * Must not know: YAML, sockets, DNS (a name is loopback only if it is `localhost`).
 */

import { BlockList, isIPv4, isIPv6 } from "node:net";

// `host:port` is the cluster's (peer addresses); config reads its listen and peer addresses with it.
export { formatHostPort, parseHostPort } from "@pair/cluster";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

export const LOOPBACK_HOSTS_TEXT = "127.0.0.0/8, ::1, localhost";

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped 127.x), or `localhost`. Brackets around IPv6 are accepted. */
export function isLoopbackHost(host: string): boolean {
  const bare = stripBrackets(host);
  if (bare.toLowerCase() === "localhost") return true;
  if (isIPv4(bare)) return LOOPBACK.check(bare, "ipv4");
  if (isIPv6(bare)) return LOOPBACK.check(bare, "ipv6");
  return false;
}

export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly code: "invalid_value" | "insecure_url" | "literal_credential";
      readonly message: string;
    };

/**
 * An outbound base URL, normalised to `scheme://host[:port][/path]` without a trailing slash.
 * A URL carrying a user or password is a literal credential.
 */
export function parseOutboundUrl(text: string): Parsed<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, code: "invalid_value", message: "expected an absolute http:// or https:// URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, code: "invalid_value", message: "only http:// and https:// URLs are accepted" };
  }
  if (url.username !== "" || url.password !== "") {
    return {
      ok: false,
      code: "literal_credential",
      message:
        "a literal secret (user or password) in a URL is not accepted; give the URL without it and " +
        "the secret as os-credential-store:SERVICE/ACCOUNT",
    };
  }
  if (url.search !== "" || url.hash !== "") {
    return { ok: false, code: "invalid_value", message: "a base URL takes no query (?…) or fragment (#…)" };
  }
  if (url.hostname === "") {
    return { ok: false, code: "invalid_value", message: "expected an absolute http:// or https:// URL" };
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return {
      ok: false,
      code: "insecure_url",
      message: `http:// is allowed only to a loopback host (${LOOPBACK_HOSTS_TEXT}); use https://`,
    };
  }
  const path = url.pathname.replace(/\/+$/, "");
  return { ok: true, value: `${url.protocol}//${url.host}${path}` };
}
