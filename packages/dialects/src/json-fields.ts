/**
 * Reading an untrusted JSON value field by field, with the path of every field kept for the error
 * message. Parsers are small functions `(value, path) => T`; `ObjectFields` applies them to the keys
 * of one object and builds a copy in which unknown keys pass through untouched and known optional
 * keys sent as `null` are dropped.
 *
 * A problem is thrown as `FieldProblem` and caught at exactly one place, `readBody`, which turns it
 * into a `DialectResult`; nothing outside this folder ever sees the throw.
 *
 * Must not know: either dialect, HTTP, limits.
 */

import { accepted, invalidRequest, type DialectResult } from "./dialect-error.js";

export class FieldProblem extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

export function fail(path: string, problem: string): never {
  throw new FieldProblem(path, problem);
}

/** Runs a reader over an untrusted body; the only place a `FieldProblem` is caught. */
export function readBody<T>(read: () => T): DialectResult<T> {
  try {
    return accepted(read());
  } catch (error) {
    if (error instanceof FieldProblem) return { ok: false, error: invalidRequest(error.path, error.problem) };
    throw error;
  }
}

export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** How a JSON value reads in a message: "a string", "null", "an array". */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return Number.isInteger(value) ? "an integer" : "a number";
    case "boolean":
      return "a boolean";
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

export function expected(path: string, what: string, value: unknown): never {
  return fail(path, `expected ${what}, got ${describe(value)}`);
}

export type Parse<T> = (value: unknown, path: string) => T;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A typed list that an engine may have sent as something else: the list, or empty. (Unlike a bare
 * `Array.isArray`, it keeps the element type of a readonly array.)
 */
export function listOf<T>(value: readonly T[] | null | undefined): readonly T[] {
  return Array.isArray(value) ? (value as readonly T[]) : [];
}

export const str: Parse<string> = (value, path) =>
  typeof value === "string" ? value : expected(path, "a string", value);

export const nonEmptyStr: Parse<string> = (value, path) => {
  const text = str(value, path);
  return text === "" ? fail(path, "expected a non-empty string") : text;
};

export const bool: Parse<boolean> = (value, path) =>
  typeof value === "boolean" ? value : expected(path, "a boolean", value);

export const num: Parse<number> = (value, path) =>
  typeof value === "number" && Number.isFinite(value) ? value : expected(path, "a number", value);

export const int: Parse<number> = (value, path) =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : expected(path, "an integer", value);

export function intAtLeast(min: number): Parse<number> {
  return (value, path) => {
    const n = int(value, path);
    return n >= min ? n : fail(path, `expected an integer >= ${min}, got ${n}`);
  };
}

export function numAtLeast(min: number): Parse<number> {
  return (value, path) => {
    const n = num(value, path);
    return n >= min ? n : fail(path, `expected a number >= ${min}, got ${n}`);
  };
}

export function literal<const T extends string>(values: readonly T[]): Parse<T> {
  const list = values.map((v) => JSON.stringify(v)).join(", ");
  return (value, path) =>
    typeof value === "string" && (values as readonly string[]).includes(value)
      ? (value as T)
      : expected(path, `one of ${list}`, value);
}

/** Any JSON object, passed through as is (schemas, tool parameters, arguments). */
export const record: Parse<Record<string, unknown>> = (value, path) =>
  isRecord(value) ? value : expected(path, "an object", value);

/** A count bound on an array, named so the message says which limit refused it. */
export interface CountLimit {
  readonly max: number;
  readonly limitName: string;
  readonly noun: string;
}

export function arrayOf<T>(item: Parse<T>, limit?: CountLimit, what = "an array"): Parse<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) return expected(path, what, value);
    if (limit !== undefined && value.length > limit.max) {
      fail(
        path,
        `at most ${limit.max} ${limit.noun} allowed (limit ${limit.limitName}), got ${value.length}`,
      );
    }
    return value.map((element, index) => item(element, childPath(path, index)));
  };
}

export function nonEmpty<T>(parse: Parse<readonly T[]>, noun: string): Parse<readonly T[]> {
  return (value, path) => {
    const list = parse(value, path);
    return list.length === 0 ? fail(path, `expected at least one ${noun}`) : list;
  };
}

/** The fields of one JSON object: validated values replace the originals in a shallow copy. */
export class ObjectFields {
  private readonly out: Record<string, unknown>;

  constructor(
    readonly source: Record<string, unknown>,
    readonly path: string,
  ) {
    this.out = { ...source };
  }

  static of(value: unknown, path: string, what = "an object"): ObjectFields {
    return new ObjectFields(isRecord(value) ? value : expected(path, what, value), path);
  }

  /** A field that must be present and not `null`. */
  req<T>(key: string, parse: Parse<T>): T {
    const value = this.source[key];
    const at = childPath(this.path, key);
    if (value === undefined || value === null) fail(at, "is required");
    const parsed = parse(value, at);
    this.out[key] = parsed;
    return parsed;
  }

  /** A field that may be absent; `null` counts as absent and is dropped from the copy. */
  opt<T>(key: string, parse: Parse<T>): T | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) {
      delete this.out[key];
      return undefined;
    }
    const parsed = parse(value, childPath(this.path, key));
    if (parsed === undefined) delete this.out[key];
    else this.out[key] = parsed;
    return parsed;
  }

  /** Sets a field of the copy (a default, or a normalised value). */
  set(key: string, value: unknown): void {
    this.out[key] = value;
  }

  /**
   * The validated copy, unknown keys included. The cast is this module's one trust boundary: every
   * key `T` declares has been read by `req`/`opt` above.
   */
  done<T>(): T {
    return this.out as T;
  }
}
