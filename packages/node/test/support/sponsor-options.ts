// The options of an in-process sponsor node under test: any free ports, quick membership and probes,
// its log kept, wall time from an emulator's clock, the managed nodes' passes run by the test.
import { withWallClock } from "@pair/cluster";
import type { NodeConfigOverrides, NodeOptions, NodeSeams } from "../../src/stages/node-options.js";

export interface SponsorNodeSetup {
  readonly log: string[];
  /** The emulator's wall clock (billing, budgets, idle, windows); monotonic time and timers stay real. */
  readonly wallMs: () => number;
  /** The managed nodes' poll interval (default 20 ms). */
  readonly pollMs?: number;
  /** The managed nodes' pass interval (default 0: the test runs each pass). */
  readonly tickMs?: number;
  /** More, or other, overrides and seams. */
  readonly overrides?: NodeConfigOverrides;
  readonly seams?: NodeSeams;
}

export function sponsorNodeOptions(setup: SponsorNodeSetup): Omit<NodeOptions, "config"> {
  return {
    overrides: {
      port: 0,
      clusterPort: 0,
      membership: { refreshMs: 150, timeoutMs: 400 },
      rentedProbeIntervalMs: 200,
      ...setup.overrides,
    },
    seams: {
      log: (line) => void setup.log.push(line),
      runtime: withWallClock(setup.wallMs),
      managed: { tickMs: setup.tickMs ?? 0, pollMs: setup.pollMs ?? 20, timeZone: "UTC" },
      ...setup.seams,
    },
  };
}
