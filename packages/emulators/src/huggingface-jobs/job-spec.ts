/**
 * The create body of `POST /api/jobs/{namespace}` (reference §5.2 [C]) checked the way the
 * emulator enforces it: an image (dockerImage or spaceId), an argv `command`, a known flavor,
 * `timeoutSeconds` (default 1800), labels of at most 100 chars of `[A-Za-z0-9._-]`, plain
 * `environment` and encrypted `secrets` (string maps), `expose.ports`. A refusal is a 400 message.
 * Must not know: HTTP, records, time.
 */

export interface JobSpec {
  readonly dockerImage: string | undefined;
  readonly spaceId: string | undefined;
  readonly command: readonly string[];
  readonly arguments: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly flavor: string;
  readonly timeoutSeconds: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly exposePorts: readonly number[];
}

/** Server default when `timeoutSeconds` is absent (reference §5.2 [C]). */
export const DEFAULT_TIMEOUT_S = 1800;
/** Longest timeout accepted: undocumented ([?]); the emulator takes 7 days. */
export const MAX_TIMEOUT_S = 7 * 24 * 3600;

const LABEL = /^[A-Za-z0-9._-]{1,100}$/;
const LABEL_VALUE = /^[A-Za-z0-9._-]{0,100}$/;

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function stringMap(field: string, value: unknown): Parsed<Record<string, string>> {
  if (value === undefined || value === null) return { ok: true, value: {} };
  if (typeof value !== "object" || Array.isArray(value))
    return { ok: false, message: `${field}: expected an object of strings` };
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (typeof entry !== "string") return { ok: false, message: `${field}.${key}: expected a string` };
    out[key] = entry;
  }
  return { ok: true, value: out };
}

function stringList(field: string, value: unknown): Parsed<string[]> {
  if (value === undefined || value === null) return { ok: true, value: [] };
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string"))
    return { ok: false, message: `${field}: expected an array of strings` };
  return { ok: true, value: value as string[] };
}

export function readLabels(value: unknown): Parsed<Record<string, string>> {
  const labels = stringMap("labels", value);
  if (!labels.ok) return labels;
  for (const [key, entry] of Object.entries(labels.value))
    if (!LABEL.test(key) || !LABEL_VALUE.test(entry))
      return {
        ok: false,
        message: `labels: key "${key}" or its value is not at most 100 characters of [A-Za-z0-9._-]`,
      };
  return labels;
}

export function readJobSpec(body: unknown): Parsed<JobSpec> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, message: "body: expected a JSON object" };
  const b = body as Record<string, unknown>;
  const dockerImage = typeof b["dockerImage"] === "string" ? b["dockerImage"] : undefined;
  const spaceId = typeof b["spaceId"] === "string" ? b["spaceId"] : undefined;
  if ((dockerImage === undefined) === (spaceId === undefined))
    return { ok: false, message: "exactly one of dockerImage or spaceId is required" };
  const command = stringList("command", b["command"]);
  if (!command.ok) return command;
  if (command.value.length === 0) return { ok: false, message: "command: expected a non-empty argv" };
  const args = stringList("arguments", b["arguments"]);
  if (!args.ok) return args;
  const environment = stringMap("environment", b["environment"]);
  if (!environment.ok) return environment;
  const secrets = stringMap("secrets", b["secrets"]);
  if (!secrets.ok) return secrets;
  const labels = readLabels(b["labels"]);
  if (!labels.ok) return labels;
  const flavor = b["flavor"] ?? "cpu-basic";
  if (typeof flavor !== "string") return { ok: false, message: "flavor: expected a string" };
  const timeout = b["timeoutSeconds"] ?? DEFAULT_TIMEOUT_S;
  if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_S)
    return { ok: false, message: `timeoutSeconds: expected an integer in [1, ${MAX_TIMEOUT_S}]` };
  let exposePorts: number[] = [];
  const expose = b["expose"];
  if (expose !== undefined && expose !== null) {
    const ports = (expose as Record<string, unknown>)["ports"];
    if (
      !Array.isArray(ports) ||
      ports.some((p) => typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > 65535)
    )
      return { ok: false, message: "expose.ports: expected an array of port numbers" };
    exposePorts = ports as number[];
  }
  return {
    ok: true,
    value: {
      dockerImage,
      spaceId,
      command: command.value,
      arguments: args.value,
      environment: environment.value,
      secrets: secrets.value,
      flavor,
      timeoutSeconds: timeout,
      labels: labels.value,
      exposePorts,
    },
  };
}
