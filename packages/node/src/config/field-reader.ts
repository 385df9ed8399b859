/**
 * Typed reads from the plain values a config file parsed into. A `Section` is one mapping at a key
 * path: opening it reports unknown keys (with the closest known one), each read checks type, range and
 * unit and reports to the shared problem list, and returns a fallback so reading goes on and every
 * problem is found in one pass. `null` reads as absent. Messages name types, never values.
 * Must not know: YAML, what the keys mean, where the values go.
 */

import { closestKey } from "./closest-key.js";
import type { CredentialRef, HostPort } from "./config-types.js";
import { LITERAL_SECRET_MESSAGE, parseCredentialRef } from "@pair/sponsor";
import { LIMITS, MICRO_USD_PER_USD } from "./defaults.js";
import { expandHome } from "./home-path.js";
import { parseHostPort, parseOutboundUrl } from "./net-address.js";
import type { KeyPath, ProblemList } from "./problems.js";

export type Mapping = Readonly<Record<string, unknown>>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What a value is, for messages (never the value itself). */
export function describe(value: unknown): string {
  if (value === undefined || value === null) return "nothing";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "true/false";
    case "object":
      return "a mapping";
    default:
      return typeof value;
  }
}

/** A duration unit: what the key's suffix means. */
export interface DurationUnit {
  readonly ms: number;
  readonly label: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export class Section {
  readonly #problems: ProblemList;
  readonly #values: Mapping;
  readonly path: KeyPath;

  private constructor(problems: ProblemList, path: KeyPath, values: Mapping) {
    this.#problems = problems;
    this.path = path;
    this.#values = values;
  }

  /** Opens the mapping `value` at `path`: absent → empty; not a mapping → `invalid_type`. */
  static open(problems: ProblemList, value: unknown, path: KeyPath, known: readonly string[]): Section {
    if (value === undefined || value === null) return new Section(problems, path, {});
    if (!isMapping(value)) {
      problems.add(path, "invalid_type", `expected a mapping (key: value), got ${describe(value)}`);
      return new Section(problems, path, {});
    }
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const near = closestKey(key, known);
      const hint = near === undefined ? `known keys here: ${known.join(", ")}` : `did you mean "${near}"?`;
      problems.add([...path, key], "unknown_key", `unknown key; ${hint}`, "key");
    }
    return new Section(problems, path, value);
  }

  get problems(): ProblemList {
    return this.#problems;
  }

  at(key: string): KeyPath {
    return [...this.path, key];
  }

