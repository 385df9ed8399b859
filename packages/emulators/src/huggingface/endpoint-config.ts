/**
 * An endpoint's configuration as the API takes it: validation of a create body, the partial merge
 * of an update (nested objects merge; `model.image`, lists and maps are replaced whole), and the
 * typed view the emulator needs. Messages name the offending field, as HF's 400s do.
 * Must not know: states, HTTP, hardware prices (the world checks the compute exists).
 */

export type AccessType = "public" | "authenticated" | "private" | "protected";

export interface EndpointConfig {
  readonly name: string;
  readonly type: AccessType;
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly minReplica: number;
  readonly maxReplica: number;
  /** Minutes idle before scaling to zero; undefined: never (also when minReplica > 0). */
  readonly scaleToZeroTimeout: number | undefined;
  readonly repository: string;
  /** The whole JSON as stored (normalised), echoed back in responses. */
  readonly json: Readonly<Record<string, unknown>>;
}

export type ConfigResult =
  { readonly ok: true; readonly config: EndpointConfig } | { readonly ok: false; readonly message: string };

const NAME = /^[a-z0-9][a-z0-9-]{0,30}[a-z0-9]$/;
const TYPES: readonly string[] = ["public", "authenticated", "private", "protected"];
/** Keys replaced whole by an update (never merged). */
const REPLACED = new Set(["image", "env", "secrets", "command", "args", "measure", "tags", "customRouter"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class Problem extends Error {}

function objectAt(root: Record<string, unknown>, path: string): Record<string, unknown> {
  const value = root[path.split(".").at(-1) ?? path];
  if (!isObject(value)) throw new Problem(`${path}: expected an object`);
  return value;
}

function stringAt(parent: Record<string, unknown>, key: string, path: string): string {
  const value = parent[key];
  if (typeof value !== "string" || value === "") throw new Problem(`${path}: expected a non-empty string`);
  return value;
}

function intAt(parent: Record<string, unknown>, key: string, path: string, min: number): number {
  const value = parent[key];
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new Problem(`${path}: expected an integer >= ${min}`);
  return value;
}

/** Checks a full configuration (a create body, or an update merged into the current one). */
export function readConfig(body: unknown): ConfigResult {
  try {
    if (!isObject(body)) throw new Problem("body: expected a JSON object");
    const name = stringAt(body, "name", "name");
    if (!NAME.test(name))
      throw new Problem(
        `name: "${name}" is invalid: 2 to 32 lowercase letters, digits or '-', starting and ending with a letter or digit`,
      );
    const type = body["type"] ?? "private";
    if (typeof type !== "string" || !TYPES.includes(type))
      throw new Problem(`type: expected one of public, authenticated, private`);
    const provider = objectAt(body, "provider");
    const compute = objectAt(body, "compute");
    const scaling = objectAt(compute, "compute.scaling");
    const model = objectAt(body, "model");
    const minReplica = intAt(scaling, "minReplica", "compute.scaling.minReplica", 0);
    const maxReplica = intAt(scaling, "maxReplica", "compute.scaling.maxReplica", 1);
    if (maxReplica < minReplica)
      throw new Problem("compute.scaling.maxReplica: must not be below compute.scaling.minReplica");
    const timeout = scaling["scaleToZeroTimeout"];
    if (timeout !== undefined && timeout !== null && (typeof timeout !== "number" || !(timeout > 0)))
      throw new Problem("compute.scaling.scaleToZeroTimeout: expected a number of minutes > 0, or null");
    if (typeof timeout === "number" && minReplica !== 0)
      throw new Problem("compute.scaling.scaleToZeroTimeout: needs compute.scaling.minReplica = 0");
    if ("task" in model && typeof model["task"] !== "string")
      throw new Problem("model.task: expected a string (omit it when unknown; null is refused)");
    stringAt(model, "framework", "model.framework");
    const image = model["image"] ?? { huggingface: {} };
    if (!isObject(image) || Object.keys(image).length !== 1)
      throw new Problem("model.image: expected an object with exactly one key naming the engine");
    const json: Record<string, unknown> = {
      ...body,
      type,
      accountId: body["accountId"] ?? null,
      model: {
        revision: null,
        env: {},
        secrets: {},
        ...model,
        image,
      },
    };
    return {
      ok: true,
      config: {
        name,
        type: type as AccessType,
        vendor: stringAt(provider, "vendor", "provider.vendor"),
        region: stringAt(provider, "region", "provider.region"),
        accelerator: stringAt(compute, "accelerator", "compute.accelerator"),
        instanceType: stringAt(compute, "instanceType", "compute.instanceType"),
        instanceSize: stringAt(compute, "instanceSize", "compute.instanceSize"),
        minReplica,
        maxReplica,
        scaleToZeroTimeout: typeof timeout === "number" && minReplica === 0 ? timeout : undefined,
        repository: stringAt(model, "repository", "model.repository"),
        json,
      },
    };
  } catch (error) {
    if (error instanceof Problem) return { ok: false, message: error.message };
    throw error;
  }
}

/** An update merged into the current configuration: objects merge key by key, the rest replaces. */
export function mergeUpdate(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    const before = merged[key];
    merged[key] =
      isObject(value) && isObject(before) && !REPLACED.has(key) ? mergeUpdate(before, value) : value;
  }
  return merged;
}

/** Whether an update changes what runs (compute or model): that rolls out as `updating`. */
export function changesDeployment(before: EndpointConfig, after: EndpointConfig): boolean {
  const deployed = (config: EndpointConfig): string =>
    JSON.stringify([config.json["compute"] ?? null, config.json["model"] ?? null].map(dropScaling));
  return deployed(before) !== deployed(after);
}

function dropScaling(value: unknown): unknown {
  if (!isObject(value) || !("scaling" in value)) return value;
  const { scaling: _scaling, ...rest } = value;
  return rest;
}

/** The JSON echoed in responses: secret values are never echoed (shown as "***"). */
export function redactedJson(config: EndpointConfig): Record<string, unknown> {
  const model = config.json["model"];
  if (!isObject(model) || !isObject(model["secrets"])) return { ...config.json };
  const secrets = Object.fromEntries(Object.keys(model["secrets"]).map((key) => [key, "***"]));
  return { ...config.json, model: { ...model, secrets } };
}
