/**
 * What `startNode` takes: the config, the test and benchmark seams (a dispatcher, a clock for
 * managed nodes, loopback pretence, intervals) and the tuning bounds (body, queue, connections).
 * Must not know: how the node is assembled (node.ts).
 */

import type { Dispatcher } from "undici";
import type { Runtime } from "@pair/cluster";
import type { ProxyUrlOf } from "@pair/runpod";
import type { LoopbackPolicy } from "../auth/index.js";
import type { NodeDiscoveryOptions } from "../cluster-node/index.js";
import type { PairConfig } from "../config/index.js";
import type { IdleCollectPolicy } from "../memory/index.js";
import type { CredentialReader } from "../rented/index.js";
import type { RentedManagedOptions } from "./rented-wiring.js";

export interface NodeOptions {
  readonly config: PairConfig;
  /** Listen on this port instead of the configured one (0: any free port). */
  readonly portOverride?: number;
  /** The cluster port instead of the configured `cluster_listen` port (0: any free port). */
  readonly clusterPortOverride?: number;
  readonly dispatcher?: Dispatcher;
  readonly log?: (line: string) => void;
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
  /** Extra fields for the status route (the config file path, …). */
  readonly statusExtras?: Record<string, unknown>;
  /** What counts as this machine, for the listen host and for each caller (tests pretend). */
  readonly loopback?: LoopbackPolicy;
  /** How often paired peers are asked for their inventory, and how long each may take. */
  readonly membership?: { readonly refreshMs?: number; readonly timeoutMs?: number };
  /** Longest wait for a peer's first byte on a forwarded request (default 120 s). */
  readonly peerFirstByteTimeoutMs?: number;
  /** Where rented nodes' credentials are read (default: the OS credential store). */
  readonly credentials?: CredentialReader;
  /** How often rented nodes are probed (default 30 s). */
  readonly rentedProbeIntervalMs?: number;
  /** Discovery's mDNS network (tests: loopback) and timing, when the config turns it on. */
  readonly discovery?: NodeDiscoveryOptions;
  /** The built dashboard served at /ui (default: packages/dashboard/dist). */
  readonly uiDir?: string;
  /** How often the dashboard's live events and the rented state history look for changes (default 500 ms). */
  readonly liveCheckMs?: number;
  /**
   * The node's clock and timers (default: the system runtime). Its wall time is what the node records,
   * bills and shows (the sandbox runs it virtually); its timers drive the managed nodes' passes and
   * polls, the scheduler's waits, the live events, the batches and the idle collector.
   */
  readonly runtime?: Runtime;
  /** Write the workload history's batches on a worker thread (default) or on the event loop (benchmarks compare). */
  readonly historyOnThread?: boolean;
  /**
   * Give memory back when the node goes idle after a load (a minor, then a full GC; needs node's --expose-gc,
   * which `pair` runs with): the policy, or false for never. Default DEFAULT_IDLE_COLLECT.
   */
  readonly idleCollect?: IdleCollectPolicy | false;
  /**
   * Longest time a client may take to send a request's headers (default 30 s); a connection that
   * dribbles them (slow-loris) is closed after it (Node looks once a second).
   */
  readonly headersTimeoutMs?: number;
  /** Longest silence while a request body arrives before it is cut with 408 (default 30 s). */
  readonly bodyIdleTimeoutMs?: number;
  /** Most connections open at once on the client port; more are closed on arrival (default 1024). */
  readonly maxConnections?: number;
  /** Where `PAIR_ORIGINS` is read (default: the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** This machine's name, admitted as a `Host` (default: `os.hostname()`; tests pretend). */
  readonly hostName?: string;
  /** Managed nodes' pass interval, poll interval and budget time zone. */
  readonly managed?: RentedManagedOptions;
  /** Runpod pods' proxy base URL; overrides the config's `providers.runpod.proxy_url` (in-process tests). */
  readonly runpodProxyUrl?: ProxyUrlOf;
  /** Longest the start waits for the managed nodes' first pass (default MANAGED_FIRST_PASS_WAIT_MS; tests shorten it). */
  readonly managedFirstPassWaitMs?: number;
}
