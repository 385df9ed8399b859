/**
 * @pair/demo: the sandbox of `pair demo` — the two-node story with its tour (cluster-run.ts) and the
 * single-node sandbox of `--basic` (basic.ts), both over the emulators, on loopback only. The daemon
 * loads this package only when `pair demo` runs (packages/node/src/cli/demo-command.ts), so no other
 * `pair` process carries it (docs/demo.md).
 * Must not know: how the command line is parsed (the daemon's demo command does that).
 */

export { runBasicDemo } from "./basic.js";
export { runClusterDemo, type ClusterDemoOptions } from "./cluster-run.js";
export { startDemoCluster, type DemoCluster, type DemoClusterOptions } from "./cluster.js";
export type { DemoClusterJson } from "./cluster-guide.js";
export { demoJson, shellWord, type DemoJson } from "./guide.js";
export { DEMO_ENGINES, DEMO_SHARED_MODEL, startDemoSandbox, type DemoSandbox } from "./sandbox.js";
export { runTour, type TourStep, type TourStepSpec } from "./tour.js";
