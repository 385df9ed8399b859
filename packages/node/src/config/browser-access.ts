/**
 * What browsers may reach the client port: the built-in local origins, and the spelling rules of
 * `node.allowed_hosts` (host names a `Host` header may carry besides the local ones) and
 * `node.allowed_origins` / `PAIR_ORIGINS` (origin patterns, `*` matching any run of characters,
 * as OLLAMA_ORIGINS does). Results are unions, never throws; no message echoes the text it was given.
 * Must not know: YAML, sockets, requests (http/front-door.ts matches requests against these).
 */

import { isIP } from "node:net";
import type { Parsed } from "./net-address.js";

/** The environment variable that extends `node.allowed_origins`, comma-separated (like OLLAMA_ORIGINS). */
export const ORIGINS_ENV_VAR = "PAIR_ORIGINS";

/**
 * Origins a browser app on this machine or in a desktop shell has: http(s) on localhost, 127.0.0.1
 * and [::1] on any port, and the app schemes of Electron, file pages, Tauri and VS Code webviews.
 */
export const DEFAULT_ALLOWED_ORIGINS: readonly string[] = [
  ...["localhost", "127.0.0.1", "[::1]"].flatMap((host) =>
    ["http", "https"].flatMap((scheme) => [`${scheme}://${host}`, `${scheme}://${host}:*`]),
  ),
  "app://*",
  "file://*",
  "tauri://*",
  "vscode-webview://*",
];

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const SCHEME = /^[a-z][a-z0-9+.-]*$/;

/** A host name or address for `node.allowed_hosts`, lowercased: `box.lan`, `*.lan`, `192.168.1.5`, `fe80::1`. */
export function parseAllowedHost(text: string): Parsed<string> {
  const lower = text.trim().toLowerCase().replace(/\.$/, "");
  const bare = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
  if (isIP(bare) !== 0) return { ok: true, value: bare };
  const name = bare.startsWith("*.") ? bare.slice(2) : bare;
  if (name.length > 0 && name.length <= 253 && name.split(".").every((label) => HOST_LABEL.test(label)))
    return { ok: true, value: bare };
  return {
    ok: false,
    code: "invalid_value",
    message: 'expected a host name without port or scheme ("box.lan", "*.lan") or an IP address',
  };
}

/**
 * An origin pattern for `node.allowed_origins` or `PAIR_ORIGINS`, lowercased: `*` (any origin),
 * `null` (sandboxed pages; never allowed unless listed), or `scheme://host[:port]` where `*` stands
 * for any run of characters (`http://localhost:*`, `https://*.example.com`, `app://*`).
 */
export function parseOriginPattern(text: string): Parsed<string> {
  const lower = text.trim().toLowerCase();
  if (lower === "*" || lower === "null") return { ok: true, value: lower };
  const sep = lower.indexOf("://");
  const rest = sep < 0 ? "" : lower.slice(sep + 3);
  if (sep > 0 && SCHEME.test(lower.slice(0, sep)) && rest !== "" && !/[/?#\s]/.test(rest))
    return { ok: true, value: lower };
  return {
    ok: false,
    code: "invalid_value",
    message:
      'expected an origin "scheme://host[:port]" without a path ("http://localhost:3000", "https://*.example.com"), or "*"',
  };
}

/** `PAIR_ORIGINS` split into patterns, and the entries (by position, 1-based) that are not origins. */
export function parseOriginsEnv(value: string | undefined): {
  readonly patterns: readonly string[];
  readonly badEntries: readonly number[];
} {
  const patterns: string[] = [];
  const badEntries: number[] = [];
  // OLLAMA_ORIGINS is written with quotes and spaces around it in service files; tolerate the same.
  const entries = (value ?? "").replace(/^["'\s]+|["'\s]+$/g, "").split(",");
  entries.forEach((entry, index) => {
    if (entry.trim() === "") return;
    const parsed = parseOriginPattern(entry);
    if (parsed.ok) patterns.push(parsed.value);
    else badEntries.push(index + 1);
  });
  return { patterns, badEntries };
}
