/**
 * The refusal a configuration gets at start: one `ConfigError` (stable code `invalid_config`) holding
 * every problem found, each with the key's path, its own stable code and, where known, the line and
 * column in the file. A message never contains a value the user wrote (only key names), so a literal
 * secret put in the wrong place is never echoed.
 * Must not know: YAML, the file system, what the keys mean.
 */

import { CodedError } from "../errors/coded-error.js";

/** Stable codes of single problems. Scripts and tests match on these; add freely, never rename. */
export const CONFIG_PROBLEM_CODES = [
  "yaml_syntax",
  "file_not_found",
  "file_unreadable",
  "unknown_key",
  "missing_key",
  "invalid_type",
  "invalid_value",
  "insecure_url",
  "literal_credential",
  "duplicate_name",
  "budget_required",
] as const;

export type ConfigProblemCode = (typeof CONFIG_PROBLEM_CODES)[number];

export interface ConfigProblem {
  /** The key's path as written in the file (`rented_nodes[0].base_url`); "" for the file as a whole. */
  readonly path: string;
  readonly code: ConfigProblemCode;
  /** What is wrong and what would be right. Never contains a value from the file. */
  readonly message: string;
  /** 1-based position in the file, when the problem has one. */
  readonly line?: number;
  readonly column?: number;
}

/** One line per problem: `source:line:column: path: code: message`. */
export function formatProblem(source: string, problem: ConfigProblem): string {
  const where = problem.line === undefined ? source : `${source}:${problem.line}:${problem.column ?? 1}`;
  const path = problem.path === "" ? "" : `${problem.path}: `;
  return `${where}: ${path}${problem.code}: ${problem.message}`;
}

/** The configuration was refused. `pair serve` prints `message` and exits 1. */
export class ConfigError extends CodedError<"invalid_config"> {
  override readonly name = "ConfigError";
  /** The file (or label) the configuration came from. */
  readonly source: string;
  readonly problems: readonly ConfigProblem[];

  constructor(source: string, problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    const lines = problems.map((p) => formatProblem(source, p));
    // Editing the file helps; retrying the same file does not.
    super(
      "invalid_config",
      `invalid_config: ${source}: the configuration was refused (${count}):\n${lines.join("\n")}`,
      {
        cause: options?.cause,
        retryable: false,
      },
    );
    this.source = source;
    this.problems = Object.freeze(problems.map((p) => Object.freeze({ ...p })));
  }

  /** The problems, one per line. */
  override toString(): string {
    return this.problems.map((p) => formatProblem(this.source, p)).join("\n");
  }

  /** The `--json` twin of the message. */
  toJSON(): { code: "invalid_config"; source: string; problems: readonly ConfigProblem[] } {
    return { code: this.code, source: this.source, problems: this.problems };
  }
}
