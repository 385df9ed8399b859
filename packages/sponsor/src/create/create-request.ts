/**
 * The body of `POST /pair/v1/rented/create` read into a typed request, or the field at fault: the
 * node's name (it is also the endpoint's name on Hugging Face), exactly one of repo | catalog, the
 * hardware offer (vendor, region, instance type and size), access (`public` refused:
 * `public_endpoint_refused`), HF's scale-to-zero backstop, budget, lifecycle, sharing and routing.
 * Must not know: HTTP, Hugging Face's API, the ledger.
 */

import { DEFAULT_SCALE_TO_ZERO_MIN, MAX_SCALE_TO_ZERO_MIN } from "@pair/huggingface";
import { ROUTING_USES, type RoutingUse } from "../config/index.js";

export interface CreateRequestBody {
  readonly name: string;
  readonly credential: string | undefined;
  readonly namespace: string | undefined;
  readonly source: { readonly repo: string } | { readonly catalog: string };
  readonly vendor: string;
  readonly region: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly access: "private" | "authenticated";
  readonly scaleToZeroMin: number;
  /** The vLLM engine image (`name:tag`, pinned) for `repo`; undefined: PAIR's pinned default. */
  readonly image: string | undefined;
  readonly budget: {
    readonly usd_per_day?: number;
    readonly usd_per_month?: number;
    readonly unlimited?: true;
  };
  readonly lifecycle: { readonly idle_pause_min?: number; readonly wake_on_request?: boolean };
  readonly share: boolean;
  readonly routingUse: RoutingUse | undefined;
}

export type CreateRequestRead =
  | { readonly ok: true; readonly request: CreateRequestBody }
  | {
      readonly ok: false;
      readonly code: "invalid_request" | "invalid_value" | "public_endpoint_refused" | "budget_required";
      readonly message: string;
      readonly param?: string;
    };

/** Hugging Face's endpoint names: 2-32 lowercase letters, digits or '-', a letter or digit at both ends. */
const ENDPOINT_NAME = /^[a-z0-9][a-z0-9-]{0,30}[a-z0-9]$/;
/** `name:tag` with a tag other than `latest` (an engine must not change under a running node). */
const PINNED_IMAGE = /^[\w./-]+:(?!latest$)[\w.-]+$/;
const KEYS = [
  "name",
  "provider",
  "credential",
  "namespace",
  "repo",
  "catalog",
  "vendor",
  "region",
  "instance_type",
  "instance_size",
  "access",
  "scale_to_zero_min",
  "image",
  "budget",
  "lifecycle",
  "share_with_cluster",
  "routing",
];

/** A refused field of a create request (`invalid_value`, the field named first). */
export function invalidValue(
  param: string,
  message: string,
): { readonly ok: false; readonly code: "invalid_value"; readonly message: string; readonly param: string } {
  return { ok: false, code: "invalid_value", message: `${param}: ${message}`, param };
}

/**
 * A create's `budget`: a cap, or `unlimited: true` written down; anything else is refused before a
 * create is declared (budget_required: the node PAIR creates is billed, and any request may wake it).
 */
export function refuseBudget(budget: Record<string, unknown>):
  | {
      readonly ok: false;
      readonly code: "budget_required" | "invalid_value";
      readonly message: string;
      readonly param: string;
    }
  | undefined {
  const capped = [budget["usd_per_day"], budget["usd_per_month"]].some((v) => v !== undefined && v !== null);
  const unlimited = budget["unlimited"] === true;
  if (unlimited && capped)
    return invalidValue("budget", "unlimited: true contradicts usd_per_day / usd_per_month (choose one)");
  if (unlimited || capped) return undefined;
  return {
    ok: false,
    code: "budget_required",
    message:
      'budget: a node PAIR creates is billed, so it needs a cap ({"usd_per_day": N} and/or ' +
      '{"usd_per_month": N}; pair rented create --usd-per-day N), or {"unlimited": true} (--unlimited)',
    param: "budget",
  };
}

