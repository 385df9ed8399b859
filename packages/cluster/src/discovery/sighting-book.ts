/**
 * The sighting book: which node was last seen where, by mDNS or by asking a static peer address,
 * and what that calls for. Pure: times are inputs, nothing here dials, waits or writes.
 * - A sighting of an unpaired node (or of a revoked one) is listed as discovered, not paired.
 * - A sighting with no node id (a static address where none of our pinned peers answered: only its
 *   name is known) is listed too, unless a paired node is recorded at that address (pairing tells
 *   who is there) or a sighting with a node id at that address says more (then it joins that row).
 * - A sighting of a paired node at an address other than the one recorded for it becomes a
 *   `CheckAddress` command, at most once per `recheckMs` for each (node, address): only the caller's
 *   mTLS call with the pinned certificate there can move the recorded address.
 * - A sighting not repeated within `staleMs` is dropped; a goodbye drops it at once.
 * Own sightings (this node's id) are ignored. At most `maxEntries` are kept (the oldest go first).
 * Must not know: mDNS, TLS, sockets, the trust store's file.
 */

import { checkLimit } from "../peers/index.js";

export type SightingSource = "mdns" | "static";

export interface Sighting {
  /** Null when nothing verified names the node (a static address: only its name is known). */
  readonly nodeId: string | null;
  /** The node's name as it was told (absent when it could not be learnt). */
  readonly name: string | undefined;
  /** `HOST:PORT` (`[v6]:PORT`) of its cluster port. */
  readonly address: string;
  readonly via: SightingSource;
}

/** A discovered node as the admin API and `pair peers` show it. */
export interface DiscoveredNode {
  /** Null for a node known only by the name its cluster port gives (a static address). */
  readonly node_id: string | null;
  readonly name: string | null;
  readonly address: string;
  readonly seen_via: readonly SightingSource[];
  /** ISO 8601. */
  readonly last_seen: string;
}

/** What the book needs to know of the trust store: the active pin of a node id, if any. */
export type PinOf = (
  nodeId: string,
) => { readonly fingerprint: string; readonly address: string | undefined } | undefined;

/** Whether a paired node is recorded at this address (`HOST:PORT`). */
export type PinnedAt = (address: string) => boolean;

/** Check, over mTLS with the pinned certificate, whether paired node `nodeId` is at `address`. */
export interface CheckAddress {
  readonly nodeId: string;
  readonly address: string;
  /** The pin the check must present and expect. */
  readonly fingerprint: string;
}

export interface SightingBookLimits {
  /** A sighting not repeated within this long is dropped (per source). */
  readonly staleMs: Readonly<Record<SightingSource, number>>;
  /** Least time between two checks of the same (node, address). */
  readonly recheckMs: number;
  /** Checks one `plan` asks for at most. */
  readonly maxChecksPerPlan: number;
  /** Sightings kept at most. */
  readonly maxEntries: number;
}

export const DEFAULT_SIGHTING_BOOK_LIMITS: SightingBookLimits = Object.freeze({
  staleMs: Object.freeze({ mdns: 300_000, static: 120_000 }),
  recheckMs: 30_000,
  maxChecksPerPlan: 4,
  maxEntries: 256,
});

interface Entry {
  readonly nodeId: string | null;
  readonly address: string;
  name: string | undefined;
  /** When each source last saw it (epoch ms). */
  readonly seen: Map<SightingSource, number>;
}

export class SightingBook {
  readonly #selfId: string;
  readonly #limits: SightingBookLimits;
  readonly #entries = new Map<string, Entry>();
  /** When each (node, address) was last checked. */
  readonly #checked = new Map<string, number>();

  constructor(selfId: string, limits: Partial<SightingBookLimits> = {}) {
    const l = { ...DEFAULT_SIGHTING_BOOK_LIMITS, ...limits };
    checkLimit("staleMs.mdns", l.staleMs.mdns, 100, 86_400_000);
    checkLimit("staleMs.static", l.staleMs.static, 100, 86_400_000);
    checkLimit("recheckMs", l.recheckMs, 10, 86_400_000);
    checkLimit("maxChecksPerPlan", l.maxChecksPerPlan, 1, 64);
    checkLimit("maxEntries", l.maxEntries, 1, 65_536);
    this.#selfId = selfId;
    this.#limits = l;
  }

