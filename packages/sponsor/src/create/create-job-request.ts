/**
 * The body of `POST /pair/v1/rented/create` with `provider: "huggingface-job"` read into a typed
 * request, or the field at fault: the node's name (also the job's `name` label), the model repository,
 * the Jobs flavor (checked against Hugging Face's list by the creator), the window in whole minutes
 * (1 … 1440: the job's `timeoutSeconds` and PAIR's `window-ended` stop), an optional engine image,
 * Job secrets as credential references by environment name, budget, lifecycle, sharing and routing.
 * Its entry in rented-nodes.json is a config `rented_nodes:` item with a `job:` section (references only).
 * Must not know: HTTP, Hugging Face's API, the ledger.
 */

import { ROUTING_USES, type RoutingUse } from "../config/index.js";
import { asObject, invalidValue, refuseBudget } from "./create-request.js";

export interface JobCreateRequest {
  readonly name: string;
  readonly credential: string | undefined;
  readonly repo: string;
  readonly flavor: string;
  readonly windowMin: number;
  readonly image: string | undefined;
  readonly secrets: Readonly<Record<string, string>>;
  readonly budget: {
    readonly usd_per_day?: number;
    readonly usd_per_month?: number;
    readonly unlimited?: true;
  };
  readonly lifecycle: Readonly<Record<string, unknown>>;
  readonly share: boolean;
  readonly routingUse: RoutingUse | undefined;
}

export type JobCreateRead =
  | { readonly ok: true; readonly request: JobCreateRequest }
  | {
      readonly ok: false;
      readonly code: "invalid_request" | "invalid_value" | "budget_required";
      readonly message: string;
      readonly param?: string;
    };

/** HF's window limits in minutes (MIN_WINDOW_S … MAX_WINDOW_S of the adapter). */
export const MIN_JOB_WINDOW_MIN = 1;
export const MAX_JOB_WINDOW_MIN = 24 * 60;

const NAME = /^[a-z0-9][a-z0-9-]{0,30}[a-z0-9]$/;
const REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const FLAVOR = /^[a-z0-9][a-z0-9-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const KEYS = [
  "name",
  "provider",
  "credential",
  "repo",
  "flavor",
  "window_min",
  "image",
  "secrets",
  "budget",
  "lifecycle",
  "share_with_cluster",
  "routing",
];

export function readJobCreateRequest(body: Record<string, unknown>): JobCreateRead {
  const unknown = Object.keys(body).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0)
    return {
      ok: false,
      code: "invalid_request",
      message: `unknown field(s) for a huggingface-job create: ${unknown.join(", ")}`,
    };
  const text = (key: string): string | undefined =>
    typeof body[key] === "string" && body[key] !== "" ? body[key] : undefined;
  const name = text("name");
  if (name === undefined || !NAME.test(name))
    return invalidValue(
      "name",
      "2 to 32 lowercase letters, digits or '-', starting and ending with a letter or digit",
    );
  const repo = text("repo");
  if (repo === undefined || !REPO.test(repo))
    return invalidValue("repo", "a Hugging Face model repository id owner/name, e.g. Qwen/Qwen3-0.6B");
  const flavor = text("flavor");
  if (flavor === undefined || !FLAVOR.test(flavor))
    return invalidValue(
      "flavor",
      "a Jobs flavor, e.g. l4x1 or a10g-small (GET /api/jobs/hardware lists them)",
    );
  const windowMin = body["window_min"];
  if (
    typeof windowMin !== "number" ||
    !Number.isInteger(windowMin) ||
    windowMin < MIN_JOB_WINDOW_MIN ||
    windowMin > MAX_JOB_WINDOW_MIN
  )
    return invalidValue(
      "window_min",
      `the batch window in whole minutes, ${MIN_JOB_WINDOW_MIN} to ${MAX_JOB_WINDOW_MIN}`,
    );
  const image = body["image"];
  if (image !== undefined && (typeof image !== "string" || !/^\S+$/.test(image)))
    return invalidValue("image", "an image reference without spaces, e.g. vllm/vllm-openai:v0.23.0");
  const secrets = asObject(body["secrets"] ?? {});
  if (secrets === undefined)
    return invalidValue("secrets", 'expected {"NAME": "os-credential-store:SERVICE/ACCOUNT"}');
  for (const [key, ref] of Object.entries(secrets)) {
    if (!ENV_NAME.test(key)) return invalidValue("secrets", `"${key}" is not an environment variable name`);
    if (typeof ref !== "string" || ref === "")
      return invalidValue("secrets", `${key}: a credential reference`);
  }
  const budget = asObject(body["budget"] ?? {});
  if (budget === undefined)
    return invalidValue("budget", 'expected {"usd_per_day"?: N, "usd_per_month"?: N, "unlimited"?: true}');
  const noBudget = refuseBudget(budget);
  if (noBudget !== undefined) return noBudget;
  const lifecycle = asObject(body["lifecycle"] ?? {});
  if (lifecycle === undefined)
    return invalidValue("lifecycle", 'expected {"idle_pause_min"?: N, "pause_on_sponsor_exit"?: bool, …}');
  const routing = asObject(body["routing"] ?? {});
  const use = routing?.["use"];
  if (routing === undefined || (use !== undefined && !(ROUTING_USES as readonly unknown[]).includes(use)))
    return invalidValue("routing", `expected {"use": ${ROUTING_USES.map((u) => `"${u}"`).join(" | ")}}`);
  const share = body["share_with_cluster"] ?? false;
  if (typeof share !== "boolean") return invalidValue("share_with_cluster", "true or false");
  if (body["credential"] !== undefined && text("credential") === undefined)
    return invalidValue("credential", "a non-empty string");
  return {
    ok: true,
    request: {
      name,
      credential: text("credential"),
      repo,
      flavor,
      windowMin,
      image: image,
      secrets: secrets as Record<string, string>,
      budget,
      lifecycle,
      share,
      routingUse: use as RoutingUse | undefined,
    },
  };
}

/** The node's entry in rented-nodes.json: a `rented_nodes:` item with a `job:` section (references only). */
export function createdJobEntry(request: JobCreateRequest, credential: string): Record<string, unknown> {
  return {
    name: request.name,
    provider: "huggingface-job",
    credential,
    share_with_cluster: request.share,
    ...(request.routingUse === undefined ? {} : { routing: { use: request.routingUse } }),
    lifecycle: { managed: true, ...request.lifecycle },
    ...(Object.keys(request.budget).length === 0 ? {} : { budget: request.budget }),
    job: {
      repo: request.repo,
      flavor: request.flavor,
      window_min: request.windowMin,
      ...(request.image === undefined ? {} : { image: request.image }),
      ...(Object.keys(request.secrets).length === 0 ? {} : { secrets: request.secrets }),
    },
  };
}
