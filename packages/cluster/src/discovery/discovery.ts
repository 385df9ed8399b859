/**
 * Discovery, wired: the mDNS beacon (when on) and the static `peers` addresses (asked every
 * `staticIntervalMs` who is there, by verified means only: static-probe.ts) feed the sighting book;
 * every `reconcileMs`, and soon after each sighting, the book's plan runs. A check of paired node N
 * at address X: if N still answers at its recorded address, nothing moves (it has more than one way
 * in); otherwise, if N answers at X over mTLS under its pin, X becomes its recorded address in the
 * trust store and `onMoved` tells membership to look again. A failed check changes nothing. Events
 * go to `onEvent` (never a key, never a certificate). `stop()` sends the mDNS goodbye and ends every
 * timer, probe and check.
 * Must not know: the client API, the scheduler, membership's insides, the config file.
 */

import type { Clock } from "@pair/provision";
import { networkInterfaces } from "node:os";
import {
  checkLimit,
  type NodeIdentity,
  type PinnedPeer,
  type RelocateResult,
  formatHostPort,
  type HostPort,
} from "../peers/index.js";
import type { Timers } from "../runtime/index.js";
import { checkPeerAddress, type AddressCheck } from "./address-check.js";
import { readPortName } from "./port-name.js";
import { StaticProber } from "./static-probe.js";
import { bookMdnsReport, bookStaticAnswer } from "./book-answers.js";
import { laterOn, serialPass } from "./discovery-schedule.js";
import {
  resolveMdnsNetwork,
  startMdnsBeacon,
  type MdnsBeacon,
  type MdnsBeaconOptions,
  type MdnsNetwork,
} from "./mdns-beacon.js";
import type { MdnsReport } from "./mdns-records.js";
import {
  SightingBook,
  type CheckAddress,
  type DiscoveredNode,
  type PinOf,
  type PinnedAt,
  type SightingBookLimits,
} from "./sighting-book.js";

/** The trust store as discovery uses it. */
export interface DiscoveryTrust {
  active(): readonly PinnedPeer[];
  relocate(nodeId: string, address: string, fingerprint: string): RelocateResult;
}

/** What discovery reports. */
export type DiscoveryEvent =
  | {
      readonly type: "PeerMoved";
      readonly nodeId: string;
      readonly from: string | undefined;
      readonly to: string;
    }
  | {
      readonly type: "PeerAddressRejected";
      readonly nodeId: string;
      readonly address: string;
      readonly reason: string;
    }
  | {
      readonly type: "PeerAddressKept";
      readonly nodeId: string;
      readonly address: string;
      readonly seenAt: string;
    }
  | { readonly type: "MdnsFailed"; readonly message: string };

export interface DiscoveryTiming {
  /** Time between two mDNS questions (default 60 s). */
  readonly queryIntervalMs?: number;
  /** Time between two rounds over the static peer addresses (default 30 s). */
  readonly staticIntervalMs?: number;
  /** Time between two passes over the sightings (default 5 s). */
  readonly reconcileMs?: number;
  /** Longest a probe or an address check may take (default 3 s). */
  readonly timeoutMs?: number;
  /** Least time between two checks of the same (node, address) (default 30 s). */
  readonly recheckMs?: number;
}

export interface DiscoveryOptions extends DiscoveryTiming {
  readonly identity: NodeIdentity;
  /** The cluster port, as advertised. */
  readonly port: number;
  readonly trust: DiscoveryTrust;
  /** mDNS on this network; false: no mDNS. */
  readonly mdns: MdnsNetwork | false;
  /** Static peer addresses (`node.peers`). */
  readonly staticPeers: readonly HostPort[];
  /** Sightings are stamped (`last_seen`) and aged in its wall time. */
  readonly clock: Clock;
  /** Rechecks, rounds and the beacon's questions. */
  readonly timers: Pick<Timers, "after">;
  /** A paired node's recorded address moved (membership should look again). */
  readonly onMoved?: (peer: PinnedPeer) => void;
  readonly onEvent?: (event: DiscoveryEvent) => void;
  /** mTLS handshakes per static address per round at most (default 3). */
  readonly maxStaticHellos?: number;
  /** Seams for tests; the defaults are the real ones. */
  readonly startBeacon?: (options: MdnsBeaconOptions) => MdnsBeacon;
  readonly askName?: (address: HostPort, signal: AbortSignal) => Promise<string | undefined>;
  /** The mTLS hello under `peer`'s pin at `address` (address checks and static addresses). */
  readonly check?: (peer: PinnedPeer, address: string, signal: AbortSignal) => Promise<AddressCheck>;
}

/** Discovery as the cluster node runs it: all but the node's own identity, port and trust store. */
export type ClusterDiscoveryOptions = Omit<
  DiscoveryOptions,
  "identity" | "port" | "trust" | "clock" | "timers"
> & {
  /** Rechecks, rounds and the beacon's questions; absent: the cluster node's runtime's. */
  readonly timers?: Pick<Timers, "after">;
};

