/**
 * From the contract's create request to Hugging Face's endpoint spec: the model repository, the
 * hardware (`spec.hardware` is HF's `instanceType`, `spec.region` its region), the settings PAIR
 * allows (below), and the safety rules no setting can undo — never `public` (refused
 * `public_endpoint_refused`), `minReplica` 0 with HF's own scale-to-zero always on (default 15 min)
 * as the backstop for a sponsor that crashed, and PAIR's ownership marks. Refusals are results,
 * decided before any call to HF.
 * Must not know: HTTP, the transport, the contract's state.
 */

import type { CreateRequest } from "@pair/provision";
import { err, ok, type Result } from "@pair/provision";
import type { HfEndpointSpec } from "../model.js";
import { HF_ENDPOINT_PROVIDER } from "./capabilities.js";
import { ownershipEnv, ownershipTags } from "./ownership.js";

/** Default idle minutes before HF scales the endpoint to zero (the crash backstop). */
export const DEFAULT_SCALE_TO_ZERO_MIN = 15;
export const MAX_SCALE_TO_ZERO_MIN = 1_440;
export const MAX_REPLICAS = 16;

/**
 * The engine PAIR deploys when a create names none: vLLM's OpenAI server (it serves `/v1`, which PAIR
 * routes to), pinned. HF's own default (`{"huggingface": {}}`, framework `pytorch`) is the Inference
 * Toolkit (`/`, `/health`, `/predict`): it would run and bill while never answering `/v1`. Behind a
 * private endpoint HF's proxy requires the namespace's token before vLLM sees a request.
 */
export const DEFAULT_ENGINE_IMAGE_URL = "vllm/vllm-openai:v0.23.0";

/** The `model.image` for the vLLM engine at `url` (HF's `vLLM` variant, reference §2.5). */
export function vllmImage(url: string = DEFAULT_ENGINE_IMAGE_URL): Record<string, unknown> {
  return { vLLM: { url, port: 8000, healthRoute: "/health" } };
}

/**
 * `DeploymentSpec.settings` keys this adapter reads; any other key is refused (a typo must not be
 * silently ignored). All optional.
 */
export const CREATE_SETTINGS = {
  /** `aws` (default), `azure`, `gcp`. */
  vendor: "string",
  /** `gpu` (default), `cpu`, `neuron`. */
  accelerator: "string",
  /** `x1` (default), `x2`, `x4`, … */
  instanceSize: "string",
  /** `private` (default) or `authenticated`; `public` is refused. */
  accessType: "string",
  /** Idle minutes before HF scales to zero, 1..1440 (default 15). It cannot be turned off. */
  scaleToZeroTimeoutMin: "number",
  /** 1..16 (default 1). `minReplica` is always 0. */
  maxReplica: "number",
  /** HF `model.framework` (default `custom`, with the default engine image). */
  framework: "string",
  /** HF `model.task`, e.g. `text-generation` (omitted when not given). */
  task: "string",
  /** Repository commit (default: latest). */
  revision: "string",
  /** HF `model.image` as JSON, one key naming the engine (default: `vllmImage()`, vLLM pinned). */
  imageJson: "string",
  /**
   * `deploy`: create through the endpoint catalog's deploy call, which brings its tested engine,
   * image and hardware; PAIR then applies its marks, access and scale-to-zero by an update.
   */
  catalog: "string",
} as const;

export type CreateSettingName = keyof typeof CREATE_SETTINGS;

export interface CreateRefusal {
  /** `public_endpoint_refused`, `invalid_spec`, `wrong_account`, `wrong_provider`. */
  readonly code: string;
  readonly message: string;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,30}[a-z0-9]$/;
const ACCELERATORS = ["gpu", "cpu", "neuron"];

function refuse(code: string, message: string): Result<never, CreateRefusal> {
  return err({ code, message });
}

