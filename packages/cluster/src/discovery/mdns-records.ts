/**
 * What a PAIR node says on mDNS, and how it reads what others say. A node advertises the DNS-SD
 * service `_pair._tcp` on its cluster port: instance `pair-<node id>`, host `pair-<node id>.local`
 * (not the machine's host name), TXT `id=<node id>`, `name=<node name>`, `v=1`. That is all it
 * reveals: no certificate, no peers, no models. Reading is strict and total: any packet from the
 * network (decoded by dns-packet, so typed `unknown` here) yields sightings and goodbyes, and a record
 * that is malformed in any way is skipped, never thrown on. Everything read is a claim: it names a
 * node, it proves nothing.
 * Must not know: sockets, timers, the trust store, bonjour-service.
 */

import { isPeerName, NODE_ID_LENGTH_CHARS } from "../peers/index.js";

/** The DNS-SD service type, as bonjour-service spells it when publishing (`_pair._tcp`). */
export const MDNS_SERVICE_TYPE = "pair";
/** The name browsed for (PTR). */
export const MDNS_SERVICE_NAME = "_pair._tcp.local";
/** The TXT `v` this version writes and reads. */
export const MDNS_TXT_VERSION = "1";

/** Records read from one packet at most; the rest are ignored. */
const MAX_RECORDS = 256;
/** Services read from one packet at most. */
const MAX_SERVICES = 32;
const NODE_ID = new RegExp(`^[a-z2-7]{${NODE_ID_LENGTH_CHARS}}$`);
const INSTANCE = new RegExp(`^pair-([a-z2-7]{${NODE_ID_LENGTH_CHARS}})\\._pair\\._tcp\\.local$`);

/** What a node advertises about itself. */
export interface MdnsSelf {
  readonly nodeId: string;
  readonly name: string;
  /** The cluster port. */
  readonly port: number;
}

/** What bonjour-service's `publish` takes, for this node. */
export interface MdnsAdvert {
  readonly name: string;
  readonly type: string;
  readonly protocol: "tcp";
  readonly port: number;
  readonly host: string;
  readonly txt: { readonly id: string; readonly name: string; readonly v: string };
  readonly probe: false;
}

/** A node announced itself: `node_id`, `name` and the cluster port, from the packet's source address. */
export interface MdnsSighting {
  readonly nodeId: string;
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

/** A node withdrew its service (TTL 0): the port, when the goodbye carried it. */
export interface MdnsGoodbye {
  readonly nodeId: string;
  readonly host: string;
  readonly port: number | undefined;
}

export interface MdnsReport {
  readonly seen: readonly MdnsSighting[];
  readonly gone: readonly MdnsGoodbye[];
}

/** The instance name of a node's service: unique because the node id is. */
export function mdnsInstanceName(nodeId: string): string {
  return `pair-${nodeId}`;
}

/**
 * The advertisement of `self`. Probing is off: the instance name is derived from this node's key,
 * so a conflict can only be a spoof, and a spoofer must not be able to silence a node.
 */
export function mdnsAdvert(self: MdnsSelf): MdnsAdvert {
  const instance = mdnsInstanceName(self.nodeId);
  return {
    name: instance,
    type: MDNS_SERVICE_TYPE,
    protocol: "tcp",
    port: self.port,
    host: `${instance}.local`,
    txt: { id: self.nodeId, name: self.name, v: MDNS_TXT_VERSION },
    probe: false,
  };
}

interface Rr {
  readonly name: string;
  readonly type: string;
  readonly ttl: number;
  readonly data: unknown;
}

/** The `_pair._tcp` services in one mDNS response; `from` is the packet's source address. */
export function readMdnsResponse(packet: unknown, from: { readonly address: string }): MdnsReport {
  const seen: MdnsSighting[] = [];
  const gone: MdnsGoodbye[] = [];
  const host = from.address;
  if (typeof host !== "string" || host === "" || host.length > 64) return { seen, gone };
  const records = recordsOf(packet);
  const instances = new Map<string, number>();
  for (const rr of records) {
    if (rr.type !== "PTR" || !sameName(rr.name, MDNS_SERVICE_NAME)) continue;
    if (typeof rr.data !== "string" || rr.data.length > 255) continue;
    const key = rr.data.toLowerCase();
    if (!instances.has(key) && instances.size < MAX_SERVICES) instances.set(key, rr.ttl);
  }
  for (const [instance, ttl] of instances) {
    const srv = records.find(
      (rr) => rr.type === "SRV" && sameName(rr.name, instance) && rr.ttl > 0 === ttl > 0,
    );
    const txt = records.find(
      (rr) => rr.type === "TXT" && sameName(rr.name, instance) && rr.ttl > 0 === ttl > 0,
    );
    const port = srv === undefined ? undefined : portOf(srv.data);
    const fields = txt === undefined ? undefined : readTxt(txt.data);
    if (ttl > 0) {
      if (port === undefined || fields === undefined) continue;
      seen.push({ nodeId: fields.id, name: fields.name, host, port });
    } else {
      const nodeId = fields?.id ?? INSTANCE.exec(instance)?.[1];
      if (nodeId !== undefined) gone.push({ nodeId, host, port });
    }
  }
  return { seen, gone };
}

/** The TXT of a PAIR advertisement, or undefined if it is not one this version understands. */
export function readTxt(data: unknown): { readonly id: string; readonly name: string } | undefined {
  if (!Array.isArray(data) || data.length > 32) return undefined;
  const fields = new Map<string, string>();
  for (const item of data as unknown[]) {
    if (!(item instanceof Uint8Array) || item.length === 0 || item.length > 255) continue;
    const text = Buffer.from(item).toString("utf8");
    const eq = text.indexOf("=");
    if (eq <= 0) continue;
    const key = text.slice(0, eq).toLowerCase();
    // RFC 6763 §6.4: only the first occurrence of a key counts.
    if (!fields.has(key)) fields.set(key, text.slice(eq + 1));
  }
  const id = fields.get("id");
  const name = fields.get("name");
  if (fields.get("v") !== MDNS_TXT_VERSION) return undefined;
  if (id === undefined || !NODE_ID.test(id)) return undefined;
  if (name === undefined || !isPeerName(name)) return undefined;
  return { id, name };
}

function recordsOf(packet: unknown): Rr[] {
  if (typeof packet !== "object" || packet === null) return [];
  const { answers, additionals } = packet as { answers?: unknown; additionals?: unknown };
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
  const all = [...list(answers), ...list(additionals)];
  const records: Rr[] = [];
  for (const raw of all.slice(0, MAX_RECORDS)) {
    if (typeof raw !== "object" || raw === null) continue;
    const { name, type, ttl, data } = raw as Record<string, unknown>;
    if (typeof name !== "string" || typeof type !== "string" || name.length > 255) continue;
    if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl < 0) continue;
    records.push({ name, type, ttl, data });
  }
  return records;
}

function portOf(data: unknown): number | undefined {
  const port = typeof data === "object" && data !== null ? (data as { port?: unknown }).port : undefined;
  return typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65_535 ? port : undefined;
}

/** DNS names compare case-insensitively (ASCII). */
function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
