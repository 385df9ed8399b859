/**
 * What `startNode` takes: the config, and three typed groups beside it — `overrides` of config
 * values (ports, bounds, intervals a config could hold), `seams` (what the node reaches the world
 * through, which tests, the sandbox and the CLI replace) and `tuning` (benchmark switches). A caller
 * that sets none gets the node `pair serve` runs.
 * Must not know: how the node is assembled (node.ts).
 */

import type { Dispatcher } from "undici";
import type { Runtime } from "@pair/cluster";
import type { ProxyUrlOf } from "@pair/runpod";
import type { LoopbackPolicy } from "../auth/index.js";
import type { NodeDiscoveryOptions } from "../cluster-node/index.js";
import type { PairConfig } from "../config/index.js";
import type { IdleCollectPolicy } from "../memory/index.js";
import type { CredentialReader } from "@pair/sponsor";
import type { RentedManagedOptions } from "./rented-wiring.js";

export interface NodeOptions {
  readonly config: PairConfig;
  readonly overrides?: NodeConfigOverrides;
  readonly seams?: NodeSeams;
  readonly tuning?: NodeTuning;
}

/** Values that override the config or its defaults for this start (tests shorten or pin them). */
export interface NodeConfigOverrides {
  /** Listen on this port instead of the configured one (0: any free port). */
  readonly port?: number;
  /** The cluster port instead of the configured `cluster_listen` port (0: any free port). */
  readonly clusterPort?: number;
  /** Largest request body accepted. */
  readonly maxBodyBytes?: number;
  /** Largest non-streamed reply or error body read from an upstream (default: the config's `node.max_upstream_body_mb`). */
  readonly maxUpstreamBodyBytes?: number;
  /** Batches: lines in flight at once over all batches (default 8), largest uploaded file (default 100 MiB). */
  readonly batchLines?: number;
  readonly batchMaxFileBytes?: number;
  /** Requests waiting for a slot, and how long each may wait. */
  readonly maxQueued?: number;
  readonly maxQueueWaitMs?: number;
  /** How often paired peers are asked for their inventory, and how long each may take. */
  readonly membership?: { readonly refreshMs?: number; readonly timeoutMs?: number };
  /** Longest wait for a peer's first byte on a forwarded request (default 120 s). */
  readonly peerFirstByteTimeoutMs?: number;
  /** How often rented nodes are probed (default 30 s). */
  readonly rentedProbeIntervalMs?: number;
  /** How often the dashboard's live events and the rented state history look for changes (default 500 ms). */
  readonly liveCheckMs?: number;
  /**
   * Longest time a client may take to send a request's headers (default 30 s); a connection that
   * dribbles them (slow-loris) is closed after it (Node looks once a second).
   */
  readonly headersTimeoutMs?: number;
  /** Longest silence while a request body arrives before it is cut with 408 (default 30 s). */
  readonly bodyIdleTimeoutMs?: number;
  /** Most connections open at once on the client port; more are closed on arrival (default 1024). */
  readonly maxConnections?: number;
  /** Runpod pods' proxy base URL; overrides the config's `providers.runpod.proxy_url` (in-process tests). */
  readonly runpodProxyUrl?: ProxyUrlOf;
  /** Longest the start waits for the managed nodes' first pass (default MANAGED_FIRST_PASS_WAIT_MS; tests shorten it). */
  readonly managedFirstPassWaitMs?: number;
}

/** What the node reaches the world through; each default is the real one. */
export interface NodeSeams {
  /**
   * The node's clock and timers (default: the system runtime). Its wall time is what the node records,
   * bills and shows (the sandbox runs it virtually); its timers drive the managed nodes' passes and
   * polls, the scheduler's waits, the live events, the batches and the idle collector.
   */
  readonly runtime?: Runtime;
  /** Outbound HTTP to engines and upstreams (default: an undici Agent the node closes). */
  readonly dispatcher?: Dispatcher;
  readonly log?: (line: string) => void;
  /** Where rented nodes' credentials are read (default: the OS credential store). */
  readonly credentials?: CredentialReader;
  /** What counts as this machine, for the listen host and for each caller (tests pretend). */
  readonly loopback?: LoopbackPolicy;
  /** Where `PAIR_ORIGINS` is read (default: the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** This machine's name, admitted as a `Host` (default: `os.hostname()`; tests pretend). */
  readonly hostName?: string;
  /** Discovery's mDNS network (tests: loopback) and timing, when the config turns it on. */
  readonly discovery?: NodeDiscoveryOptions;
  /** The built dashboard served at /ui (default: packages/dashboard/dist). */
  readonly uiDir?: string;
  /** Extra fields for the status route (the config file path, …). */
  readonly statusExtras?: Record<string, unknown>;
  /** Managed nodes' pass interval (0: a test runs each pass), poll interval and budget time zone. */
  readonly managed?: RentedManagedOptions;
}

/** Switches and bounds benchmarks compare; the defaults are what `pair serve` runs. */
export interface NodeTuning {
  /** Write the workload history's batches on a worker thread, or on the event loop (default). */
  readonly historyOnThread?: boolean;
  /**
   * Give memory back when the node goes idle after a load (a minor, then a full GC; needs node's --expose-gc,
   * which `pair` runs with): the policy, or false for never. Default DEFAULT_IDLE_COLLECT.
   */
  readonly idleCollect?: IdleCollectPolicy | false;
}