  /** The value at `key`; `null` and absent are both `undefined`. */
  raw(key: string): unknown {
    const value = Object.hasOwn(this.#values, key) ? this.#values[key] : undefined;
    return value === null ? undefined : value;
  }

  has(key: string): boolean {
    return this.raw(key) !== undefined;
  }

  report(key: string, code: Parameters<ProblemList["add"]>[1], message: string): void {
    this.#problems.add(this.at(key), code, message);
  }

  missing(key: string, why = ""): void {
    this.report(key, "missing_key", `required key "${key}" is missing${why}`);
  }

  /** A non-empty string of at most LIMITS.maxStringLength; undefined when absent or wrong. */
  string(key: string, options: { required?: boolean } = {}): string | undefined {
    const value = this.raw(key);
    if (value === undefined) {
      if (options.required === true) this.missing(key);
      return undefined;
    }
    if (typeof value !== "string") {
      this.report(key, "invalid_type", `expected a string, got ${describe(value)}`);
      return undefined;
    }
    if (value.length === 0 || value.length > LIMITS.maxStringLength) {
      this.report(key, "invalid_value", `must be 1 to ${LIMITS.maxStringLength} characters long`);
      return undefined;
    }
    return value;
  }

  /** A name: letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 63 long. */
  name(key: string, options: { required?: boolean } = {}): string | undefined {
    const value = this.string(key, options);
    if (value === undefined) return undefined;
    if (value.length > LIMITS.maxNameLength || !NAME.test(value)) {
      this.report(
        key,
        "invalid_value",
        `a name is 1 to ${LIMITS.maxNameLength} letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(key: string, options: readonly T[], fallback: T): T;
  oneOf<T extends string>(key: string, options: readonly T[], fallback?: undefined): T | undefined;
  oneOf<T extends string>(key: string, options: readonly T[], fallback?: T): T | undefined {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const found = options.find((option) => option === value);
    if (found !== undefined) return found;
    const code = typeof value === "string" ? "invalid_value" : "invalid_type";
    this.report(key, code, `expected one of ${options.join(", ")}`);
    return fallback;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value === "boolean") return value;
    this.report(key, "invalid_type", `expected true or false, got ${describe(value)}`);
    return fallback;
  }

  #number(key: string): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "number") {
      this.report(key, "invalid_type", `expected a number, got ${describe(value)}`);
      return undefined;
    }
    if (!Number.isFinite(value)) {
      this.report(key, "invalid_value", "must be a finite number");
      return undefined;
    }
    return value;
  }

  /** A whole number in [min, max]. */
  integer(key: string, bounds: { min: number; max: number }, fallback: number): number {
    const value = this.#number(key);
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      this.report(key, "invalid_value", `must be a whole number from ${bounds.min} to ${bounds.max}`);
      return fallback;
    }
    return value;
  }

  /** A duration in the unit the key names, > 0 (fractions valid), returned in whole milliseconds. */
  durationMs(key: string, unit: DurationUnit, fallbackMs: number, maxMs = LIMITS.maxDurationMs): number {
    const value = this.#number(key);
    if (value === undefined) return fallbackMs;
    if (value <= 0) {
      this.report(key, "invalid_value", `must be a number of ${unit.label} greater than 0`);
      return fallbackMs;
    }
    const ms = Math.round(value * unit.ms);
    if (ms < 1) {
      this.report(key, "invalid_value", "must be at least 1 millisecond");
      return fallbackMs;
    }
    if (ms > maxMs) {
      this.report(key, "invalid_value", `must be at most ${maxMs / unit.ms} ${unit.label}`);
      return fallbackMs;
    }
    return ms;
  }

  /** A positive amount of US dollars as whole micro-dollars; undefined when absent or wrong. */
  microUsd(key: string): number | undefined {
    const value = this.#number(key);
    if (value === undefined) return undefined;
    const micro = Math.round(value * MICRO_USD_PER_USD);
    if (value <= 0 || micro < 1 || value > LIMITS.maxBudgetUsd) {
      this.report(key, "invalid_value", `must be from 0.000001 to ${LIMITS.maxBudgetUsd} USD`);
      return undefined;
    }
    return micro;
  }

  /** A list of at most `max` entries; absent → []. */
  list(key: string, max: number): readonly unknown[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.report(key, "invalid_type", `expected a list, got ${describe(value)}`);
      return [];
    }
    if (value.length > max) {
      this.report(key, "invalid_value", `at most ${max} entries`);
      return value.slice(0, max) as unknown[];
    }
    return value as unknown[];
  }

  /** A list of strings (each non-empty, bounded); wrong entries are reported and skipped. */
  stringList(key: string, max: number): readonly string[] {
    const out: string[] = [];
    this.list(key, max).forEach((entry, index) => {
      const path = [...this.at(key), index];
      if (typeof entry !== "string") {
        this.#problems.add(path, "invalid_type", `expected a string, got ${describe(entry)}`);
      } else if (entry.length === 0 || entry.length > LIMITS.maxStringLength) {
        this.#problems.add(path, "invalid_value", `must be 1 to ${LIMITS.maxStringLength} characters long`);
      } else {
        out.push(entry);
      }
    });
    return out;
  }

  /** The mapping under `key` (absent → an empty section). */
  section(key: string, known: readonly string[]): Section {
    return Section.open(this.#problems, this.raw(key), this.at(key), known);
  }

  /** An outbound base URL (http only to loopback), normalised; undefined when absent or wrong. */
  url(key: string, options: { required?: boolean } = {}): string | undefined {
    const value = this.string(key, options);
    if (value === undefined) return undefined;
    const parsed = parseOutboundUrl(value);
    if (parsed.ok) return parsed.value;
    this.report(key, parsed.code, parsed.message);
    return undefined;
  }

  /** `host:port`; undefined when absent or wrong. */
  hostPort(key: string): HostPort | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "string") {
      this.report(key, "invalid_type", `expected a string "host:port", got ${describe(value)}`);
      return undefined;
    }
    const parsed = parseHostPort(value);
    if (parsed.ok) return parsed.value;
    this.report(key, parsed.code, parsed.message);
    return undefined;
  }

  /** A file path, `~` expanded with `homeDir`, absolute; undefined when absent or wrong. */
  filePath(key: string, homeDir: string): string | undefined {
    const value = this.string(key);
    if (value === undefined) return undefined;
    const expanded = expandHome(value, homeDir);
    if (expanded.ok) return expanded.path;
    this.report(key, "invalid_value", expanded.message);
    return undefined;
  }

  /** A credential reference. Whatever else is found there is treated as a secret: never echoed. */
  credential(key: string, options: { required?: boolean } = {}): CredentialRef | undefined {
    const value = this.raw(key);
    if (value === undefined) {
      if (options.required === true) this.missing(key, " (os-credential-store:SERVICE/ACCOUNT)");
      return undefined;
    }
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
      this.report(key, "literal_credential", LITERAL_SECRET_MESSAGE);
      return undefined;
    }
    if (typeof value !== "string") {
      this.report(
        key,
        "invalid_type",
        `expected "os-credential-store:SERVICE/ACCOUNT", got ${describe(value)}`,
      );
      return undefined;
    }
    const parsed = parseCredentialRef(value);
    if (parsed.ok) return parsed.ref;
    this.report(key, parsed.code, parsed.message);
    return undefined;
  }
}
