/**
 * Reading a v2 `POST /v2/pods` body (CreatePodRequest) the way the live API is documented to:
 * JSON-schema failures are 422 with an `errors[]` of "$.path: problem" strings (unknown fields
 * included: the schema has `unevaluatedProperties: false`, which is also what makes a v1-style
 * `gpuTypeIds` list fail, one GPU type per request); rule failures the handler checks (neither or
 * both of `gpu`/`cpu`, an unknown GPU type) are 400.
 * Must not know: pods, capacity, HTTP.
 */

import type { GpuCatalog, GpuType } from "./catalog.js";

export type Cloud = "SECURE" | "COMMUNITY";

export interface CreatePodInput {
  readonly name: string;
  readonly image: string;
  readonly args: string;
  readonly disk: number;
  readonly ports: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly registry: string | null;
  readonly mounts: {
    readonly persistent?: { readonly size: number; readonly path: string };
    readonly network?: readonly { readonly volumeId: string; readonly path: string }[];
  };
  readonly gpuType: GpuType;
  readonly gpuCount: number;
  readonly cloud: Cloud;
  readonly dataCenterIds: readonly string[];
  readonly globalNetworking: boolean;
}

export type CreateReading =
  | { readonly ok: true; readonly input: CreatePodInput }
  | {
      readonly ok: false;
      readonly status: 400 | 422;
      readonly detail: string;
      readonly errors?: readonly string[];
    };

/** Container disk (GB) when the request names none [I: the spec gives no default; v1's was 50]. */
export const DEFAULT_DISK_GB = 50;
export const MAX_ENV_ENTRIES = 50;

const TOP_LEVEL = new Set([
  "name",
  "image",
  "args",
  "disk",
  "ports",
  "env",
  "registry",
  "mounts",
  "gpu",
  "cpu",
  "cloud",
  "dataCenterIds",
  "globalNetworking",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class SchemaErrors {
  readonly list: string[] = [];
  add(path: string, problem: string): void {
    this.list.push(`${path}: ${problem}`);
  }
  unknownKeys(path: string, value: Record<string, unknown>, allowed: ReadonlySet<string>): void {
    const extra = Object.keys(value).filter((key) => !allowed.has(key));
    if (extra.length > 0)
      this.add(path, `additional properties ${extra.map((k) => `'${k}'`).join(", ")} not allowed`);
  }
  string(path: string, value: unknown, minLength = 0): string | undefined {
    if (typeof value !== "string") return void this.add(path, `expected string, got ${typeName(value)}`);
    if (value.length < minLength)
      return void this.add(path, `minLength: got ${value.length}, want ${minLength}`);
    return value;
  }
  integer(path: string, value: unknown, minimum: number): number | undefined {
    if (typeof value !== "number" || !Number.isInteger(value))
      return void this.add(path, `expected integer, got ${typeName(value)}`);
    if (value < minimum) return void this.add(path, `minimum: got ${value}, want ${minimum}`);
    return value;
  }
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value;
}

function readMounts(errors: SchemaErrors, value: unknown): CreatePodInput["mounts"] {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    errors.add("$.mounts", `expected object, got ${typeName(value)}`);
    return {};
  }
  errors.unknownKeys("$.mounts", value, new Set(["persistent", "network"]));
  const mounts: {
    persistent?: { size: number; path: string };
    network?: { volumeId: string; path: string }[];
  } = {};
  const persistent = value["persistent"];
  if (persistent !== undefined) {
    if (!isRecord(persistent))
      errors.add("$.mounts.persistent", `expected object, got ${typeName(persistent)}`);
    else {
      errors.unknownKeys("$.mounts.persistent", persistent, new Set(["size", "path"]));
      const size = errors.integer("$.mounts.persistent.size", persistent["size"], 10);
      const path = errors.string("$.mounts.persistent.path", persistent["path"], 1);
      if (size !== undefined && path !== undefined) mounts.persistent = { size, path };
    }
  }
  const network = value["network"];
  if (network !== undefined) {
    if (!Array.isArray(network) || network.length > 1)
      errors.add("$.mounts.network", "expected an array of at most 1 item");
    else {
      mounts.network = [];
      network.forEach((item: unknown, index) => {
        const path = `$.mounts.network[${index}]`;
        if (!isRecord(item)) return errors.add(path, `expected object, got ${typeName(item)}`);
        errors.unknownKeys(path, item, new Set(["volumeId", "path"]));
        const volumeId = errors.string(`${path}.volumeId`, item["volumeId"], 1);
        const mountPath = errors.string(`${path}.path`, item["path"], 1);
        if (volumeId !== undefined && mountPath !== undefined)
          mounts.network?.push({ volumeId, path: mountPath });
      });
    }
  }
  return mounts;
}

function readEnv(errors: SchemaErrors, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    errors.add("$.env", `expected object, got ${typeName(value)}`);
    return {};
  }
  const env: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") errors.add(`$.env.${key}`, `expected string, got ${typeName(entry)}`);
    else env[key] = entry;
  }
  return env;
}

