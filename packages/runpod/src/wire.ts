/**
 * Runpod REST v2 wire types (`https://api.runpod.io/v2`, OpenAPI 2.0.0) and their checked
 * parsing: what goes into `POST /v2/pods` and what comes back as a Pod. Field names are the wire's;
 * nothing here is a PAIR domain type. Parsing checks what PAIR relies on (id, name, status, env)
 * and keeps the rest tolerant: unknown fields are ignored, a status the spec does not list is
 * kept as "UNKNOWN" with the raw text (a new status must not make a whole listing unreadable).
 * Must not know: HTTP, errors beyond "this body is not a pod", PAIR's identity scheme.
 */

export type PodStatus = "PROVISIONING" | "STARTING" | "RUNNING" | "EXITED" | "ERROR" | "TERMINATED";
export type PodAction = "start" | "stop" | "restart" | "terminate";
export type Cloud = "SECURE" | "COMMUNITY";

export const POD_STATUSES: readonly PodStatus[] = [
  "PROVISIONING",
  "STARTING",
  "RUNNING",
  "EXITED",
  "ERROR",
  "TERMINATED",
];

/** `POST /v2/pods` body. One GPU type per request (`gpu.id`); `cpu` pods are not modelled. */
export interface CreatePodRequest {
  readonly name: string;
  readonly image: string;
  readonly gpu: { readonly id: string; readonly count?: number };
  readonly args?: string;
  readonly disk?: number;
  readonly ports?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly registry?: string | null;
  readonly mounts?: {
    readonly persistent?: { readonly size: number; readonly path: string };
    readonly network?: readonly { readonly volumeId: string; readonly path: string }[];
  };
  readonly cloud?: Cloud;
  readonly dataCenterIds?: readonly string[];
  readonly globalNetworking?: boolean;
}

export interface PodRuntime {
  readonly uptime?: number;
  readonly ports?: readonly {
    readonly private?: number;
    readonly public?: number | null;
    readonly type?: string;
    readonly ip?: string | null;
  }[];
}

export interface Pod {
  readonly id: string;
  readonly name: string;
  /** A status the spec lists, or "UNKNOWN" (see `rawStatus`). */
  readonly status: PodStatus | "UNKNOWN";
  readonly rawStatus: string;
  /** Actions valid now, as the pod reports them. */
  readonly actions: readonly string[];
  readonly image: string;
  readonly args: string;
  readonly env: Readonly<Record<string, string>>;
  readonly ports: readonly string[];
  readonly gpu: { readonly id: string; readonly count: number } | undefined;
  readonly cloud: string | undefined;
  readonly dataCenterId: string | null;
  /** USD per hour now (0 when EXITED or TERMINATED). A numeric string is accepted. */
  readonly cost: number;
  readonly runtime: PodRuntime | null;
  readonly createdAt: string | undefined;
  readonly startedAt: string | null;
}

/** A body that is not what the spec promises. */
export class WireShapeError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`runpod response ${path}: ${problem}`);
    this.name = "WireShapeError";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(path: string, value: unknown): string {
  if (typeof value !== "string")
    throw new WireShapeError(path, `expected a string, got ${JSON.stringify(value) ?? "nothing"}`);
  return value;
}

function optionalStr(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/**
 * The GPU a pod reports: v2's `gpu: {id, count}`; v1-shaped answers (seen live) name the type in
 * `machine.gpuTypeId` and the count in a top-level `gpuCount`, read when `gpu` lacks them.
 */
function gpuOf(value: Record<string, unknown>): Pod["gpu"] {
  const gpu = isRecord(value["gpu"]) ? value["gpu"] : {};
  const machine = isRecord(value["machine"]) ? value["machine"] : {};
  const id = optionalStr(gpu["id"]) ?? optionalStr(machine["gpuTypeId"]);
  if (id === undefined) return undefined;
  const count = [gpu["count"], value["gpuCount"]].find((n): n is number => typeof n === "number");
  return { id, count: count ?? 1 };
}

export function parsePod(value: unknown, path = "pod"): Pod {
  if (!isRecord(value)) throw new WireShapeError(path, "expected an object");
  const rawStatus = str(`${path}.status`, value["status"]);
  const envValue = value["env"] ?? {};
  if (!isRecord(envValue)) throw new WireShapeError(`${path}.env`, "expected an object");
  const env: Record<string, string> = {};
  for (const [key, entry] of Object.entries(envValue)) env[key] = str(`${path}.env.${key}`, entry);
  const costValue = value["cost"];
  const cost =
    typeof costValue === "number" ? costValue : typeof costValue === "string" ? Number(costValue) : 0;
  const runtime = value["runtime"];
  return {
    id: str(`${path}.id`, value["id"]),
    name: str(`${path}.name`, value["name"]),
    status: (POD_STATUSES as readonly string[]).includes(rawStatus) ? (rawStatus as PodStatus) : "UNKNOWN",
    rawStatus,
    actions: stringArray(value["actions"]),
    image: optionalStr(value["image"]) ?? "",
    args: optionalStr(value["args"]) ?? "",
    env,
    ports: stringArray(value["ports"]),
    gpu: gpuOf(value),
    cloud: optionalStr(value["cloud"]),
    dataCenterId: optionalStr(value["dataCenterId"]) ?? null,
    cost: Number.isFinite(cost) ? cost : 0,
    runtime: isRecord(runtime) ? runtime : null,
    createdAt: optionalStr(value["createdAt"]),
    startedAt: optionalStr(value["startedAt"]) ?? null,
  };
}

/** `GET /v2/pods` answers `{"pods":[…]}`. */
export function parsePodList(value: unknown): Pod[] {
  if (!isRecord(value) || !Array.isArray(value["pods"]))
    throw new WireShapeError("body", 'expected {"pods":[…]}');
  return value["pods"].map((pod, index) => parsePod(pod, `pods[${index}]`));
}
