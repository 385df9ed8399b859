/**
 * Who is at a static `peers` address, learnt by verified means only (no TLS connection here or
 * anywhere in PAIR skips verifying the certificate):
 * - one of OUR pinned peers: its mTLS hello succeeds there under its pin (address-check.ts). A
 *   wrong guess fails the handshake at our end — the certificate presented is not the pin — before
 *   anything is sent. The guesses are kept cheap: first the peer last verified at this address and
 *   the one whose recorded address it is (in a steady cluster: one handshake per round, nothing
 *   more); only if neither answers, a plain-HTTP `GET /` asks the port for its name (port-name.ts),
 *   and the other pinned peers are tried — those with that name first — at most `maxHellos`
 *   handshakes per address per round, and each other (peer, address) at most once per `recheckMs`.
 * - otherwise, a node that is none of our pinned peers (as far as this round could tell): all we
 *   know is the name its port gave over plain HTTP, a label for the user to `pair join ADDRESS
 *   --pin PIN` — no node id, since nothing verified can tell it.
 * - this node itself (its own cluster port, or the port answers with this node's own name and is
 *   none of the pinned peers): ignored.
 * Must not know: the sighting book, mDNS, the trust store's file, how a hello is made.
 */

import type { Clock } from "@pair/provision";
import { checkLimit, type PinnedPeer, formatHostPort, type HostPort } from "../peers/index.js";
import type { AddressCheck } from "./address-check.js";

/** What a static address turned out to be. */
export type StaticAnswer =
  | { readonly kind: "pinned"; readonly peer: PinnedPeer }
  | { readonly kind: "named"; readonly name: string }
  | { readonly kind: "self" }
  | { readonly kind: "nobody" };

export interface StaticProbeOptions {
  /** This node's name (a port answering with it and with no pinned peer's certificate is this node). */
  readonly selfName: string;
  /** Whether `address` is this node's own cluster port (asked of nothing then). */
  readonly isSelf: (address: HostPort) => boolean;
  /** The pinned peers now. */
  readonly active: () => readonly PinnedPeer[];
  /** The mTLS hello of `peer` at `address`, verified by its pin. */
  readonly hello: (peer: PinnedPeer, address: string, signal: AbortSignal) => Promise<AddressCheck>;
  /** The name the port gives over plain HTTP. */
  readonly askName: (address: HostPort, signal: AbortSignal) => Promise<string | undefined>;
  /** Rechecks count in its monotonic time. */
  readonly clock: Clock;
  /** Least time between two guesses of the same other (peer, address) (the first guesses: every round). */
  readonly recheckMs: number;
  /** Handshakes per address per round at most (default 3). */
  readonly maxHellos?: number;
}

export const DEFAULT_STATIC_MAX_HELLOS = 3;

export class StaticProber {
  readonly #o: StaticProbeOptions;
  readonly #maxHellos: number;
  /** The node id last verified at each address. */
  readonly #lastAt = new Map<string, string>();
  /** When each (node, address) guess last failed. */
  readonly #failedAt = new Map<string, number>();

  constructor(options: StaticProbeOptions) {
    this.#maxHellos = options.maxHellos ?? DEFAULT_STATIC_MAX_HELLOS;
    checkLimit("maxHellos", this.#maxHellos, 1, 64);
    checkLimit("recheckMs", options.recheckMs, 10, 86_400_000);
    this.#o = options;
  }

  /** Ask who is at `address` now. */
  async ask(address: HostPort, signal: AbortSignal): Promise<StaticAnswer> {
    if (this.#o.isSelf(address)) return { kind: "self" };
    const shown = formatHostPort(address);
    const peers = this.#o.active().filter((p) => p.revoked_at === undefined);
    const last = this.#lastAt.get(shown);
    const first = peers
      .filter((p) => p.node_id === last || p.address === shown)
      .sort((a, b) => Number(b.node_id === last) - Number(a.node_id === last))
      .slice(0, this.#maxHellos);
    let hellos = 0;
    for (const peer of first) {
      hellos += 1;
      const answer = await this.#try(peer, shown, signal);
      if (answer.ok) return { kind: "pinned", peer };
      if (answer.unreachable === true || signal.aborted) return this.#nobody(shown);
    }

    const name = await this.#o.askName(address, signal);
    if (name === undefined || signal.aborted) return this.#nobody(shown);
    const now = this.#o.clock.now().monoMs;
    this.#prune(now);
    const others = peers
      .filter((p) => !first.includes(p))
      // A port with this node's own name: only a pinned namesake can be there but this node.
      .filter((p) => name !== this.#o.selfName || p.name === name)
      .filter((p) => {
        const failed = this.#failedAt.get(keyOf(p.node_id, shown));
        return failed === undefined || now - failed >= this.#o.recheckMs;
      })
      .sort((a, b) => Number(b.name === name) - Number(a.name === name));
    for (const peer of others) {
      if (hellos >= this.#maxHellos) break;
      hellos += 1;
      const answer = await this.#try(peer, shown, signal);
      if (answer.ok) return { kind: "pinned", peer };
      if (answer.unreachable === true || signal.aborted) return this.#nobody(shown);
    }
    return name === this.#o.selfName ? { kind: "self" } : { kind: "named", name };
  }

  async #try(peer: PinnedPeer, shown: string, signal: AbortSignal): Promise<AddressCheck> {
    const answer = await this.#o.hello(peer, shown, signal);
    const key = keyOf(peer.node_id, shown);
    if (answer.ok) {
      this.#lastAt.set(shown, peer.node_id);
      this.#failedAt.delete(key);
    } else {
      if (this.#lastAt.get(shown) === peer.node_id) this.#lastAt.delete(shown);
      this.#failedAt.set(key, this.#o.clock.now().monoMs);
    }
    return answer;
  }

  #nobody(shown: string): StaticAnswer {
    this.#lastAt.delete(shown);
    return { kind: "nobody" };
  }

  #prune(now: number): void {
    for (const [key, at] of this.#failedAt) if (now - at >= this.#o.recheckMs) this.#failedAt.delete(key);
  }
}

function keyOf(nodeId: string, address: string): string {
  return `${nodeId}@${address}`;
}
