/**
 * Reading a command's flags: `node:util` `parseArgs` in strict mode (an unknown flag, a missing
 * value or a stray word is a usage error, exit 2), the options most commands share (`--config`,
 * `--json`, `--help`), commands that also take words (`pair apikey create ID`), and the checked
 * number flags (`--limit`, `--port`).
 * Must not know: what any command does with its flags.
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./cli-errors.js";

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

/** The command's flags, strictly: no positionals, no unknown flags. @throws UsageError */
export function parseCommandArgs<const O extends OptionsConfig>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(firstSentence(error.message));
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
    if (isParseArgsError(error)) throw new UsageError(firstSentence(error.message));
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