  /** Record a sighting at `nowMs`. */
  observe(sighting: Sighting, nowMs: number): void {
    if (sighting.nodeId === this.#selfId) return;
    const key = keyOf(sighting.nodeId, sighting.address);
    const known = this.#entries.get(key);
    const entry = known ?? {
      nodeId: sighting.nodeId,
      address: sighting.address,
      name: undefined,
      seen: new Map(),
    };
    if (sighting.name !== undefined) entry.name = sighting.name;
    entry.seen.set(sighting.via, nowMs);
    if (known === undefined) {
      this.#entries.set(key, entry);
      this.#trim();
    }
  }

  /**
   * Forget what `via` saw of `nodeId` (at `address`, or anywhere); with no `nodeId`, whatever `via`
   * saw at `address` (a static address that stopped answering).
   */
  forget(via: SightingSource, match: { readonly nodeId?: string; readonly address?: string }): void {
    for (const [key, entry] of this.#entries) {
      if (match.nodeId !== undefined && entry.nodeId !== match.nodeId) continue;
      if (match.address !== undefined && entry.address !== match.address) continue;
      entry.seen.delete(via);
      if (entry.seen.size === 0) this.#entries.delete(key);
    }
  }

  /** Drop stale sightings, and return the address checks due now (recorded as started). */
  plan(nowMs: number, pinOf: PinOf): CheckAddress[] {
    this.#expire(nowMs);
    const due: (CheckAddress & { readonly lastSeenMs: number })[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.nodeId === null) continue;
      const pin = pinOf(entry.nodeId);
      if (pin === undefined || pin.address === entry.address) continue;
      const last = this.#checked.get(keyOf(entry.nodeId, entry.address));
      if (last !== undefined && nowMs - last < this.#limits.recheckMs) continue;
      due.push({
        nodeId: entry.nodeId,
        address: entry.address,
        fingerprint: pin.fingerprint,
        lastSeenMs: Math.max(...entry.seen.values()),
      });
    }
    const chosen = due
      .sort((a, b) => b.lastSeenMs - a.lastSeenMs)
      .slice(0, this.#limits.maxChecksPerPlan)
      .map(({ nodeId, address, fingerprint }) => ({ nodeId, address, fingerprint }));
    for (const c of chosen) this.#checked.set(keyOf(c.nodeId, c.address), nowMs);
    for (const [key, at] of this.#checked)
      if (nowMs - at >= this.#limits.recheckMs && !this.#entries.has(key)) this.#checked.delete(key);
    return chosen;
  }

  /**
   * Sighted nodes that are not paired (no active pin), most recently seen first. A sighting without
   * a node id is hidden where `pinnedAt` says a paired node is recorded, and joins the row of an
   * unpaired sighting with a node id at the same address.
   */
  discovered(nowMs: number, pinOf: PinOf, pinnedAt: PinnedAt = () => false): DiscoveredNode[] {
    this.#expire(nowMs);
    const entries = [...this.#entries.values()];
    const named = new Map<string, Entry>();
    for (const entry of entries) if (entry.nodeId === null) named.set(entry.address, entry);
    const rows: { row: DiscoveredNode; last: number }[] = [];
    const joined = new Set<string>();
    for (const entry of entries) {
      if (entry.nodeId === null || pinOf(entry.nodeId) !== undefined) continue;
      const extra = named.get(entry.address);
      if (extra !== undefined) joined.add(entry.address);
      const seen = new Map(entry.seen);
      for (const [via, at] of extra?.seen ?? []) seen.set(via, Math.max(at, seen.get(via) ?? at));
      rows.push(row(entry.nodeId, entry.name ?? extra?.name, entry.address, seen));
    }
    for (const entry of named.values())
      if (!joined.has(entry.address) && !pinnedAt(entry.address))
        rows.push(row(null, entry.name, entry.address, entry.seen));
    return rows
      .sort((a, b) => b.last - a.last || a.row.address.localeCompare(b.row.address))
      .map(({ row: r }) => r);
  }

  /** How many (node, address) sightings are held. */
  get size(): number {
    return this.#entries.size;
  }

  #expire(nowMs: number): void {
    for (const [key, entry] of this.#entries) {
      for (const [via, at] of entry.seen) if (nowMs - at >= this.#limits.staleMs[via]) entry.seen.delete(via);
      if (entry.seen.size === 0) this.#entries.delete(key);
    }
  }

  #trim(): void {
    while (this.#entries.size > this.#limits.maxEntries) {
      let oldest: [string, number] | undefined;
      for (const [key, entry] of this.#entries) {
        const last = Math.max(...entry.seen.values());
        if (oldest === undefined || last < oldest[1]) oldest = [key, last];
      }
      if (oldest === undefined) return;
      this.#entries.delete(oldest[0]);
    }
  }
}

function keyOf(nodeId: string | null, address: string): string {
  return `${nodeId ?? "?"}@${address}`;
}

function row(
  nodeId: string | null,
  name: string | undefined,
  address: string,
  seen: ReadonlyMap<SightingSource, number>,
): { row: DiscoveredNode; last: number } {
  const last = Math.max(...seen.values());
  return {
    row: {
      node_id: nodeId,
      name: name ?? null,
      address,
      seen_via: [...seen.keys()].sort(),
      last_seen: new Date(last).toISOString(),
    },
    last,
  };
}
