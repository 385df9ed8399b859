/**
 * Links to paired peers for forwarding: per peer, one pinned mTLS HTTP/2 connection that carries
 * every forwarded stream (peer-h2.ts in @pair/cluster; no body timeout: a generation may pause), and a pinned
 * HTTP/1.1 agent for notices and for a peer that does not speak HTTP/2, made when first needed and
 * dropped when the peer is unpaired, re-pinned or moves. It answers the forwarder's questions — which up peers serve a model, least
 * loaded first, and how to reach one — from the membership view, tells a forwarded request when its
 * peer goes down (`watchDown`), and carries this node's notices to its peers (`changed` when its
 * inventory changes, `leaving` when it shuts down).
 * Must not know: dialects, the scheduler, the client API, how a forwarded request is relayed.
 */

import { request, type Agent, type Dispatcher } from "undici";
import {
  createPeerAgent,
  PEER_CHANGED_PATH,
  PEER_ROUTE_PREFIX,
  peerSecureContext,
  PeerH2Dispatcher,
  type NodeIdentity,
  type PinnedPeer,
} from "@pair/cluster";
import type { RoutingUse } from "../config/index.js";
import type { MemberView, PeerMembership } from "./peer-membership.js";
import type { PeerChange } from "./peer-routes.js";

export interface PeerLinksOptions {
  readonly identity: NodeIdentity;
  readonly peers: { active(): readonly PinnedPeer[] };
  readonly membership: PeerMembership;
  /** Longest wait for a forwarded request's first byte (default 120 s). */
  readonly firstByteTimeoutMs?: number;
  /** Longest a notice may take (default 2 s). */
  readonly noticeTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** A peer a request can be forwarded to (the shape server/forward.ts asks for). */
export interface PeerLinkTarget {
  readonly nodeId: string;
  readonly name: string;
  readonly maxConcurrent: number;
  /** context: by model, the largest window the peer publishes. */
  readonly contextTokens?: ReadonlyMap<string, number>;
}

interface Link {
  readonly fingerprint: string;
  readonly address: string;
  /** HTTP/1.1: notices, and forwarding to a peer that does not speak HTTP/2. */
  readonly agent: Agent;
  /** HTTP/2 for forwarded requests; destroying it destroys `agent` too. */
  readonly forward: PeerH2Dispatcher;
  /** What `link()` answers for it. */
  readonly route: { readonly dispatcher: Dispatcher; readonly baseUrl: string };
}

export const DEFAULT_PEER_FIRST_BYTE_TIMEOUT_MS = 120_000;
/** Connections to one peer at once: the peer agent's ceiling, a last guard behind the scheduler. */
export const PEER_LINK_MAX_CONNECTIONS = 4_096;
/** A link's HTTP/2 connection with no stream and no traffic this long is closed (below the peer's 65 s). */
const PEER_LINK_IDLE_MS = 30_000;

export class PeerLinks {
  readonly #o: PeerLinksOptions;
  readonly #links = new Map<string, Link>();
  readonly firstByteTimeoutMs: number;
  #closed = false;
  /** Up peers serving each model, least loaded first, for one membership view (rebuilt with it). */
  #serving:
    { readonly of: readonly MemberView[]; readonly byModel: Map<string, PeerLinkTarget[]> } | undefined;
  /** The trust store's active peers when the links were last checked against them. */
  #checkedAgainst: readonly PinnedPeer[] | undefined;
  /** Requests under way to each peer that want to hear when it goes down. */
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #unsubscribe: () => void;
  /** The trust store's active peers by node id, for one list of them (rebuilt when it changes). */
  #activeById: { readonly of: readonly PinnedPeer[]; readonly byId: Map<string, PinnedPeer> } | undefined;

