/**
 * The Jobs API's JSON (reference §5.2, §5.3, §5.6 [C]): the create body, the Job object as read
 * (what clients index is checked: `id`, `owner.name`, `status.stage`, `createdAt`), the hardware
 * list, and their mapping to PAIR's job model. The `Link` header's next URL is read here too.
 * Must not know: HTTP libraries, the hosting contract.
 */

import { WireShapeError } from "../wire.js";
import type { HfJob, HfJobFlavor, HfJobSpec, HfJobStage } from "./jobs-model.js";
import { HF_JOB_STAGES } from "./jobs-model.js";

export interface WireJobCreateBody {
  readonly dockerImage: string;
  readonly command: readonly string[];
  readonly arguments: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly flavor: string;
  readonly timeoutSeconds: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly expose?: { readonly ports: readonly number[] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringRecord(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

const timeMs = (value: unknown): number | undefined => {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
};

/** The create body; secret values are revealed here and nowhere else. */
export function toJobCreateBody(spec: HfJobSpec): WireJobCreateBody {
  return {
    dockerImage: spec.dockerImage,
    command: [...spec.command],
    arguments: [],
    environment: { ...spec.environment },
    secrets: Object.fromEntries(Object.entries(spec.secrets).map(([name, token]) => [name, token.reveal()])),
    flavor: spec.flavor,
    timeoutSeconds: spec.timeoutSeconds,
    labels: { ...spec.labels },
    ...(spec.exposePorts.length === 0 ? {} : { expose: { ports: [...spec.exposePorts] } }),
  };
}

export function readJob(value: unknown, fallbackNamespace: string, path = "job"): HfJob {
  if (!isObject(value)) throw new WireShapeError(`${path}: expected an object`);
  const id = value["id"];
  if (typeof id !== "string" || id === "") throw new WireShapeError(`${path}.id: expected a string`);
  const status = value["status"];
  if (!isObject(status) || typeof status["stage"] !== "string")
    throw new WireShapeError(`${path}.status.stage: expected a string`);
  const createdAtMs = timeMs(value["createdAt"]);
  if (createdAtMs === undefined) throw new WireShapeError(`${path}.createdAt: expected an RFC 3339 time`);
  const owner = value["owner"];
  const namespace = isObject(owner) && typeof owner["name"] === "string" ? owner["name"] : fallbackNamespace;
  const rawStage = status["stage"];
  const stage = (HF_JOB_STAGES as readonly string[]).includes(rawStage)
    ? (rawStage as HfJobStage)
    : "unknown";
  const secrets = value["secrets"];
  return {
    namespace,
    id,
    stage,
    rawStage,
    message: typeof status["message"] === "string" ? status["message"] : undefined,
    labels: stringRecord(value["labels"]),
    environment: stringRecord(value["environment"]),
    // Names only: a list (JS client, CLI) or, per Python's hints, a map whose values are not read.
    secretNames: Array.isArray(secrets) ? strings(secrets) : isObject(secrets) ? Object.keys(secrets) : [],
    flavor: typeof value["flavor"] === "string" ? value["flavor"] : undefined,
    timeoutSeconds: typeof value["timeoutSeconds"] === "number" ? value["timeoutSeconds"] : undefined,
    dockerImage: typeof value["dockerImage"] === "string" ? value["dockerImage"] : undefined,
    command: strings(value["command"]),
    exposeUrls: strings(status["exposeUrls"]),
    createdAtMs,
    startedAtMs: timeMs(value["startedAt"]),
    finishedAtMs: timeMs(value["finishedAt"]),
  };
}

export function readJobList(value: unknown, namespace: string): HfJob[] {
  if (!Array.isArray(value)) throw new WireShapeError("jobs list: expected an array");
  return value.map((item: unknown, index) => readJob(item, namespace, `jobs[${index}]`));
}

export function readHardware(value: unknown): HfJobFlavor[] {
  if (!Array.isArray(value)) throw new WireShapeError("hardware: expected an array");
  return value.map((item: unknown, index) => {
    if (!isObject(item) || typeof item["name"] !== "string")
      throw new WireShapeError(`hardware[${index}].name: expected a string`);
    const unit = item["unitLabel"];
    const cost = item["unitCostUSD"];
    if (typeof cost !== "number" || (unit !== undefined && unit !== "minute"))
      throw new WireShapeError(`hardware[${index}]: expected unitCostUSD per minute`);
    const accelerator = item["accelerator"];
    return {
      name: item["name"],
      prettyName: typeof item["prettyName"] === "string" ? item["prettyName"] : undefined,
      gpuModel:
        isObject(accelerator) && typeof accelerator["model"] === "string" ? accelerator["model"] : null,
      gpuCount: isObject(accelerator) ? Number(accelerator["quantity"] ?? 1) || 1 : 0,
      usdPerMinute: cost,
    };
  });
}

/** The URL of `rel="next"` in a `Link` header, if any. */
export function nextLink(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(",")) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}
