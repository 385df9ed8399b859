/**
 * Membership: which paired peers are up, and what each serves. For every active pinned peer with a
 * recorded address, this node fetches `GET /pair/v1/peer/inventory` over mTLS (the pinned peer
 * agent) at start and then every `refreshMs`. A peer that fails, answers wrongly or does not answer
 * within `timeoutMs` is marked down at once and its models dropped; its next good answer brings it
 * back. A peer revoked or unpaired leaves the view at once (the view is read against the trust store
 * every time) and its agent is closed at the next round. Peers without an address (paired before
 * addresses were recorded) are not polled and not shown. Each time a peer fails a poll or is marked
 * down, `onDown` listeners hear of it (forwarding cuts what it relays from a peer gone silent).
 * Must not know: the client API, the scheduler, engines, forwarding.
 */

import { request, type Agent } from "undici";
import {
  createPeerAgent,
  PEER_INVENTORY_PATH,
  SYSTEM_RUNTIME,
  type NodeIdentity,
  type PinnedPeer,
  type Runtime,
} from "@pair/cluster";
import { readRentedPeerViews } from "@pair/sponsor";
import type { PeerInventory } from "./peer-routes.js";

/** Largest inventory answer read from a peer. */
const MAX_INVENTORY_BYTES = 1024 * 1024;

export interface MembershipOptions {
  readonly identity: NodeIdentity;
  /** The trust store (its active peers, read on every round and every view). */
  readonly peers: { active(): readonly PinnedPeer[] };
  /** Time between rounds (default 5 s). */
  readonly refreshMs?: number;
  /** Longest a peer may take to answer, connection included (default 2 s). */
  readonly timeoutMs?: number;
  /** Wall clock, epoch ms (`last_seen`). */
  /** Wall time of the polls and the timer between rounds (default: the system runtime). */
  readonly runtime?: Runtime;
  /** Fetch one peer's inventory (tests replace it); the default asks over mTLS. */
  readonly fetchInventory?: (peer: PinnedPeer, signal: AbortSignal) => Promise<PeerInventory>;
  readonly log?: (line: string) => void;
}

export const DEFAULT_MEMBERSHIP_OPTIONS = Object.freeze({ refreshMs: 5_000, timeoutMs: 2_000 });

/** One peer as the merged views show it. */
export interface MemberView {
  readonly node_id: string;
  readonly name: string;
  readonly address: string;
  readonly state: "up" | "down";
  readonly models: PeerInventory["models"];
  readonly in_flight: number;
  readonly capacity: number;
  /** Rented nodes it sponsors (empty while it is down). */
  readonly rented: PeerInventory["rented"];
  /** When it last answered (ISO 8601), or null if it never did since this node started. */
  readonly last_seen: string | null;
  /**
   * Its wall clock minus this node's at its last answer, in ms (its `generated_at` against the
   * middle of the round trip, so within half of it); null when unknown.
   */
  readonly clock_offset_ms: number | null;
  /** Why it is down, for people. */
  readonly last_error?: string;
}

interface MemberState {
  readonly fingerprint: string;
  readonly address: string;
  readonly agent: Agent | undefined;
  up: boolean;
  inventory: PeerInventory | undefined;
  lastSeenMs: number | undefined;
  clockOffsetMs: number | undefined;
  lastError: string | undefined;
}

export class PeerMembership {
  readonly #o: MembershipOptions;
  readonly #refreshMs: number;
  readonly #timeoutMs: number;
  readonly #runtime: Runtime;
  readonly #members = new Map<string, MemberState>();
  readonly #abort = new AbortController();
  #timer: { cancel(): void } | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;
  readonly #downListeners = new Set<(nodeId: string) => void>();
  /** Bumped on every change of a member's state: `members()` is rebuilt only after one. */
  #version = 0;
  #views:
    | {
        readonly active: readonly PinnedPeer[];
        readonly version: number;
        readonly views: readonly MemberView[];
      }
    | undefined;

  constructor(options: MembershipOptions) {
    const refreshMs = options.refreshMs ?? DEFAULT_MEMBERSHIP_OPTIONS.refreshMs;
    const timeoutMs = options.timeoutMs ?? DEFAULT_MEMBERSHIP_OPTIONS.timeoutMs;
    if (!(Number.isFinite(refreshMs) && refreshMs >= 10)) throw new RangeError("refreshMs must be >= 10");
    if (!(Number.isFinite(timeoutMs) && timeoutMs >= 100)) throw new RangeError("timeoutMs must be >= 100");
    this.#o = options;
    this.#refreshMs = refreshMs;
    this.#timeoutMs = timeoutMs;
    this.#runtime = options.runtime ?? SYSTEM_RUNTIME;
  }

