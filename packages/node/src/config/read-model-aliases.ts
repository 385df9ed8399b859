/**
 * The `model_aliases:` section: one name for the same model as different nodes and engines advertise
 * it (an Ollama tag, a Hugging Face repo id), so routing treats them as one model. Each key is the
 * alias; its list holds the names it stands for. The alias itself is a name of its group. A name may
 * belong to one group only, and a group is never empty.
 * Must not know: YAML, routing, what the nodes advertise.
 */

import type { ModelAlias } from "./config-types.js";
import { describe, isMapping } from "./field-reader.js";
import { LIMITS } from "./defaults.js";
import type { Section } from "./field-reader.js";
import { formatPath } from "./problems.js";

export function readModelAliases(top: Section): readonly ModelAlias[] {
  const value = top.raw("model_aliases");
  const path = top.at("model_aliases");
  const problems = top.problems;
  if (value === undefined) return [];
  if (!isMapping(value)) {
    problems.add(path, "invalid_type", `expected a mapping (alias: [model names]), got ${describe(value)}`);
    return [];
  }
  const groups = top.section("model_aliases", Object.keys(value));
  const aliases: ModelAlias[] = [];
  /** Where each name was first seen, for the message when it turns up again. */
  const seen = new Map<string, string>();
  const claim = (name: string, where: readonly (string | number)[], at: string) => {
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, at);
      return true;
    }
    problems.add(
      where,
      "duplicate_name",
      `this model name is already in the group at ${first}: a name may belong to one alias group only`,
    );
    return false;
  };
  const keys = Object.keys(value);
  if (keys.length > LIMITS.maxModels)
    problems.add(path, "invalid_value", `at most ${LIMITS.maxModels} alias groups`);
  for (const alias of keys.slice(0, LIMITS.maxModels)) {
    const at = formatPath(groups.at(alias));
    if (alias.length === 0 || alias.length > LIMITS.maxStringLength) {
      problems.add(
        groups.at(alias),
        "invalid_value",
        `an alias is 1 to ${LIMITS.maxStringLength} characters`,
        "key",
      );
      continue;
    }
    const raw = groups.raw(alias);
    const names = groups.stringList(alias, LIMITS.maxModels);
    if (raw !== undefined && !Array.isArray(raw)) continue; // reported by stringList
    if (names.length === 0) {
      groups.report(alias, "invalid_value", "an alias group lists at least one model name");
      continue;
    }
    claim(alias, groups.at(alias), at);
    const models: string[] = [];
    for (const name of names) {
      if (name === alias) continue; // the alias is a name of its own group already
      if (models.includes(name)) continue; // listed twice in its own group: harmless
      const index = (raw as readonly unknown[]).indexOf(name);
      if (claim(name, [...groups.at(alias), index], at)) models.push(name);
    }
    aliases.push({ name: alias, models });
  }
  return aliases;
}
