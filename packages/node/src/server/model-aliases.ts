/**
 * Model aliases at run time: which names stand for the same model (`model_aliases:` groups), so a
 * request for any of them may go to any upstream advertising any of them, and which alias a name
 * lists under. Without a group a name is only itself (exact-name routing).
 * Must not know: config files, upstreams, how a body is rewritten.
 */

import type { ModelAlias } from "../config/index.js";

export class ModelAliases {
  /** Every name of a group → the group's names, the alias first. */
  readonly #groups = new Map<string, readonly string[]>();

  constructor(aliases: readonly ModelAlias[] = []) {
    for (const alias of aliases) {
      const names = [alias.name, ...alias.models.filter((m) => m !== alias.name)];
      for (const name of names) if (!this.#groups.has(name)) this.#groups.set(name, names);
    }
  }

  /** The names `model` stands for, `model` itself first; just `[model]` when it has no group. */
  namesOf(model: string): readonly string[] {
    const group = this.#groups.get(model);
    if (group === undefined) return [model];
    return group[0] === model ? group : [model, ...group.filter((n) => n !== model)];
  }

  /** The alias of the group `model` belongs to, if any. */
  aliasOf(model: string): string | undefined {
    return this.#groups.get(model)?.[0];
  }

  /** `served` plus the alias of every group one of them belongs to (for /v1/models, /api/tags). */
  withAliases(served: Iterable<string>): Set<string> {
    const out = new Set<string>();
    for (const model of served) {
      out.add(model);
      const alias = this.aliasOf(model);
      if (alias !== undefined) out.add(alias);
    }
    return out;
  }
}

/** No groups: every name is only itself. */
export const NO_ALIASES = new ModelAliases();
