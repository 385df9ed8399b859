/**
 * From YAML text to a `PairConfig`, or one `ConfigError` listing every problem with its path, code,
 * line and column. The top level, the order the sections are read in, and the final freeze live here.
 * Must not know: where the text came from (the file system), what runs the node.
 */

import { ConfigError, type ConfigProblem } from "./config-error.js";
import type { ConfigHost, PairConfig } from "./config-types.js";
import { Section } from "./field-reader.js";
import { readEngines } from "./read-engines.js";
import { readModelAliases } from "./read-model-aliases.js";
import { readNode } from "./read-node.js";
import { readProviders, readTls } from "./read-providers.js";
import { readRentedNodes } from "./read-rented-nodes.js";
import { formatPath, ProblemList } from "./problems.js";
import { systemHost } from "./system-host.js";
import { readYaml } from "./yaml-tree.js";

export const TOP_LEVEL_KEYS = [
  "node",
  "engines",
  "rented_nodes",
  "model_aliases",
  "providers",
  "tls",
] as const;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Problems in the order of the file (a stable sort: those without a position keep theirs, last). */
function inFileOrder(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const rank = (p: ConfigProblem): number =>
    p.line === undefined ? Number.MAX_SAFE_INTEGER : p.line * 100_000 + (p.column ?? 0);
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

/** Reads already-parsed values (the top-level mapping) into a config, reporting to `problems`. */
function readConfigValue(problems: ProblemList, value: unknown, host: ConfigHost): PairConfig {
  const top = Section.open(problems, value, [], TOP_LEVEL_KEYS);
  const node = readNode(problems, top.raw("node"), host);
  return {
    node,
    engines: readEngines(problems, top),
    rentedNodes: readRentedNodes(problems, top, node.name),
    modelAliases: readModelAliases(top),
    providers: readProviders(top),
    tls: readTls(top, host),
  };
}

/**
 * Parses and validates a configuration. `source` names it in messages (a path, or a label);
 * `host` supplies the home directory and host name (default: this machine's).
 * @throws ConfigError listing every problem found.
 */
export function parseConfig(text: string, source: string, host: ConfigHost = systemHost()): PairConfig {
  const yaml = readYaml(text);
  if (!yaml.ok) throw new ConfigError(source, yaml.problems);
  const problems = new ProblemList();
  for (const p of yaml.tree.problems) problems.add(p.segments, p.code, p.message, p.at);
  const config = readConfigValue(problems, yaml.tree.value, host);
  if (problems.count > 0) {
    const located: ConfigProblem[] = problems.items.map((p) => ({
      path: formatPath(p.segments),
      code: p.code,
      message: p.message,
      ...yaml.tree.locate(p.segments, p.at),
    }));
    throw new ConfigError(source, inFileOrder(located));
  }
  return deepFreeze(config);
}

/** The configuration of a node with no config file. */
export function defaultConfig(host: ConfigHost = systemHost()): PairConfig {
  return parseConfig("", "defaults", host);
}
