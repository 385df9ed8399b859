/**
 * Addresses in config: `host:port` listen and peer addresses, loopback detection, and the outbound
 * URL rule (http or https only; `http://` only to a loopback host; no credentials, query or fragment
 * in a URL). Results are unions, never throws; no message echoes the text it was given.
 * Must not know: YAML, sockets, DNS (a name is loopback only if it is `localhost`).
 */

import { BlockList, isIP, isIPv4, isIPv6 } from "node:net";
import type { HostPort } from "./config-types.js";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

const HOST_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

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

/** A DNS name; its last label is not all digits (so `999.1.1.1` is a bad address, not a name). */
function isHostName(host: string): boolean {
  const labels = host.split(".");
  const last = labels[labels.length - 1] ?? "";
  return host.length <= 253 && labels.every((label) => HOST_LABEL.test(label)) && !/^[0-9]+$/.test(last);
}

export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly code: "invalid_value" | "insecure_url" | "literal_credential";
      readonly message: string;
    };

const HOST_PORT_HINT = 'expected "host:port" with a port from 1 to 65535 (IPv6 as "[::1]:11434", quoted)';

/** `127.0.0.1:11434`, `[::1]:11434`, `node-b.lan:14323`. */
export function parseHostPort(text: string): Parsed<HostPort> {
  const colon = text.lastIndexOf(":");
  if (colon <= 0) return { ok: false, code: "invalid_value", message: HOST_PORT_HINT };
  const rawHost = text.slice(0, colon);
  const rawPort = text.slice(colon + 1);
  const port = /^[0-9]{1,5}$/.test(rawPort) ? Number(rawPort) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) return { ok: false, code: "invalid_value", message: HOST_PORT_HINT };
  const bracketed = rawHost.startsWith("[") && rawHost.endsWith("]");
  const host = bracketed ? rawHost.slice(1, -1) : rawHost;
  const valid = bracketed ? isIPv6(host) : isIPv4(host) || (isIP(host) === 0 && isHostName(host));
  if (!valid) return { ok: false, code: "invalid_value", message: HOST_PORT_HINT };
  return { ok: true, value: { host, port } };
}

/** `host:port` as it would be written (`[::1]:11434`). */
export function formatHostPort(address: HostPort): string {
  return isIPv6(address.host) ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

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