/** The value as a JSON object, or undefined (arrays and null are not objects here). */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function readCreateRequest(body: Record<string, unknown>): CreateRequestRead {
  const unknown = Object.keys(body).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0)
    return { ok: false, code: "invalid_request", message: `unknown field(s): ${unknown.join(", ")}` };
  const text = (key: string): string | undefined =>
    typeof body[key] === "string" && body[key] !== "" ? body[key] : undefined;
  const name = text("name");
  if (name === undefined || !ENDPOINT_NAME.test(name))
    return invalidValue(
      "name",
      "2 to 32 lowercase letters, digits or '-', starting and ending with a letter or digit (it is also the endpoint's name on Hugging Face)",
    );
  const provider = body["provider"] ?? "huggingface-endpoint";
  if (provider !== "huggingface-endpoint")
    return invalidValue("provider", '"huggingface-endpoint" (the default) or "huggingface-job"');
  if (body["access"] === "public")
    return {
      ok: false,
      code: "public_endpoint_refused",
      message:
        "PAIR never creates a public endpoint (anyone with its URL could use it and spend on it): use access private (the default) or authenticated",
      param: "access",
    };
  const access = body["access"] ?? "private";
  if (access !== "private" && access !== "authenticated")
    return invalidValue("access", "private (the default) or authenticated");
  const repo = text("repo");
  const catalog = text("catalog");
  if ((repo === undefined) === (catalog === undefined))
    return invalidValue(
      "repo",
      "give exactly one of repo (a model repository id) or catalog (a catalog model id)",
    );
  for (const key of ["vendor", "region", "instance_type", "instance_size"])
    if (text(key) === undefined) return invalidValue(key, "required (see GET /pair/v1/rented/hardware)");
  const scaleToZeroMin = body["scale_to_zero_min"] ?? DEFAULT_SCALE_TO_ZERO_MIN;
  if (
    typeof scaleToZeroMin !== "number" ||
    !Number.isInteger(scaleToZeroMin) ||
    scaleToZeroMin < 1 ||
    scaleToZeroMin > MAX_SCALE_TO_ZERO_MIN
  )
    return invalidValue(
      "scale_to_zero_min",
      `an integer in [1, ${MAX_SCALE_TO_ZERO_MIN}] (Hugging Face's scale-to-zero is the backstop and stays on)`,
    );
  const image = text("image");
  if (body["image"] !== undefined && (image === undefined || !PINNED_IMAGE.test(image)))
    return invalidValue("image", "a pinned engine image name:tag serving /v1, e.g. vllm/vllm-openai:v0.23.0");
  if (image !== undefined && catalog !== undefined)
    return invalidValue("image", "catalog models bring their own engine; give image only with repo");
  const budget = asObject(body["budget"] ?? {});
  if (budget === undefined)
    return invalidValue("budget", 'expected {"usd_per_day"?: N, "usd_per_month"?: N, "unlimited"?: true}');
  const noBudget = refuseBudget(budget);
  if (noBudget !== undefined) return noBudget;
  const lifecycle = asObject(body["lifecycle"] ?? {});
  if (lifecycle === undefined)
    return invalidValue("lifecycle", 'expected {"idle_pause_min"?: N, "wake_on_request"?: bool}');
  const routing = asObject(body["routing"] ?? {});
  const use = routing?.["use"];
  if (routing === undefined || (use !== undefined && !(ROUTING_USES as readonly unknown[]).includes(use)))
    return invalidValue("routing", `expected {"use": ${ROUTING_USES.map((u) => `"${u}"`).join(" | ")}}`);
  const share = body["share_with_cluster"] ?? false;
  if (typeof share !== "boolean") return invalidValue("share_with_cluster", "true or false");
  for (const key of ["credential", "namespace"])
    if (body[key] !== undefined && text(key) === undefined) return invalidValue(key, "a non-empty string");
  return {
    ok: true,
    request: {
      name,
      credential: text("credential"),
      namespace: text("namespace"),
      source: repo !== undefined ? { repo } : { catalog: catalog ?? "" },
      vendor: text("vendor") ?? "",
      region: text("region") ?? "",
      instanceType: text("instance_type") ?? "",
      instanceSize: text("instance_size") ?? "",
      access,
      scaleToZeroMin,
      image,
      budget: budget,
      lifecycle: lifecycle,
      share,
      routingUse: use as RoutingUse | undefined,
    },
  };
}

/** The node's entry in rented-nodes.json (shaped like a config `rented_nodes:` item; a reference only). */
export function createdEntry(
  request: CreateRequestBody,
  namespace: string,
  credential: string,
): Record<string, unknown> {
  return {
    name: request.name,
    provider: "huggingface-endpoint",
    endpoint: `${namespace}/${request.name}`,
    credential,
    share_with_cluster: request.share,
    ...(request.routingUse === undefined ? {} : { routing: { use: request.routingUse } }),
    lifecycle: { managed: true, ...request.lifecycle },
    ...(Object.keys(request.budget).length === 0 ? {} : { budget: request.budget }),
  };
}