/** What `startNode` takes: the mDNS network (tests: loopback) and the timing. */
export interface NodeDiscoveryOptions extends DiscoveryTiming {
  /** The mDNS socket's network; absent: `PAIR_MDNS_INTERFACE`/`PAIR_MDNS_BIND`, else every interface. */
  readonly mdns?: MdnsNetwork;
  readonly onEvent?: (event: DiscoveryEvent) => void;
}

/**
 * Discovery for a node's config (`node.discovery.mdns`, `node.peers`): undefined when both are off.
 * `onMoved` is called when a paired node's recorded address moved.
 */
export function clusterDiscovery(
  settings: { readonly mdns: boolean; readonly peers: readonly HostPort[] },
  given: NodeDiscoveryOptions | undefined,
  onMoved: (peer: PinnedPeer) => void,
): ClusterDiscoveryOptions | undefined {
  if (!settings.mdns && settings.peers.length === 0) return undefined;
  const { mdns, ...rest } = given ?? {};
  return {
    ...rest,
    mdns: settings.mdns ? resolveMdnsNetwork(mdns) : false,
    staticPeers: settings.peers,
    onMoved,
  };
}

export interface Discovery {
  /** Nodes seen but not paired, most recently seen first. */
  discovered(): DiscoveredNode[];
  /** One pass now: ask the static addresses, then run the due checks (tests and `pair peers` refresh). */
  refresh(): Promise<void>;
  stop(): Promise<void>;
}

export const DEFAULT_DISCOVERY_TIMING = Object.freeze({
  queryIntervalMs: 60_000,
  staticIntervalMs: 30_000,
  reconcileMs: 5_000,
  timeoutMs: 3_000,
  recheckMs: 30_000,
});

export function startDiscovery(options: DiscoveryOptions): Discovery {
  const t = checkedTiming(options);
  const nowMs = (): number => options.clock.now().wallMs;
  const after = options.timers.after;
  const abort = new AbortController();
  const book = sightingBook(options.identity.nodeId, t);
  const { pinOf, pinnedAt } = pinLookups(options.trust);
  let stopped = false;
  const { later, cancelAll } = laterOn(after, () => stopped);
  const checking = sightingCheck(options, t, abort.signal, () => stopped);

  // --- the pass over the book: one at a time; a request during one runs once more after it
  const passes = serialPass(
    async () => {
      await Promise.all(book.plan(nowMs(), pinOf).map((c) => checkSighting(checking, c)));
    },
    () => stopped,
  );
  const pass = passes.pass;
  const passLoop = (): void => {
    void pass();
    later(passLoop, t.reconcileMs);
  };

  // --- mDNS
  const onReport = (report: MdnsReport): void => {
    if (stopped) return;
    bookMdnsReport(book, report, nowMs());
    if (report.seen.length > 0) void pass();
  };
  const beacon = mdnsBeacon(options, t, onReport);

  // --- static peers
  let asking: Promise<void> | undefined;
  const askStatic = (): Promise<void> =>
    (asking ??= Promise.all(options.staticPeers.map(askOne))
      .then(() => undefined)
      .finally(() => (asking = undefined)));
  const prober = staticProber(options, t, checking.check);
  async function askOne(address: HostPort): Promise<void> {
    const shown = formatHostPort(address);
    const answer = await prober.ask(address, abort.signal);
    if (stopped) return;
    bookStaticAnswer(book, shown, answer, nowMs());
  }
  const staticLoop = (): void => {
    void askStatic().then(pass);
    later(staticLoop, t.staticIntervalMs);
  };

  if (options.staticPeers.length > 0) staticLoop();
  passLoop();

  let stopping: Promise<void> | undefined;
  return {
    discovered: () => book.discovered(nowMs(), pinOf, pinnedAt),
    refresh: async () => {
      await askStatic();
      beacon?.query();
      await pass();
    },
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        cancelAll();
        abort.abort();
        await Promise.all([
          beacon?.stop(),
          asking?.catch(() => undefined),
          passes.running()?.catch(() => undefined),
        ]);
      })()),
  };
}

type Timing = Required<DiscoveryTiming>;

/** The defaults with the caller's timing over them, each within its bounds. */
function checkedTiming(options: DiscoveryTiming): Timing {
  const t = { ...DEFAULT_DISCOVERY_TIMING, ...definedOnly(options) };
  checkLimit("staticIntervalMs", t.staticIntervalMs, 50, 86_400_000);
  checkLimit("reconcileMs", t.reconcileMs, 10, 86_400_000);
  checkLimit("timeoutMs", t.timeoutMs, 100, 600_000);
  return t;
}

/** The book of sightings: a sighting goes stale after three of its source's rounds (a second at least). */
function sightingBook(selfId: string, t: Timing): SightingBook {
  const limits: Partial<SightingBookLimits> = {
    recheckMs: t.recheckMs,
    staleMs: {
      mdns: Math.max(3 * t.queryIntervalMs, 1_000),
      static: Math.max(3 * t.staticIntervalMs, 1_000),
    },
  };
  return new SightingBook(selfId, limits);
}

