/**
 * `pair demo` (and `--tour-only`): build the two-node sandbox (cluster.ts), run the tour
 * (tour.ts) printing as it goes, then either exit (tour only: 0 when every step turned out as
 * the seed says, else 1) or keep the sandbox up with virtual time running, print what to try, and
 * take everything down on SIGINT/SIGTERM. With `--json` the tour's narrative goes to stderr and
 * stdout gets one JSON line (the nodes and every step's outcome). A stop signal during the start or
 * the tour ends it between steps, cleanly, with exit 0.
 * Must not know: what the tour's steps are, what the sandbox holds.
 */

import {
  CliFailure,
  DEMO_CLOCK_SCALE,
  DEMO_PREFERRED_PORT,
  eventLog,
  EXIT_FAILURE,
  EXIT_OK,
  ListenError,
  nextStopSignal,
  type CliIo,
} from "@pair/node";
import { startDemoCluster, type DemoCluster } from "./cluster.js";
import { demoClusterGuide, demoClusterJson, tourSummary } from "./cluster-guide.js";
import { runTour } from "./tour.js";
import { TOUR_STEPS } from "./tour-steps.js";

export interface ClusterDemoOptions {
  /** B's client port (the one to curl); undefined: DEMO_PREFERRED_PORT when free, else any. */
  readonly port: number | undefined;
  readonly json: boolean;
  readonly tourOnly: boolean;
  /** The nodes' own log lines on stderr. */
  readonly verbose: boolean;
}

async function start(options: ClusterDemoOptions, io: CliIo): Promise<DemoCluster> {
  const log = options.verbose ? eventLog(io) : undefined;
  const open = (b: number) =>
    startDemoCluster({ tmpDir: io.tmpDir, ports: { a: 0, b }, ...(log === undefined ? {} : { log }) });
  try {
    if (options.port !== undefined) return await open(options.port);
    try {
      return await open(DEMO_PREFERRED_PORT);
    } catch (error) {
      if (!(error instanceof ListenError && error.code === "port_in_use")) throw error;
      return await open(0);
    }
  } catch (error) {
    if (error instanceof ListenError)
      throw new CliFailure(
        error.code === "port_in_use"
          ? `port ${options.port ?? DEMO_PREFERRED_PORT} is in use — pick another with --port N, or leave --port out`
          : error.message,
        { cause: error },
      );
    throw error;
  }
}

export async function runClusterDemo(options: ClusterDemoOptions, io: CliIo): Promise<number> {
  const say = (text: string) => io.stderr(`${text}\n`);
  const narrate = options.json ? io.stderr : io.stdout;
  const stop = nextStopSignal(io.signals);
  let stopped = false;
  void stop.signal.then(() => void (stopped = true));
  say("pair demo: starting two nodes, engine emulators and an emulated Hugging Face account on loopback…");
  let cluster: DemoCluster | undefined;
  try {
    cluster = await start(options, io);
    narrate(
      `PAIR demo: node A ${cluster.a.node.url} (sponsor) and node B ${cluster.b.node.url} (peer), paired by PIN.\n` +
        "The tour runs the seed's validation steps 1–7; minutes and days pass in virtual time.\n",
    );
    const steps = await runTour(cluster, narrate, TOUR_STEPS, () => stopped);
    if (stopped) {
      say(`stopped during the tour, after ${steps.length} of ${TOUR_STEPS.length} steps`);
      return EXIT_OK;
    }
    narrate(tourSummary(steps));
    const ok = steps.length === TOUR_STEPS.length && steps.every((s) => s.ok);
    if (options.json) io.stdout(`${JSON.stringify(demoClusterJson(cluster, steps))}\n`);
    if (options.tourOnly) return ok ? EXIT_OK : EXIT_FAILURE;
    cluster.runClock(DEMO_CLOCK_SCALE);
    narrate(demoClusterGuide(cluster, DEMO_CLOCK_SCALE));
    const signal = await stop.signal;
    say(`${signal}: stopping the demo`);
    return EXIT_OK;
  } finally {
    stop.cancel();
    await cluster?.close();
    if (cluster !== undefined) say(`demo stopped; ${cluster.dir} removed`);
  }
}