  constructor(options: PeerLinksOptions) {
    this.#o = options;
    this.firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_PEER_FIRST_BYTE_TIMEOUT_MS;
    this.#unsubscribe = options.membership.onDown((nodeId) => {
      const watchers = this.#watchers.get(nodeId);
      if (watchers !== undefined) for (const watcher of [...watchers]) watcher();
    });
  }

  /**
   * How long a request to a peer may have heard nothing from it when the peer goes down before it
   * is given up: the membership poll's timeout (the window in which the peer failed to answer).
   */
  get silentMs(): number {
    return this.#o.membership.timeoutMs;
  }

  /** Call `onDown` each time the peer fails a poll or is marked down, until the returned stop is called. */
  watchDown(target: Pick<PeerLinkTarget, "nodeId">, onDown: () => void): () => void {
    let watchers = this.#watchers.get(target.nodeId);
    if (watchers === undefined) this.#watchers.set(target.nodeId, (watchers = new Set()));
    const set = watchers;
    set.add(onDown);
    return () => {
      set.delete(onDown);
      if (set.size === 0 && this.#watchers.get(target.nodeId) === set) this.#watchers.delete(target.nodeId);
    };
  }

  /**
   * Up peers serving `model`, least loaded first (their own in-flight over capacity), from an index
   * built once per membership view rather than per request.
   */
  serving(model: string): readonly PeerLinkTarget[] {
    const members = this.#o.membership.members();
    if (this.#serving?.of !== members) this.#serving = { of: members, byModel: servingIndex(members) };
    return this.#serving.byModel.get(model) ?? [];
  }

  /** Rented nodes serving `model` that up peers sponsor, as the sponsors publish them. */
  sponsoring(model: string): {
    peer: PeerLinkTarget;
    name: string;
    shared: boolean;
    eligible: boolean;
    reason: string | null;
    policy: RoutingUse;
    state: string;
    usdPerHour: number | null;
    usdPerMtok: number | null;
    contextTokens?: number;
  }[] {
    return this.#o.membership
      .members()
      .filter((m) => m.state === "up")
      .flatMap((m) =>
        m.rented
          .filter((r) => r.models.includes(model))
          .map((r) => ({
            // The sponsor relays to the rented node: its own engines' capacity says nothing of it.
            peer: { nodeId: m.node_id, name: m.name, maxConcurrent: 64 },
            name: r.name,
            shared: r.shared,
            eligible: r.eligible,
            reason: r.reason,
            policy: r.policy,
            state: r.state,
            usdPerHour: r.usd_per_hour,
            usdPerMtok: r.usd_per_mtok,
            // context: its window for this model, as the sponsor publishes it
            ...(r.context_windows?.[model] === undefined ? {} : { contextTokens: r.context_windows[model] }),
          })),
      );
  }

  /** The forwarding dispatcher and route base URL for a peer still trusted, with an address. */
  link(
    target: Pick<PeerLinkTarget, "nodeId">,
  ): { readonly dispatcher: Dispatcher; readonly baseUrl: string } | undefined {
    const peer = this.#activePeer(target.nodeId);
    if (peer?.address === undefined || this.#closed) return undefined;
    return this.#linkOf(peer, peer.address).route;
  }

  /** The active peer with this node id: a map lookup, the map rebuilt only when the trust store changes. */
  #activePeer(nodeId: string): PinnedPeer | undefined {
    const active = this.#o.peers.active();
    if (this.#activeById?.of !== active)
      this.#activeById = { of: active, byId: new Map(active.map((p) => [p.node_id, p])) };
    return this.#activeById.byId.get(nodeId);
  }

  markDown(target: Pick<PeerLinkTarget, "nodeId">, why: string): void {
    this.#o.membership.markDown(target.nodeId, why);
  }

  /** Tell every trusted peer with an address; bounded by the notice timeout, never throws. */
  async notify(change: PeerChange): Promise<void> {
    const timeoutMs = this.#o.noticeTimeoutMs ?? 2_000;
    const body = JSON.stringify({ state: change });
    await Promise.all(
      this.#o.peers.active().map(async (peer) => {
        if (peer.address === undefined || this.#closed) return;
        const link = this.#linkOf(peer, peer.address);
        try {
          const res = await request(`https://${link.address}${PEER_CHANGED_PATH}`, {
            method: "POST",
            dispatcher: link.agent,
            headers: { "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(timeoutMs),
          });
          await res.body.dump();
        } catch (cause) {
          this.#o.log?.(`peer ${peer.name}: could not tell it "${change}": ${(cause as Error).message}`);
        }
      }),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    const links = [...this.#links.values()].map((l) => l.forward);
    this.#links.clear();
    await Promise.all(links.map((l) => l.destroy().catch(() => undefined)));
  }

  #linkOf(peer: PinnedPeer, address: string): Link {
    // Forget links to peers no longer trusted (unpaired, re-pinned, moved): checked again whenever
    // the trust store's active peers are not the ones last checked against.
    const active = this.#o.peers.active();
    if (active !== this.#checkedAgainst) {
      for (const [id, link] of this.#links) {
        const now = this.#activePeer(id);
        if (now === undefined || now.fingerprint !== link.fingerprint || now.address !== link.address) {
          this.#links.delete(id);
          void link.forward.destroy().catch(() => undefined);
        }
      }
      this.#checkedAgainst = active;
    }
    const known = this.#links.get(peer.node_id);
    if (known !== undefined) return known;
    const agent = createPeerAgent({
      identity: this.#o.identity,
      peer,
      limits: {
        connectTimeoutMs: 3_000,
        headersTimeoutMs: this.firstByteTimeoutMs,
        bodyTimeoutMs: 0,
        // No cap below the scheduler's: it already bounds what goes to a peer (its advertised
        // capacity, 64 per rented node it sponsors). A lower cap here (it was 128) queued requests
        // inside undici — 256 concurrent streams ran 128 at a time — where the first-byte timer
        // already runs and the scheduler's queue limits and wait bound do not see them.
        maxConnections: PEER_LINK_MAX_CONNECTIONS,
      },
    });
    const forward = new PeerH2Dispatcher({
      secureContext: peerSecureContext(this.#o.identity, peer),
      fingerprint: peer.fingerprint,
      connectTimeoutMs: 3_000,
      headersTimeoutMs: this.firstByteTimeoutMs,
      idleTimeoutMs: PEER_LINK_IDLE_MS,
      fallback: agent,
    });
    const link: Link = {
      fingerprint: peer.fingerprint,
      address,
      agent,
      forward,
      route: Object.freeze({ dispatcher: forward, baseUrl: `https://${address}${PEER_ROUTE_PREFIX}` }),
    };
    this.#links.set(peer.node_id, link);
    return link;
  }
}

/** Model → up peers serving it, least loaded first (their own in-flight over capacity). */
function servingIndex(members: readonly MemberView[]): Map<string, PeerLinkTarget[]> {
  const up = members
    .filter((m) => m.state === "up")
    .map((m) => ({ member: m, load: m.capacity > 0 ? m.in_flight / m.capacity : 1 }))
    .sort((a, b) => a.load - b.load);
  const byModel = new Map<string, PeerLinkTarget[]>();
  for (const { member } of up) {
    // context: the windows the peer publishes, by model
    const contextTokens = new Map<string, number>();
    for (const m of member.models)
      if (m.context_window !== undefined) contextTokens.set(m.model, m.context_window);
    const target = Object.freeze({
      nodeId: member.node_id,
      name: member.name,
      maxConcurrent: member.capacity,
      ...(contextTokens.size === 0 ? {} : { contextTokens }),
    });
    for (const { model } of member.models) {
      const list = byModel.get(model);
      if (list === undefined) byModel.set(model, [target]);
      else if (!list.includes(target)) list.push(target);
    }
  }
  return byModel;
}
