/**
 * Reads typed fields out of a parsed JSON request body and remembers the first problem found,
 * so a handler reads every field it needs and then answers once. Problems are neutral
 * (field, kind, expected, got); each dialect words them in its own error shape.
 */

export interface FieldProblem {
  readonly kind: "missing" | "type" | "range";
  /** Path of the field, e.g. "messages[0].content". */
  readonly field: string;
  /** What was expected, e.g. "an integer" or "a value >= 1". */
  readonly expected: string;
  /** What came, e.g. "a string" or "0". */
  readonly got: string;
}

/** "a string", "an array", "null", … as error messages name a JSON value's type. */
export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where a reader and its children keep the first problem. */
interface ProblemSink {
  problem: FieldProblem | undefined;
}

export class FieldReader {
  constructor(
    private readonly body: Record<string, unknown>,
    private readonly prefix = "",
    private readonly sink: ProblemSink = { problem: undefined },
  ) {}

  /** The first problem recorded, by this reader or one of its children. */
  get problem(): FieldProblem | undefined {
    return this.sink.problem;
  }

  /** Records a problem unless one is already recorded. Returns undefined, for `return r.report(…)`. */
  report(problem: FieldProblem): undefined {
    this.sink.problem ??= problem;
    return undefined;
  }

  path(field: string): string {
    return this.prefix + field;
  }

  raw(field: string): unknown {
    return this.body[field];
  }

  missing(field: string, expected: string): undefined {
    return this.report({ kind: "missing", field: this.path(field), expected, got: "nothing" });
  }

  mistyped(field: string, expected: string, value: unknown): undefined {
    return this.report({ kind: "type", field: this.path(field), expected, got: describeJson(value) });
  }

  requiredString(field: string): string | undefined {
    const value = this.body[field];
    if (value === undefined) return this.missing(field, "a string");
    if (typeof value !== "string") return this.mistyped(field, "a string", value);
    return value;
  }

  optionalString(field: string): string | undefined {
    const value = this.body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string") return this.mistyped(field, "a string", value);
    return value;
  }

  optionalBoolean(field: string): boolean | undefined {
    const value = this.body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") return this.mistyped(field, "a boolean", value);
    return value;
  }

  optionalInteger(field: string, min: number): number | undefined {
    const value = this.body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value))
      return this.mistyped(field, "an integer", value);
    if (value < min) {
      return this.report({
        kind: "range",
        field: this.path(field),
        expected: `a value >= ${min}`,
        got: String(value),
      });
    }
    return value;
  }

  optionalObject(field: string): FieldReader | undefined {
    const value = this.body[field];
    if (value === undefined || value === null) return undefined;
    if (!isRecord(value)) return this.mistyped(field, "an object", value);
    return this.child(value, `${this.path(field)}.`);
  }

  /** A reader for a nested object whose problems are reported here. */
  child(body: Record<string, unknown>, prefix: string): FieldReader {
    return new FieldReader(body, prefix, this.sink);
  }
}