  /** Longest a peer may take to answer a poll (ms). */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Call `listener` with the peer's node id each time a peer fails a poll (every failed poll, not
   * only the first) or is marked down. Returns the unsubscribe.
   */
  onDown(listener: (nodeId: string) => void): () => void {
    this.#downListeners.add(listener);
    return () => void this.#downListeners.delete(listener);
  }

  /** The first round, then one every `refreshMs` until `stop()`. */
  async start(): Promise<void> {
    await this.refresh();
  }

  /** One round now (joins the round under way, if any); schedules the next. */
  refresh(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#round ??= this.#runRound().finally(() => {
      this.#round = undefined;
      this.#schedule();
    });
    return this.#round;
  }

  /** Ask one peer now (its notice said its inventory changed); a no-op for an unknown peer. */
  async poke(nodeId: string): Promise<void> {
    if (this.#stopped) return;
    const peer = this.#o.peers.active().find((p) => p.node_id === nodeId && p.address !== undefined);
    if (peer !== undefined) await this.#poll(peer);
  }

  /** Take a peer out of the view now (it failed a request, or said it is leaving); its next good answer brings it back. */
  markDown(nodeId: string, why: string): void {
    const state = this.#members.get(nodeId);
    if (state === undefined || this.#stopped) return;
    const peer = this.#o.peers.active().find((p) => p.node_id === nodeId);
    if (state.up) this.#o.log?.(`peer ${peer?.name ?? nodeId} (${nodeId}): down (${why})`);
    state.up = false;
    state.inventory = undefined;
    state.lastError = why;
    this.#version += 1;
    this.#tellDown(nodeId);
  }

  #tellDown(nodeId: string): void {
    for (const listener of [...this.#downListeners]) listener(nodeId);
  }

  /**
   * Active pinned peers with an address, in pinning order, as last seen. Built again only when a
   * member's state or the trust store's active peers changed (forwarding asks on every request).
   */
  members(): readonly MemberView[] {
    const active = this.#o.peers.active();
    const cached = this.#views;
    if (cached !== undefined && cached.active === active && cached.version === this.#version)
      return cached.views;
    const views = Object.freeze(this.#buildViews(active));
    this.#views = { active, version: this.#version, views };
    return views;
  }

  #buildViews(active: readonly PinnedPeer[]): MemberView[] {
    const views: MemberView[] = [];
    for (const peer of active) {
      if (peer.address === undefined) continue;
      const state = this.#members.get(peer.node_id);
      const current = state !== undefined && state.fingerprint === peer.fingerprint ? state : undefined;
      const up = current?.up === true && current.inventory !== undefined;
      const inv = up ? current.inventory : undefined;
      const lastError = current === undefined ? "not asked yet" : current.lastError;
      views.push({
        node_id: peer.node_id,
        name: peer.name,
        address: peer.address,
        state: up ? "up" : "down",
        models: inv?.models ?? [],
        in_flight: inv?.in_flight ?? 0,
        capacity: inv?.capacity ?? 0,
        rented: inv?.rented ?? [],
        last_seen: current?.lastSeenMs === undefined ? null : new Date(current.lastSeenMs).toISOString(),
        clock_offset_ms: current?.clockOffsetMs ?? null,
        ...(up || lastError === undefined ? {} : { last_error: lastError }),
      });
    }
    return views;
  }

  /** Cancel the timer and any fetch under way; close every agent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#abort.abort();
    await this.#round?.catch(() => undefined);
    const agents = [...this.#members.values()].flatMap((m) => (m.agent === undefined ? [] : [m.agent]));
    this.#members.clear();
    this.#version += 1;
    await Promise.all(agents.map((a) => a.destroy().catch(() => undefined)));
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer?.cancel();
    this.#timer = this.#runtime.timers.after(() => {
      this.#timer = undefined;
      void this.refresh();
    }, this.#refreshMs);
  }

  async #runRound(): Promise<void> {
    const active = this.#o.peers.active().filter((p) => p.address !== undefined);
    const keep = new Set(active.map((p) => p.node_id));
    for (const [id, state] of this.#members)
      if (!keep.has(id)) {
        this.#members.delete(id);
        this.#version += 1;
        void state.agent?.destroy().catch(() => undefined);
      }
    await Promise.all(active.map((peer) => this.#poll(peer)));
  }

  #stateOf(peer: PinnedPeer & { address: string }): MemberState {
    const known = this.#members.get(peer.node_id);
    if (known !== undefined && known.fingerprint === peer.fingerprint && known.address === peer.address)
      return known;
    void known?.agent?.destroy().catch(() => undefined);
    const agent =
      this.#o.fetchInventory === undefined
        ? createPeerAgent({
            identity: this.#o.identity,
            peer,
            limits: {
              connectTimeoutMs: this.#timeoutMs,
              headersTimeoutMs: this.#timeoutMs,
              bodyTimeoutMs: this.#timeoutMs,
              maxConnections: 2,
            },
          })
        : undefined;
    const state: MemberState = {
      fingerprint: peer.fingerprint,
      address: peer.address,
      agent,
      up: false,
      inventory: undefined,
      lastSeenMs: known?.lastSeenMs,
      clockOffsetMs: known?.clockOffsetMs,
      lastError: undefined,
    };
    this.#members.set(peer.node_id, state);
    this.#version += 1;
    return state;
  }

  async #poll(peer: PinnedPeer): Promise<void> {
    if (peer.address === undefined) return;
    const state = this.#stateOf({ ...peer, address: peer.address });
    const signal = AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#timeoutMs)]);
    const sentMs = this.#runtime.clock.now().wallMs;
    try {
      const inventory =
        this.#o.fetchInventory === undefined
          ? await fetchOverMtls(state, signal)
          : await this.#o.fetchInventory(peer, signal);
      if (inventory.node_id !== peer.node_id)
        throw new Error(`answered as node ${inventory.node_id}, not ${peer.node_id}`);
      if (this.#members.get(peer.node_id) !== state) return; // unpaired or re-pinned meanwhile
      if (!state.up) this.#o.log?.(`peer ${peer.name} (${peer.node_id}): up`);
      state.up = true;
      state.inventory = inventory;
      state.lastSeenMs = this.#runtime.clock.now().wallMs;
      state.clockOffsetMs = clockOffsetMs(inventory.generated_at, sentMs, state.lastSeenMs);
      state.lastError = undefined;
      this.#version += 1;
    } catch (cause) {
      if (this.#stopped || this.#members.get(peer.node_id) !== state) return;
      const why = describe(cause, this.#timeoutMs);
      if (state.up) this.#o.log?.(`peer ${peer.name} (${peer.node_id}): down (${why})`);
      state.up = false;
      state.inventory = undefined;
      state.lastError = why;
      this.#version += 1;
      this.#tellDown(peer.node_id);
    }
  }
}

async function fetchOverMtls(state: MemberState, signal: AbortSignal): Promise<PeerInventory> {
  if (state.agent === undefined) throw new Error("no agent");
  const res = await request(`https://${state.address}${PEER_INVENTORY_PATH}`, {
    dispatcher: state.agent,
    signal,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_INVENTORY_BYTES) throw new Error(`an inventory over ${MAX_INVENTORY_BYTES} bytes`);
    chunks.push(chunk);
  }
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} for ${PEER_INVENTORY_PATH}`);
  return readInventory(JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown);
}

/** The peer's clock (`generatedAt`) minus ours at the middle of the round trip; undefined when unknown. */
export function clockOffsetMs(generatedAt: string, sentMs: number, heardMs: number): number | undefined {
  const theirs = Date.parse(generatedAt);
  return Number.isNaN(theirs) ? undefined : Math.round(theirs - (sentMs + heardMs) / 2);
}

/** A peer's answer, checked field by field (a wrong one counts as no answer). */
export function readInventory(json: unknown): PeerInventory {
  const bad = (what: string): Error => new Error(`not an inventory: ${what}`);
  if (typeof json !== "object" || json === null) throw bad("not an object");
  const o = json as Record<string, unknown>;
  if (typeof o["node_id"] !== "string" || typeof o["name"] !== "string") throw bad("node_id, name");
  const count = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
  if (!count(o["in_flight"]) || !count(o["capacity"])) throw bad("in_flight, capacity");
  if (!Array.isArray(o["models"]) || o["models"].length > 10_000) throw bad("models");
  const models = (o["models"] as unknown[]).map((m) => {
    const r = (typeof m === "object" && m !== null ? m : {}) as Record<string, unknown>;
    if (typeof r["model"] !== "string" || r["model"].length > 512 || !count(r["engines"]))
      throw bad("models[]");
    const window = r["context_window"];
    return {
      model: r["model"],
      engines: r["engines"],
      // An older peer publishes none; a malformed one counts as unknown.
      ...(typeof window === "number" && Number.isSafeInteger(window) && window > 0
        ? { context_window: window }
        : {}),
    };
  });
  return {
    node_id: o["node_id"],
    name: o["name"],
    models,
    in_flight: o["in_flight"],
    capacity: o["capacity"],
    rented: readRentedPeerViews(o["rented"]),
    generated_at: typeof o["generated_at"] === "string" ? o["generated_at"] : "",
  };
}

function describe(cause: unknown, timeoutMs: number): string {
  if (cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError"))
    return `no answer within ${timeoutMs} ms`;
  const code = (cause as { code?: unknown }).code;
  if (code === "ECONNREFUSED") return "connection refused";
  // How a node that unpaired this one answers: it closes the TLS connection, no HTTP is read.
  if (code === "UND_ERR_SOCKET" || code === "ECONNRESET")
    return (
      "it closed the connection before answering: it stopped, or it no longer trusts this node — " +
      "if it unpaired this one, pair again with `pair join`"
    );
  return cause instanceof Error ? cause.message : String(cause);
}
