/**
 * `host:port` addresses: a peer's recorded address, a static `peers` entry, the node's listen
 * addresses (config reads them with these). Results are unions, never throws; no message echoes the
 * text it was given.
 * Must not know: YAML, sockets, DNS.
 */

import { isIP, isIPv4, isIPv6 } from "node:net";

/** A `host:port` pair. IPv6 hosts are kept without brackets (`::1`). */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export type HostPortResult =
  | { readonly ok: true; readonly value: HostPort }
  | { readonly ok: false; readonly code: "invalid_value"; readonly message: string };

const HOST_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** A DNS name; its last label is not all digits (so `999.1.1.1` is a bad address, not a name). */
function isHostName(host: string): boolean {
  const labels = host.split(".");
  const last = labels[labels.length - 1] ?? "";
  return host.length <= 253 && labels.every((label) => HOST_LABEL.test(label)) && !/^[0-9]+$/.test(last);
}

const HOST_PORT_HINT = 'expected "host:port" with a port from 1 to 65535 (IPv6 as "[::1]:11434", quoted)';

/** `127.0.0.1:11434`, `[::1]:11434`, `node-b.lan:14323`. */
export function parseHostPort(text: string): HostPortResult {
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
