/**
 * @pair/node's public surface: what a package built on the daemon needs — start a node, parse a
 * config, and write a `pair` subcommand with the CLI's own parts (io, errors, flags, event log).
 * @pair/demo is its one user; the daemon's own files import each other by path, never through here.
 * Must not know: who imports it.
 */

export { ListenError, PAIR_VERSION, startNode, type NodeOptions, type RunningNode } from "./node.js";
export { parseConfig, type CredentialRef } from "./config/index.js";
export {
  Redacted,
  SYSTEM_RUNTIME,
  VirtualRuntime,
  withWallClock,
  type Runtime,
  type Timers,
} from "@pair/cluster";
export type { CredentialReader } from "@pair/sponsor";
export { CliFailure, EXIT_FAILURE, EXIT_OK, UsageError } from "./cli/cli-errors.js";
export { nextStopSignal, type CliIo } from "./cli/cli-io.js";
export { eventLog, type EventLog } from "./cli/event-log.js";
export { DEMO_CLOCK_SCALE, DEMO_PREFERRED_PORT, PAIR_DEFAULT_PORT } from "./cli/demo-command.js";
