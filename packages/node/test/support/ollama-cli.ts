/**
 * What Ollama's own CLI makes of an `/api/ps` or `/api/tags` answer, for PAIR's tests: the Go client
 * decodes each entry into typed fields (a wrong type or a time that is not RFC 3339 fails the whole
 * command), `ollama ps` and `ollama ls` then print a table whose ID column slices the digest's first
 * 12 characters (a shorter digest panics). The real binary cannot be installed here, so this follows
 * its `cmd.go` (ListRunningHandler, ListHandler) and `format` package rule by rule.
 * Must not know: PAIR, or what a test expects to see.
 */

/** Go's encoding/json refusing a field: the CLI prints the error and exits 1. */
export class GoDecodeError extends Error {}

/** A runtime panic of the CLI (slice bounds out of range). */
export class GoPanic extends Error {}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function goString(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw new GoDecodeError(`json: cannot unmarshal into string field ${key}`);
  return v;
}

function goInt(o: Record<string, unknown>, key: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new GoDecodeError(`json: cannot unmarshal ${JSON.stringify(v)} into int field ${key}`);
  return v;
}

/** A time.Time field: absent or null is the zero time (undefined here). */
function goTime(o: Record<string, unknown>, key: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || !RFC3339.test(v))
    throw new GoDecodeError(`parsing time ${JSON.stringify(v)} as RFC 3339 in field ${key}`);
  return Date.parse(v);
}

function entries(body: unknown): Record<string, unknown>[] {
  const models = (body as { models?: unknown } | null)?.models;
  if (models === undefined || models === null) return [];
  if (!Array.isArray(models)) throw new GoDecodeError("json: models is not an array");
  return models.map((m) => {
    if (typeof m !== "object" || m === null || Array.isArray(m)) throw new GoDecodeError("json: model entry");
    const details = (m as Record<string, unknown>)["details"];
    if (details !== undefined && details !== null && (typeof details !== "object" || Array.isArray(details)))
      throw new GoDecodeError("json: details is not an object");
    return m as Record<string, unknown>;
  });
}

function id(digest: string): string {
  if (digest.length < 12)
    throw new GoPanic(`runtime error: slice bounds out of range [:12] with length ${digest.length}`);
  return digest.slice(0, 12);
}

/** format.HumanBytes: decimal units, one decimal under 10 unless whole. */
export function humanBytes(b: number): string {
  const units: [number, string][] = [
    [1e12, "TB"],
    [1e9, "GB"],
    [1e6, "MB"],
    [1e3, "KB"],
  ];
  const unit = units.find(([size]) => b >= size);
  if (unit === undefined) return `${b} B`;
  const value = b / unit[0];
  return value >= 10 || value === Math.trunc(value)
    ? `${Math.trunc(value)} ${unit[1]}`
    : `${value.toFixed(1)} ${unit[1]}`;
}

function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < 1) return "Less than a second";
  if (seconds === 1) return "1 second";
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes === 1) return "About a minute";
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000);
  if (hours === 1) return "About an hour";
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 14) return `${Math.trunc(hours / 24)} days`;
  if (hours < 24 * 60) return `${Math.trunc(hours / 24 / 7)} weeks`;
  if (hours < 24 * 730) return `${Math.trunc(hours / 24 / 30)} months`;
  return `${Math.trunc(ms / 3_600_000 / 24 / 365)} years`;
}

/** format.HumanTime. */
function humanTime(atMs: number | undefined, zero: string, nowMs: number): string {
  if (atMs === undefined) return zero;
  const delta = nowMs - atMs;
  if (Math.trunc(delta / 3_600_000 / 24 / 365) < -20) return "Forever";
  return delta < 0 ? `${humanDuration(-delta)} from now` : `${humanDuration(delta)} ago`;
}

export interface PsRow {
  readonly name: string;
  readonly id: string;
  readonly size: string;
  readonly processor: string;
  readonly context: string;
  readonly until: string;
}

/** The rows `ollama ps` prints for an `/api/ps` body. */
export function ollamaPs(body: unknown, nowMs = Date.now()): PsRow[] {
  return entries(body).map((m) => {
    const name = goString(m, "name");
    const digest = goString(m, "digest");
    goString(m, "model");
    const size = goInt(m, "size");
    const vram = goInt(m, "size_vram");
    const context = goInt(m, "context_length");
    const expires = goTime(m, "expires_at");
    const processor =
      vram === 0
        ? "100% CPU"
        : vram === size
          ? "100% GPU"
          : vram > size || size === 0
            ? "Unknown"
            : `${Math.round(((size - vram) / size) * 100)}%/${100 - Math.round(((size - vram) / size) * 100)}% CPU/GPU`;
    // time.Since of the zero time is positive too: an entry without expires_at reads "Stopping...".
    const until =
      expires === undefined || nowMs > expires ? "Stopping..." : humanTime(expires, "Never", nowMs);
    return { name, id: id(digest), size: humanBytes(size), processor, context: String(context), until };
  });
}

export interface ListRow {
  readonly name: string;
  readonly id: string;
  readonly size: string;
  readonly modified: string;
}

/** The rows `ollama ls` prints for an `/api/tags` body (a remote model's size is "-"). */
export function ollamaLs(body: unknown, nowMs = Date.now()): ListRow[] {
  return entries(body).map((m) => {
    const remote = goString(m, "remote_model") !== "";
    return {
      name: goString(m, "name"),
      id: id(goString(m, "digest")),
      size: remote ? "-" : humanBytes(goInt(m, "size")),
      modified: humanTime(goTime(m, "modified_at"), "Never", nowMs),
    };
  });
}
