/**
 * The `pair` command line: picks the subcommand, answers `--help` and `--version`, and turns every
 * way a command can end into an exit status and a message — 0 success, 1 failure (what failed and
 * what to do, on stderr), 2 usage (the problem, then the usage, on stderr).
 * `main(argv, io?)` takes the words after `pair` and returns the exit status; `io` replaces the
 * process's streams, env, home dir and signals (tests run it in-process).
 * Must not know: what any command does.
 */

import { ConfigError } from "../config/index.js";
import { PAIR_VERSION } from "../node.js";
import { historyCommand, jobsCommand, modelsCommand, nodesCommand, statusCommand } from "./admin-commands.js";
import { apikeyCommand } from "./apikey-command.js";
import { batchCommand } from "./batch-command.js";
import { credentialCommand } from "./credential-command.js";
import { CliFailure, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./cli-errors.js";
import { processIo, type CliIo } from "./cli-io.js";
import type { Command } from "./command.js";
import { asksForHelp, unknownWord } from "./command-args.js";
import { demoCommand } from "./demo-command.js";
import { doctorCommand } from "./doctor-command.js";
import { joinCommand, peersCommand, pinCommand, unpairCommand } from "./pair-commands.js";
import { psCommand } from "./ps-command.js";
import { rentedCommand } from "./rented-command.js";
import { serveCommand } from "./serve-command.js";
import { serviceCommand } from "./service-command.js";
import { uiCommand } from "./ui-command.js";

export const COMMANDS: readonly Command[] = [
  serveCommand,
  statusCommand,
  modelsCommand,
  psCommand,
  nodesCommand,
  jobsCommand,
  historyCommand,
  demoCommand,
  pinCommand,
  joinCommand,
  peersCommand,
  unpairCommand,
  apikeyCommand,
  rentedCommand,
  batchCommand,
  credentialCommand,
  uiCommand,
  serviceCommand,
  doctorCommand,
];

/** The command a word names: its name or one of its aliases. */
function commandNamed(word: string | undefined): Command | undefined {
  return COMMANDS.find((c) => c.name === word || (c.aliases ?? []).includes(word ?? ""));
}

function titleOf(c: Command): string {
  return [c.name, ...(c.aliases ?? [])].join(", ");
}

export function globalUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => titleOf(c).length));
  return `Usage: pair <command> [options]

PAIR: one OpenAI- and Ollama-compatible endpoint over the engines of your machines.

Commands:
${COMMANDS.map((c) => `  ${titleOf(c).padEnd(width)}  ${c.summary}`).join("\n")}

Options:
  -h, --help     show help (pair <command> --help for a command's own)
  -v, --version  print PAIR's version

Exit status: 0 success, 1 failure (the message says what to do), 2 wrong usage.`;
}

function names(): string[] {
  return COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
}

function usageError(io: CliIo, message: string, usage: string, prefix = "pair"): number {
  io.stderr(`${prefix}: ${message}\n\n${usage}\n`);
  return EXIT_USAGE;
}

function report(io: CliIo, command: Command, error: unknown): number {
  const prefix = `pair ${command.name}`;
  if (error instanceof UsageError) return usageError(io, error.message, command.usage, prefix);
  if (error instanceof CliFailure) {
    io.stderr(`${prefix}: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  if (error instanceof ConfigError) {
    const fileMissing = error.problems.every(
      (p) => p.code === "file_not_found" || p.code === "file_unreadable",
    );
    const hint = fileMissing
      ? "Name a config file that exists with --config FILE (or $PAIR_CONFIG), or leave both out for the defaults."
      : "Fix the config file and run the command again.";
    io.stderr(`${prefix}: ${error.message}\n${hint}\n`);
    return EXIT_FAILURE;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr(`${prefix}: unexpected error (a bug in PAIR; please report it with this text):\n${text}\n`);
  return EXIT_FAILURE;
}

export async function main(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const cli = processIo(io);
  const [first, ...rest] = argv;
  if (first === undefined) return usageError(cli, "no command given", globalUsage());
  if (first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    const command = commandNamed(topic);
    if (topic !== undefined && command === undefined)
      return usageError(cli, `no help for ${unknownWord("command", topic, names())}`, globalUsage());
    cli.stdout(`${command?.usage ?? globalUsage()}\n`);
    return EXIT_OK;
  }
  if (first === "--version" || first === "-v") {
    cli.stdout(`pair ${PAIR_VERSION}\n`);
    return EXIT_OK;
  }
  const command = commandNamed(first);
  if (command === undefined) {
    const what = first.startsWith("-")
      ? unknownWord("option", first, ["--help", "--version"])
      : unknownWord("command", first, names());
    return usageError(cli, what, globalUsage());
  }
  if (asksForHelp(rest)) {
    cli.stdout(`${command.usage}\n`);
    return EXIT_OK;
  }
  try {
    return await command.run(rest, cli);
  } catch (error) {
    return report(cli, command, error);
  }
}