/** The endpoint spec for a create request in `namespace`, or why it is refused. */
export function toEndpointSpec(
  request: CreateRequest,
  namespace: string,
): Result<HfEndpointSpec, CreateRefusal> {
  const { spec } = request;
  if (spec.provider !== HF_ENDPOINT_PROVIDER)
    return refuse(
      "wrong_provider",
      `spec.provider is "${spec.provider}"; this adapter creates "${HF_ENDPOINT_PROVIDER}" resources`,
    );
  if (spec.account !== namespace)
    return refuse(
      "wrong_account",
      `spec.account is "${spec.account}" but this adapter manages namespace "${namespace}"`,
    );
  const settings = spec.settings ?? {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    const expected = (CREATE_SETTINGS as Record<string, string>)[key];
    if (expected === undefined)
      problems.push(`settings.${key}: unknown (known: ${Object.keys(CREATE_SETTINGS).join(", ")})`);
    else if (typeof value !== expected) problems.push(`settings.${key}: expected a ${expected}`);
  }
  const text = (key: CreateSettingName): string | undefined => {
    const value = settings[key];
    return typeof value === "string" ? value : undefined;
  };
  const count = (key: CreateSettingName): number | undefined => {
    const value = settings[key];
    return typeof value === "number" ? value : undefined;
  };

  const accessType = text("accessType") ?? "private";
  if (accessType === "public")
    return refuse(
      "public_endpoint_refused",
      "PAIR never creates a public endpoint: use accessType private (the default) or authenticated",
    );
  if (accessType !== "private" && accessType !== "authenticated")
    problems.push(`settings.accessType: "${accessType}" is not private or authenticated`);
  if (!NAME.test(spec.name))
    problems.push(
      `name: "${spec.name}" must be 2 to 32 lowercase letters, digits or '-', starting and ending with a letter or digit`,
    );
  if (spec.model.trim() === "") problems.push("model: the repository id must not be empty");
  if (spec.hardware.trim() === "") problems.push("hardware: name HF's instance type, e.g. nvidia-l4");
  if (spec.region === undefined || spec.region.trim() === "")
    problems.push("region: required, e.g. us-east-1 (see the hardware list)");
  const accelerator = text("accelerator") ?? "gpu";
  if (!ACCELERATORS.includes(accelerator))
    problems.push(`settings.accelerator: "${accelerator}" is not one of ${ACCELERATORS.join(", ")}`);
  const scaleToZeroTimeoutMin = count("scaleToZeroTimeoutMin") ?? DEFAULT_SCALE_TO_ZERO_MIN;
  if (
    !Number.isInteger(scaleToZeroTimeoutMin) ||
    scaleToZeroTimeoutMin < 1 ||
    scaleToZeroTimeoutMin > MAX_SCALE_TO_ZERO_MIN
  )
    problems.push(
      `settings.scaleToZeroTimeoutMin: an integer in [1, ${MAX_SCALE_TO_ZERO_MIN}] (HF's scale-to-zero is PAIR's crash backstop and stays on)`,
    );
  const maxReplica = count("maxReplica") ?? 1;
  if (!Number.isInteger(maxReplica) || maxReplica < 1 || maxReplica > MAX_REPLICAS)
    problems.push(`settings.maxReplica: an integer in [1, ${MAX_REPLICAS}]`);
  let image: Record<string, unknown> | undefined;
  const imageJson = text("imageJson");
  if (imageJson !== undefined) {
    try {
      const parsed: unknown = JSON.parse(imageJson);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new Error("not an object");
      if (Object.keys(parsed).length !== 1) throw new Error("expected exactly one key naming the engine");
      image = parsed as Record<string, unknown>;
    } catch (error) {
      problems.push(`settings.imageJson: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const catalog = text("catalog");
  if (catalog !== undefined && catalog !== "deploy")
    problems.push(`settings.catalog: "${catalog}" is not "deploy"`);
  if (catalog !== undefined && imageJson !== undefined)
    problems.push("settings.imageJson: a catalog deploy brings its own engine image");
  if (problems.length > 0) return refuse("invalid_spec", problems.join("; "));

  const marks = { ownerTag: request.ownerTag, requestId: request.requestId, epoch: request.epoch };
  const framework = text("framework") ?? "custom";
  const task = text("task");
  const revision = text("revision");
  return ok({
    name: spec.name,
    accessType: accessType as "private" | "authenticated",
    vendor: text("vendor") ?? "aws",
    region: spec.region ?? "",
    accelerator,
    instanceType: spec.hardware,
    instanceSize: text("instanceSize") ?? "x1",
    minReplica: 0,
    maxReplica,
    scaleToZeroTimeoutMin,
    repository: spec.model,
    framework,
    ...(task === undefined ? {} : { task }),
    ...(revision === undefined ? {} : { revision }),
    image: image ?? vllmImage(),
    env: ownershipEnv(marks),
    tags: ownershipTags(marks),
  });
}
