/**
 * Reading a command's flags: `node:util` `parseArgs` in strict mode (an unknown flag, a missing
 * value or a stray word is a usage error, exit 2), the options most commands share (`--config`,
 * `--json`, `--help`), commands that also take words (`pair apikey create ID`), and the checked
 * number flags (`--limit`, `--port`).
 * Must not know: what any command does with its flags.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestKey } from "../config/index.js";
import { UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

export const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const satisfies OptionsConfig;
export const CONFIG_OPTION = { config: { type: "string" } } as const satisfies OptionsConfig;
export const JSON_OPTION = { json: { type: "boolean" } } as const satisfies OptionsConfig;

/** True when the words ask for help (`--help` or `-h` before any `--`). */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

function isParseArgsError(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    "code" in error &&
    typeof error.code === "string" &&
    error.code.startsWith("ERR_PARSE_ARGS_")
  );
}

/** The first sentence of parseArgs' message (it goes on about `--` in a way that does not apply). */
function firstSentence(message: string): string {
  const end = message.indexOf(". ");
  return end === -1 ? message : message.slice(0, end + 1);
}

/** parseArgs' complaint as a usage error; an unknown option gets the closest known one as a hint. */
function usageOf(error: Error & { code: string }, options: OptionsConfig): UsageError {
  const text = firstSentence(error.message);
  const unknown = /^Unknown option '(--?[^']+)'/.exec(text)?.[1];
  if (error.code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION" || unknown === undefined) return new UsageError(text);
  const known = Object.keys(options).map((name) => `--${name}`);
  const hint = closestKey(unknown.split("=")[0] ?? unknown, known);
  return new UsageError(hint === undefined ? text : `${text.replace(/\.$/, "")}. Did you mean ${hint}?`);
}

/** "did you mean" for a word that names none of `known` (a command, a subcommand). */
export function unknownWord(kind: string, word: string, known: readonly string[]): string {
  const hint = closestKey(word, known);
  return (
    `unknown ${kind} "${word}"` +
    (hint === undefined ? "" : ` — did you mean "${hint}"?`) +
    ` (expected one of: ${known.join(", ")})`
  );
}

/**
 * A command with subcommands: its first word that is neither an option nor the value of one of
 * `valueOptions`, and the other words in their order, so `pair apikey --config F list` works as
 * `pair apikey list --config F` does.
 */
export function splitSubcommand(
  args: readonly string[],
  valueOptions: readonly string[] = ["--config"],
): { readonly sub: string | undefined; readonly rest: readonly string[] } {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") break;
    if (valueOptions.includes(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith("-")) continue;
    return { sub: arg, rest: [...args.slice(0, i), ...args.slice(i + 1)] };
  }
  return { sub: undefined, rest: args };
}

/** A subcommand's run: the words after it, in order. */
export type SubcommandRun = (args: readonly string[], io: CliIo) => Promise<number>;

/** Runs the subcommand `args` names (options may come first). @throws UsageError naming the closest one */
export function runSubcommand(
  args: readonly string[],
  io: CliIo,
  table: Readonly<Record<string, SubcommandRun>>,
): Promise<number> {
  const { sub, rest } = splitSubcommand(args);
  const known = Object.keys(table);
  const run = sub === undefined ? undefined : table[sub];
  if (run === undefined)
    throw new UsageError(
      sub === undefined ? `expected one of: ${known.join(", ")}` : unknownWord("subcommand", sub, known),
    );
  return run(rest, io);
}

/** The command's flags, strictly: no positionals, no unknown flags. @throws UsageError */
export function parseCommandArgs<const O extends OptionsConfig>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    if (isParseArgsError(error)) throw usageOf(error, options);
    throw error;
  }
}

/** The flags, and exactly one word for each name in `words` (`pair apikey revoke ID`). @throws UsageError */
export function parseCommandWords<const O extends OptionsConfig>(
  args: readonly string[],
  options: O,
  words: readonly string[],
) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    if (isParseArgsError(error)) throw usageOf(error, options);
    throw error;
  }
  const { positionals } = parsed;
  if (positionals.length < words.length) throw new UsageError(`missing ${words[positionals.length]}`);
  if (positionals.length > words.length)
    throw new UsageError(`Unexpected argument '${positionals[words.length]}'`);
  return { values: parsed.values, words: positionals };
}

/** An integer flag within bounds. @throws UsageError naming the flag and the range */
export function intFlag(flag: string, text: string, min: number, max: number): number {
  const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`${flag}: expected a whole number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}
