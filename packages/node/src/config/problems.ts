/**
 * Collecting problems while reading: each one is kept with its key path as segments, so the parser
 * can place it in the file afterwards, and rendered as written in YAML (`rented_nodes[0].base_url`).
 * Must not know: YAML, where the file came from, what the keys mean.
 */

import type { ConfigProblemCode } from "./config-error.js";

export type KeyPath = readonly (string | number)[];

/** A problem found by a reader: on the key itself (`at: "key"`, e.g. unknown keys) or its value. */
export interface PathProblem {
  readonly segments: KeyPath;
  readonly at: "key" | "value";
  readonly code: ConfigProblemCode;
  readonly message: string;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MAX_KEY_SHOWN = 64;

/** `node.listen`, `rented_nodes[0].base_url`; odd keys quoted, very long ones not shown. */
export function formatPath(segments: KeyPath): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (segment.length > MAX_KEY_SHOWN) out += `[a key of ${segment.length} characters]`;
    else if (PLAIN_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

export class ProblemList {
  readonly #items: PathProblem[] = [];

  add(segments: KeyPath, code: ConfigProblemCode, message: string, at: "key" | "value" = "value"): void {
    this.#items.push({ segments, at, code, message });
  }

  get items(): readonly PathProblem[] {
    return this.#items;
  }

  get count(): number {
    return this.#items.length;
  }
}
