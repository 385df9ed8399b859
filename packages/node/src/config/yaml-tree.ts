/**
 * YAML text to plain values (null-prototype mappings, arrays, scalars) plus an index of where each key
 * and value sits, so any problem found later can carry a line and column. YAML 1.2 core schema: `yes`
 * is a string, keys must be unique, one document per file, aliases bounded. Syntax error messages
 * are the parser's own without its code excerpt and without the tokens it quotes, so no text from
 * the file reaches them.
 * Must not know: what the keys mean, where the text came from.
 */

import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type YAMLParseError,
} from "yaml";
import type { ConfigProblem } from "./config-error.js";
import type { KeyPath, PathProblem } from "./problems.js";

/** Bounds against alias expansion (billion laughs) and runaway nesting. */
const MAX_ALIAS_EXPANSIONS = 100;
const MAX_DEPTH = 64;

export interface Position {
  readonly line: number;
  readonly column: number;
}

export interface YamlTree {
  readonly value: unknown;
  /** Problems found while converting (keys that are not plain scalars, aliases over the bound). */
  readonly problems: readonly PathProblem[];
  /** Where the key or value at `segments` is, or its nearest ancestor when it is absent. */
  locate(segments: KeyPath, at: "key" | "value"): Position | undefined;
}

export type YamlResult =
  | { readonly ok: true; readonly tree: YamlTree }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

interface Offsets {
  key?: number;
  value?: number;
}

/**
 * The parser's message without any text from the file: the parser puts quoted tokens, block scalar
 * headers and tag names after a ": ", and escape sequences at the end.
 */
function syntaxMessage(error: YAMLParseError): string {
  if (error.code === "MULTIPLE_DOCS")
    return "a config file holds one YAML document (a second one starts here)";
  const colon = error.message.indexOf(": ");
  const head = colon === -1 ? error.message : error.message.slice(0, colon);
  return error.code === "BAD_DQ_ESCAPE" ? "Invalid escape sequence in a double-quoted string" : head;
}

class Converter {
  readonly index = new Map<string, Offsets>();
  readonly problems: PathProblem[] = [];
  #aliases = 0;

  constructor(private readonly doc: Document) {}

  #mark(segments: KeyPath, which: keyof Offsets, offset: number | undefined): void {
    if (offset === undefined) return;
    const id = JSON.stringify(segments);
    const entry = this.index.get(id) ?? {};
    entry[which] ??= offset;
    this.index.set(id, entry);
  }

  convert(node: unknown, segments: KeyPath, depth: number): unknown {
    if (depth > MAX_DEPTH) {
      this.problems.push({ segments, at: "value", code: "invalid_value", message: "nested too deeply" });
      return null;
    }
    if (isAlias(node)) {
      this.#mark(segments, "value", node.range?.[0]);
      if (++this.#aliases > MAX_ALIAS_EXPANSIONS) {
        this.problems.push({
          segments,
          at: "value",
          code: "yaml_syntax",
          message: `more than ${MAX_ALIAS_EXPANSIONS} aliases`,
        });
        return null;
      }
      const target = node.resolve(this.doc);
      if (target === undefined) {
        const message = "an alias (*name) refers to no anchor (&name) set before it";
        this.problems.push({ segments, at: "value", code: "yaml_syntax", message });
        return null;
      }
      return this.convert(target, segments, depth + 1);
    }
    if (isScalar(node)) {
      this.#mark(segments, "value", node.range?.[0]);
      return node.value;
    }
    if (isSeq(node)) {
      this.#mark(segments, "value", node.range?.[0]);
      return node.items.map((item, index) => this.convert(item, [...segments, index], depth + 1));
    }
    if (isMap(node)) {
      this.#mark(segments, "value", node.range?.[0]);
      const out = Object.create(null) as Record<string, unknown>;
      for (const pair of node.items) {
        const key = isAlias(pair.key) ? pair.key.resolve(this.doc) : pair.key;
        if (!isScalar(key) || (typeof key.value === "object" && key.value !== null)) {
          const message = "a key must be a plain word, not a list or mapping";
          this.problems.push({ segments, at: "value", code: "invalid_type", message });
          continue;
        }
        const name = String(key.value);
        const path = [...segments, name];
        this.#mark(path, "key", isScalar(pair.key) ? pair.key.range?.[0] : undefined);
        out[name] = this.convert(pair.value, path, depth + 1);
      }
      return out;
    }
    return null;
  }
}

export function readYaml(text: string): YamlResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    version: "1.2",
    schema: "core",
    merge: false,
  });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((error) => ({
        path: "",
        code: "yaml_syntax",
        message: syntaxMessage(error),
        ...position(error.pos[0]),
      })),
    };
  }
  const converter = new Converter(doc);
  const value = converter.convert(doc.contents, [], 0);
  const locate = (segments: KeyPath, at: "key" | "value"): Position | undefined => {
    for (let n = segments.length; n >= 0; n--) {
      const offsets = converter.index.get(JSON.stringify(segments.slice(0, n)));
      const exact = n === segments.length;
      const offset =
        exact && at === "key" ? (offsets?.key ?? offsets?.value) : (offsets?.value ?? offsets?.key);
      if (offset !== undefined) return position(offset);
    }
    return undefined;
  };
  return { ok: true, tree: { value, problems: converter.problems, locate } };
}
