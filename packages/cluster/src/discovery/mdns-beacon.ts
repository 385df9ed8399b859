/**
 * The node on mDNS, over bonjour-service: it publishes this node's `_pair._tcp` advertisement
 * (mdns-records.ts), asks `_pair._tcp.local PTR` at start and every `queryIntervalMs`, and hands
 * every response it hears to `readMdnsResponse`, reporting sightings and goodbyes. `stop()` sends
 * the goodbye (TTL 0) and closes the socket.
 * Browsing reads the responses itself rather than through bonjour-service's `Browser`: that one
 * reports a service once and then only its changes (so nobody could tell a node still there from
 * one long gone), keeps what it saw for the PTR's 8-hour TTL, and runs its own parsing inside the
 * socket's event handler, where a throw would end the process.
 * The network: `interface` (the address of the interface to use; default: the library's, all
 * interfaces) and `bind` (default "0.0.0.0" when an interface is given: bound to the interface
 * address itself, the socket misses multicast). `PAIR_MDNS_INTERFACE` / `PAIR_MDNS_BIND` in the
 * environment give them when the caller does not — the test runner sets them to loopback so no test
 * can ever send mDNS off the machine.
 * Must not know: the trust store, TLS, what sightings lead to.
 */

import type { EventEmitter } from "node:events";
import Bonjour from "bonjour-service";
import { checkLimit } from "../peers/index.js";
import { HOLDING_RUNTIME, SYSTEM_TIMERS, type Timers } from "../runtime/index.js";
import {
  MDNS_SERVICE_NAME,
  mdnsAdvert,
  readMdnsResponse,
  type MdnsReport,
  type MdnsSelf,
} from "./mdns-records.js";

/** Which network mDNS uses. Empty: the library's defaults (every interface). */
export interface MdnsNetwork {
  /** The IPv4 address of the interface to send and listen on. */
  readonly interface?: string;
  /** The address the socket binds (default "0.0.0.0" when `interface` is given). */
  readonly bind?: string;
}

export interface MdnsBeaconOptions {
  readonly self: MdnsSelf;
  readonly network: MdnsNetwork;
  /** Time between two questions for `_pair._tcp` (default 60 s). */
  readonly queryIntervalMs?: number;
  /** Every response heard that names a PAIR node (own advertisement included). */
  readonly onReport: (report: MdnsReport) => void;
  /** The socket failed (port 5353 taken, no permission, …): mDNS is off from then on. */
  readonly onError?: (message: string) => void;
  /** When the next question is asked (default: the system timers). */
  readonly timers?: Pick<Timers, "after">;
}

export interface MdnsBeacon {
  /** Ask now who offers `_pair._tcp`. */
  query(): void;
  /** Send the goodbye and close the socket (bounded: at most about a second). */
  stop(): Promise<void>;
}

export const DEFAULT_MDNS_QUERY_INTERVAL_MS = 60_000;
/** Longest wait for the goodbye to be sent, and then for the socket to close. */
const STOP_STEP_MS = 500;

/** The network to use: the caller's, else the environment's, else the library's defaults. */
export function resolveMdnsNetwork(
  given: MdnsNetwork | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): MdnsNetwork {
  const iface = given?.interface ?? nonEmpty(env["PAIR_MDNS_INTERFACE"]);
  const bind = given?.bind ?? (given?.interface === undefined ? nonEmpty(env["PAIR_MDNS_BIND"]) : undefined);
  if (iface === undefined) return bind === undefined ? {} : { bind };
  return { interface: iface, bind: bind ?? "0.0.0.0" };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** The multicast-dns instance inside bonjour-service (not in its types, but stable at the pinned 1.4.4). */
interface MulticastDns extends EventEmitter {
  query(questions: readonly { name: string; type: string }[]): void;
}

export function startMdnsBeacon(options: MdnsBeaconOptions): MdnsBeacon {
  const queryIntervalMs = options.queryIntervalMs ?? DEFAULT_MDNS_QUERY_INTERVAL_MS;
  checkLimit("queryIntervalMs", queryIntervalMs, 50, 3_600_000);
  const timers = options.timers ?? SYSTEM_TIMERS;
  let failed = false;
  const fail = (message: string): void => {
    if (failed) return;
    failed = true;
    options.onError?.(message);
  };
  // bonjour-service types its options as a service's, but hands them to multicast-dns as they are.
  const socketOptions = { ...options.network } as unknown as ConstructorParameters<typeof Bonjour>[0];
  const bonjour = new Bonjour(socketOptions, (error: unknown) =>
    fail(`mDNS: ${error instanceof Error ? error.message : String(error)}`),
  );
  const mdns = (bonjour as unknown as { server: { mdns: MulticastDns } }).server.mdns;
  mdns.on("error", (error: NodeJS.ErrnoException) =>
    fail(`mDNS is off: ${error.code ?? ""} ${error.message} (is port 5353 usable by this user?)`),
  );
  mdns.on("warning", () => undefined);
  mdns.on("response", (packet: unknown, rinfo: { address: string }) => {
    let report: MdnsReport;
    try {
      report = readMdnsResponse(packet, rinfo);
    } catch {
      return; // readMdnsResponse is total; this is only belt and braces around network input
    }
    if (report.seen.length > 0 || report.gone.length > 0) options.onReport(report);
  });
  bonjour.publish(mdnsAdvert(options.self));

  let stopped = false;
  let timer: { cancel(): void } | undefined;
  const query = (): void => {
    if (stopped || failed) return;
    mdns.query([{ name: MDNS_SERVICE_NAME, type: "PTR" }]);
  };
  const tick = (): void => {
    query();
    timer = timers.after(tick, queryIntervalMs);
  };
  tick();

  let stopping: Promise<void> | undefined;
  return {
    query,
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        timer?.cancel();
        await within(STOP_STEP_MS, (done) => bonjour.unpublishAll(() => done()));
        await within(STOP_STEP_MS, (done) => bonjour.destroy(() => done()));
      })()),
  };
}

/** Run `start` and wait for its callback, or `ms` at most. */
function within(ms: number, start: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = HOLDING_RUNTIME.timers.after(resolve, ms);
    const done = (): void => {
      t.cancel();
      resolve();
    };
    try {
      start(done);
    } catch {
      done();
    }
  });
}