/** What the book asks of the trust store: a node's pin, and whether an address is a pinned one. */
function pinLookups(trust: DiscoveryTrust): { pinOf: PinOf; pinnedAt: PinnedAt } {
  return {
    pinOf: (nodeId) => {
      const peer = trust.active().find((p) => p.node_id === nodeId);
      return peer === undefined ? undefined : { fingerprint: peer.fingerprint, address: peer.address };
    },
    pinnedAt: (address) => trust.active().some((p) => p.address === address),
  };
}

/** Who answers at the static addresses: a pinned peer by its hello, anyone else by its port's name. */
function staticProber(options: DiscoveryOptions, t: Timing, check: SightingCheck["check"]): StaticProber {
  const askName =
    options.askName ??
    ((address: HostPort, signal: AbortSignal) => readPortName(address, { timeoutMs: t.timeoutMs, signal }));
  return new StaticProber({
    selfName: options.identity.name,
    isSelf: (address) => address.port === options.port && isLocalHost(address.host),
    active: () => options.trust.active(),
    hello: check,
    askName,
    clock: options.clock,
    recheckMs: t.recheckMs,
    ...(options.maxStaticHellos === undefined ? {} : { maxHellos: options.maxStaticHellos }),
  });
}

/** The mDNS beacon announcing this node and reporting others; absent without mDNS. */
function mdnsBeacon(
  options: DiscoveryOptions,
  t: Timing,
  onReport: (report: MdnsReport) => void,
): MdnsBeacon | undefined {
  if (options.mdns === false) return undefined;
  return (options.startBeacon ?? startMdnsBeacon)({
    self: { nodeId: options.identity.nodeId, name: options.identity.name, port: options.port },
    network: options.mdns,
    queryIntervalMs: t.queryIntervalMs,
    onReport,
    onError: (message) => options.onEvent?.({ type: "MdnsFailed", message }),
    timers: { after: options.timers.after },
  });
}

/** The check of sightings: the hello under a peer's pin (the caller's, or the mTLS one) and the trust store. */
function sightingCheck(
  options: DiscoveryOptions,
  t: Timing,
  signal: AbortSignal,
  stopped: () => boolean,
): SightingCheck {
  return {
    trust: options.trust,
    check:
      options.check ??
      ((peer, address, aborted) =>
        checkPeerAddress(options.identity, peer, address, { timeoutMs: t.timeoutMs, signal: aborted })),
    signal,
    stopped,
    emit: (event) => options.onEvent?.(event),
    ...(options.onMoved === undefined ? {} : { onMoved: options.onMoved }),
  };
}

/** What checking one sighting reads: the trust store, the hello, and whether discovery stopped. */
interface SightingCheck {
  readonly trust: DiscoveryTrust;
  readonly check: (peer: PinnedPeer, address: string, signal: AbortSignal) => Promise<AddressCheck>;
  readonly signal: AbortSignal;
  readonly stopped: () => boolean;
  readonly emit: (event: DiscoveryEvent) => void;
  readonly onMoved?: (peer: PinnedPeer) => void;
}

/**
 * A pinned peer sighted at another address: kept when it still answers where it is recorded, else
 * moved there once the mTLS hello under its pin succeeds at the new address.
 */
async function checkSighting(ctx: SightingCheck, c: CheckAddress): Promise<void> {
  const peer = ctx.trust.active().find((p) => p.node_id === c.nodeId && p.fingerprint === c.fingerprint);
  if (peer === undefined || peer.address === c.address) return;
  if (peer.address !== undefined) {
    const here = await ctx.check(peer, peer.address, ctx.signal);
    if (ctx.stopped()) return;
    if (here.ok)
      return ctx.emit({
        type: "PeerAddressKept",
        nodeId: c.nodeId,
        address: peer.address,
        seenAt: c.address,
      });
  }
  const rejected = (reason: string): void =>
    ctx.emit({ type: "PeerAddressRejected", nodeId: c.nodeId, address: c.address, reason });
  const there = await ctx.check(peer, c.address, ctx.signal);
  if (ctx.stopped()) return;
  if (!there.ok) return rejected(there.reason);
  const moved = ctx.trust.relocate(c.nodeId, c.address, c.fingerprint);
  if (!moved.ok) return rejected(moved.message);
  if (!moved.changed) return;
  ctx.emit({ type: "PeerMoved", nodeId: c.nodeId, from: peer.address, to: c.address });
  ctx.onMoved?.(moved.peer);
}

/** The timing fields the caller set (an explicit `undefined` keeps the default). */
function definedOnly(options: DiscoveryTiming): DiscoveryTiming {
  const out: Record<string, number> = {};
  for (const key of [
    "queryIntervalMs",
    "staticIntervalMs",
    "reconcileMs",
    "timeoutMs",
    "recheckMs",
  ] as const) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Whether `host` names this machine: a loopback name or address, or one of its interfaces' addresses. */
function isLocalHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0.0.0.0" || h === "::" || h.startsWith("127.")) return true;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((info) => info.address.toLowerCase() === h),
  );
}
