import type { CliIo } from "./cli-io.js";

/** What every `--json` prints: the value, indented, one trailing newline. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}
