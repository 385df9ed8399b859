/**
 * The shape every `pair` subcommand has: its name, a one-line summary for `pair --help`, its usage
 * text for `pair CMD --help` and usage errors, and `run` (flags in, exit status out).
 * Must not know: any particular command, argument parsing, how errors are printed.
 */

import type { CliIo } from "./cli-io.js";

export interface Command {
  readonly name: string;
  /** Other names the command answers to (`pair ls` for `pair models`, as Ollama users type). */
  readonly aliases?: readonly string[];
  readonly summary: string;
  /** Full usage: synopsis, options, examples. Ends without a newline. */
  readonly usage: string;
  /** Runs with the words after the command name. Throws UsageError / CliFailure / ConfigError. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}