function readStrings(errors: SchemaErrors, path: string, value: unknown, pattern?: RegExp): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    errors.add(path, `expected array, got ${typeName(value)}`);
    return [];
  }
  const items: string[] = [];
  value.forEach((item: unknown, index) => {
    if (typeof item !== "string") errors.add(`${path}[${index}]`, `expected string, got ${typeName(item)}`);
    else if (pattern && !pattern.test(item))
      errors.add(`${path}[${index}]`, `does not match ${String(pattern)}`);
    else items.push(item);
  });
  return items;
}

export function readCreateRequest(body: Record<string, unknown>, catalog: GpuCatalog): CreateReading {
  const errors = new SchemaErrors();
  errors.unknownKeys("$", body, TOP_LEVEL);
  const missing = ["name", "image"].filter((key) => body[key] === undefined);
  if (missing.length > 0) errors.add("$", `missing properties ${missing.map((k) => `'${k}'`).join(", ")}`);
  const name = body["name"] === undefined ? undefined : errors.string("$.name", body["name"], 1);
  const image = body["image"] === undefined ? undefined : errors.string("$.image", body["image"], 1);
  const args = body["args"] === undefined ? "" : errors.string("$.args", body["args"]);
  const disk = body["disk"] === undefined ? DEFAULT_DISK_GB : errors.integer("$.disk", body["disk"], 1);
  const ports = readStrings(errors, "$.ports", body["ports"], /^\d{1,5}\/(http|tcp)$/);
  const env = readEnv(errors, body["env"]);
  const registry =
    body["registry"] === undefined || body["registry"] === null
      ? null
      : errors.string("$.registry", body["registry"]);
  const mounts = readMounts(errors, body["mounts"]);
  const cloud = body["cloud"] ?? "SECURE";
  if (cloud !== "SECURE" && cloud !== "COMMUNITY")
    errors.add("$.cloud", `value must be one of 'SECURE', 'COMMUNITY'`);
  const dataCenterIds = readStrings(errors, "$.dataCenterIds", body["dataCenterIds"]);
  const globalNetworking = body["globalNetworking"] ?? false;
  if (typeof globalNetworking !== "boolean")
    errors.add("$.globalNetworking", `expected boolean, got ${typeName(globalNetworking)}`);
  const gpu = body["gpu"];
  let gpuId: string | undefined;
  let gpuCount = 1;
  if (gpu !== undefined) {
    if (!isRecord(gpu)) errors.add("$.gpu", `expected object, got ${typeName(gpu)}`);
    else {
      errors.unknownKeys("$.gpu", gpu, new Set(["id", "count"]));
      if (gpu["id"] === undefined) errors.add("$.gpu", "missing properties 'id'");
      else gpuId = errors.string("$.gpu.id", gpu["id"], 1);
      if (gpu["count"] !== undefined) gpuCount = errors.integer("$.gpu.count", gpu["count"], 1) ?? 1;
    }
  }
  if (errors.list.length > 0)
    return { ok: false, status: 422, detail: "Request validation failed.", errors: errors.list };

  if ((gpu === undefined) === (body["cpu"] === undefined))
    return { ok: false, status: 400, detail: "exactly one of gpu or cpu must be set" };
  if (body["cpu"] !== undefined)
    return { ok: false, status: 400, detail: "CPU pods are not available in this emulator: set gpu" };
  if (mounts.persistent && mounts.network)
    return { ok: false, status: 400, detail: "mounts.persistent and mounts.network are mutually exclusive" };
  if (Object.keys(env).length > MAX_ENV_ENTRIES)
    return { ok: false, status: 400, detail: `at most ${MAX_ENV_ENTRIES} environment variables per pod` };
  const gpuType = catalog.type(gpuId ?? "");
  if (!gpuType) return { ok: false, status: 400, detail: `unknown GPU type '${gpuId ?? ""}'` };
  if (gpuCount > gpuType.maxCountPerPod)
    return {
      ok: false,
      status: 400,
      detail: `gpu.count ${gpuCount} exceeds the maximum of ${gpuType.maxCountPerPod} for ${gpuType.id}`,
    };
  return {
    ok: true,
    input: {
      name: name ?? "",
      image: image ?? "",
      args: args ?? "",
      disk: disk ?? DEFAULT_DISK_GB,
      ports,
      env,
      registry: registry ?? null,
      mounts,
      gpuType,
      gpuCount,
      cloud: cloud as Cloud,
      dataCenterIds,
      globalNetworking: globalNetworking === true,
    },
  };
}
