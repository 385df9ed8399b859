/**
 * From the contract's create request to a Jobs create spec: `vllm serve <model>` (or another
 * declared engine image) listening on 0.0.0.0, the port exposed through the Jobs proxy (token-
 * protected, never public: HF has no public mode), `spec.hardware` as the flavor, the window as
 * `timeoutSeconds` (HF's own stop is the backstop), secrets as Job secrets (never plain env), and
 * PAIR's marks. Refusals are results, decided before any call to HF.
 * Must not know: HTTP, the transport, the contract's state.
 */

import type { CreateRequest } from "@pair/provision";
import { err, ok, type Result } from "@pair/provision";
import type { CreateRefusal } from "../adapter/create-spec.js";
import type { RevealableToken } from "../secret-token.js";
import { HF_JOB_PROVIDER } from "./capabilities.js";
import { fitsLabel, markEnv, markLabels } from "./job-marks.js";
import type { HfJobSpec } from "./jobs-model.js";

export const DEFAULT_JOB_IMAGE = "vllm/vllm-openai:v0.23.0";
export const DEFAULT_JOB_PORT = 8000;
/** The shortest and longest window accepted, in seconds (a limit on everything). */
export const MIN_WINDOW_S = 60;
export const MAX_WINDOW_S = 24 * 3600;

/** `DeploymentSpec.settings` keys this adapter reads; any other key is refused. */
export const JOB_SETTINGS = {
  /** Required: the window in seconds; becomes `timeoutSeconds`. */
  windowS: "number",
  /** Docker image with `vllm` on the PATH (default vllm/vllm-openai:v0.23.0). */
  image: "string",
  /** Port vLLM listens on and the proxy exposes (default 8000). */
  port: "number",
  /** vLLM `--max-model-len` (omitted when not given). */
  maxModelLen: "number",
} as const;

const refuse = (code: string, message: string): Result<never, CreateRefusal> => err({ code, message });

export function toJobSpec(
  request: CreateRequest,
  namespace: string,
  secrets: Readonly<Record<string, RevealableToken>>,
): Result<HfJobSpec, CreateRefusal> {
  const { spec } = request;
  if (spec.provider !== HF_JOB_PROVIDER)
    return refuse(
      "wrong_provider",
      `spec.provider is "${spec.provider}", this adapter creates ${HF_JOB_PROVIDER}`,
    );
  if (spec.account !== namespace)
    return refuse(
      "wrong_account",
      `spec.account "${spec.account}" is not this adapter's namespace "${namespace}"`,
    );
  if (!fitsLabel(spec.name))
    return refuse(
      "invalid_spec",
      `name "${spec.name}": at most 100 characters of [A-Za-z0-9._-] (it becomes the job's name label)`,
    );
  if (!/^[a-z0-9][a-z0-9-]*$/.test(spec.hardware))
    return refuse(
      "invalid_spec",
      `hardware "${spec.hardware}": expected a Jobs flavor such as l4x1 or a10g-small`,
    );
  const settings = spec.settings ?? {};
  for (const [key, value] of Object.entries(settings)) {
    const type = (JOB_SETTINGS as Record<string, string>)[key];
    if (type === undefined)
      return refuse(
        "invalid_spec",
        `settings.${key}: unknown; allowed: ${Object.keys(JOB_SETTINGS).join(", ")}`,
      );
    if (typeof value !== type) return refuse("invalid_spec", `settings.${key}: expected a ${type}`);
  }
  const windowS = settings["windowS"];
  if (
    typeof windowS !== "number" ||
    !Number.isInteger(windowS) ||
    windowS < MIN_WINDOW_S ||
    windowS > MAX_WINDOW_S
  )
    return refuse(
      "invalid_spec",
      `settings.windowS: required, an integer number of seconds in [${MIN_WINDOW_S}, ${MAX_WINDOW_S}]`,
    );
  const port = settings["port"] ?? DEFAULT_JOB_PORT;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1024 || port > 65535)
    return refuse("invalid_spec", "settings.port: an integer in [1024, 65535]");
  const image = settings["image"] ?? DEFAULT_JOB_IMAGE;
  if (typeof image !== "string" || image.trim() === "")
    return refuse("invalid_spec", "settings.image: must not be empty");
  const maxModelLen = settings["maxModelLen"];
  const command = [
    "vllm",
    "serve",
    spec.model,
    "--host",
    "0.0.0.0",
    "--port",
    String(port),
    "--served-model-name",
    spec.model,
  ];
  if (typeof maxModelLen === "number") command.push("--max-model-len", String(maxModelLen));
  const marks = {
    name: spec.name,
    ownerTag: request.ownerTag,
    requestId: request.requestId,
    epoch: request.epoch,
    windowS,
  };
  return ok({
    dockerImage: image,
    command,
    environment: markEnv(marks),
    secrets,
    flavor: spec.hardware,
    timeoutSeconds: windowS,
    labels: markLabels(marks),
    exposePorts: [port],
  });
}
