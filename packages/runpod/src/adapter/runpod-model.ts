/**
 * RunpodModel: the Runpod-specific settings of one served model (ordered GPU types, cloud type,
 * disks, network volume, data-center pinning, startup deadline, idle timeout, crash-restart limit and
 * every vLLM argument). It rides in `DeploymentSpec.settings` as one JSON string under
 * `RUNPOD_MODEL_SETTING`, opaque to the hosting core, and is checked whenever it is read back.
 * The vLLM API key is named, never held: `apiKeySecret` is the name of a Runpod secret.
 * Must not know: HTTP, the controller, where the key value lives.
 */

import type { DeploymentSpec } from "@pair/provision";
import { err, ok, type Result } from "@pair/provision";

export const RUNPOD_MODEL_SETTING = "runpodModel";

export interface RunpodModel {
  /** GPU type ids in order of preference; a capacity refusal tries the next. At least one. */
  readonly gpuTypes: readonly string[];
  /** GPUs per pod (1..8). */
  readonly gpuCount: number;
  readonly cloudType: "SECURE" | "COMMUNITY";
  /** Container image, pinned (e.g. `vllm/vllm-openai:v0.11.0`). */
  readonly image: string;
  /** Container disk, GB (wiped on stop). */
  readonly containerDiskGb: number;
  /** Pod volume at /workspace, GB (billed while EXITED too). 0 for none. */
  readonly volumeGb: number;
  /** A network volume to mount at /workspace instead of a pod volume. */
  readonly networkVolumeId?: string;
  /** Pin pods to these data centres (empty: anywhere). */
  readonly dataCenterIds: readonly string[];
  /** The weights vLLM loads (`--model`). The served name is the spec's `model`. */
  readonly vllmModel: string;
  /** Every further vLLM argument, verbatim (`--max-model-len`, `8192`, …). `--api-key` is refused. */
  readonly vllmArgs: readonly string[];
  /** The container port vLLM listens on, exposed as `<port>/http`. */
  readonly port: number;
  /** Name of the Runpod secret holding the vLLM API key: sent as `{{ RUNPOD_SECRET_<name> }}`. */
  readonly apiKeySecret: string;
  /** A pod not serving within this long of its create is terminated. */
  readonly startupDeadlineMs: number;
  /** A pod unused this long is terminated (never below the measured cold-start time). */
  readonly idleTimeoutMs: number;
  /** More container restarts than this inside `crashWindowMs` is a crash loop: terminated. */
  readonly crashRestartLimit: number;
  readonly crashWindowMs: number;
}

const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const HOUR_MS = 3_600_000;

function intIn(problems: string[], name: string, value: unknown, min: number, max: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    problems.push(`${name}: expected an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
}

/** Settings come back from JSON: a list must be checked before it is read. */
function isStringList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** Every problem with a model's settings, each naming the field and what it must be. */
export function validateRunpodModel(model: RunpodModel): readonly string[] {
  const problems: string[] = [];
  if (!isStringList(model.gpuTypes) || model.gpuTypes.length === 0)
    problems.push("gpuTypes: name at least one GPU type id, in order of preference");
  else if (model.gpuTypes.some((g) => g.trim() === ""))
    problems.push("gpuTypes: every entry must be a non-empty GPU type id");
  else if (new Set(model.gpuTypes).size !== model.gpuTypes.length)
    problems.push("gpuTypes: an entry is listed twice");
  intIn(problems, "gpuCount", model.gpuCount, 1, 8);
  if (model.cloudType !== "SECURE" && model.cloudType !== "COMMUNITY")
    problems.push(`cloudType: expected "SECURE" or "COMMUNITY"`);
  if (typeof model.image !== "string" || !/^\S+:\S+$/.test(model.image))
    problems.push("image: expected a pinned image reference `name:tag`");
  intIn(problems, "containerDiskGb", model.containerDiskGb, 1, 4_000);
  intIn(problems, "volumeGb", model.volumeGb, 0, 4_000);
  if (model.networkVolumeId !== undefined && !/^\S{1,64}$/.test(model.networkVolumeId))
    problems.push("networkVolumeId: expected a volume id without spaces");
  if (model.networkVolumeId !== undefined && model.volumeGb > 0)
    problems.push("volumeGb: must be 0 when networkVolumeId is set (Runpod mounts one or the other)");
  if (!isStringList(model.dataCenterIds) || model.dataCenterIds.some((d) => !/^\S{1,64}$/.test(d)))
    problems.push("dataCenterIds: expected a list of data-centre ids");
  if (typeof model.vllmModel !== "string" || !/^\S+$/.test(model.vllmModel))
    problems.push("vllmModel: expected the weights to load, e.g. Qwen/Qwen2.5-7B-Instruct");
  if (!isStringList(model.vllmArgs) || model.vllmArgs.some((a) => /\s/.test(a)))
    problems.push("vllmArgs: expected a list of single tokens (no whitespace inside one)");
  else {
    for (const reserved of ["--api-key", "--model", "--served-model-name", "--port", "--host"])
      if (model.vllmArgs.some((a) => a === reserved || a.startsWith(`${reserved}=`)))
        problems.push(
          reserved === "--api-key"
            ? "vllmArgs: --api-key would put the key in the pod's args; name a Runpod secret in apiKeySecret"
            : `vllmArgs: ${reserved} is set by the adapter (vllmModel, the spec's model, port)`,
        );
  }
  intIn(problems, "port", model.port, 1, 65_535);
  if (typeof model.apiKeySecret !== "string" || !SECRET_NAME.test(model.apiKeySecret))
    problems.push("apiKeySecret: expected a Runpod secret name (letters, digits, _ - .)");
  intIn(problems, "startupDeadlineMs", model.startupDeadlineMs, 1_000, 24 * HOUR_MS);
  intIn(problems, "idleTimeoutMs", model.idleTimeoutMs, 1_000, 7 * 24 * HOUR_MS);
  intIn(problems, "crashRestartLimit", model.crashRestartLimit, 0, 100);
  intIn(problems, "crashWindowMs", model.crashWindowMs, 1_000, 24 * HOUR_MS);
  return problems;
}

/** The settings record carrying a model (checked first). */
export function runpodModelSettings(model: RunpodModel): Readonly<Record<string, string>> {
  const problems = validateRunpodModel(model);
  if (problems.length > 0) throw new RangeError(`RunpodModel: ${problems.join("; ")}`);
  return { [RUNPOD_MODEL_SETTING]: JSON.stringify(model) };
}

/** Read a spec's RunpodModel back, or say what is wrong with it. */
export function readRunpodModel(spec: DeploymentSpec): Result<RunpodModel, string> {
  const raw = spec.settings?.[RUNPOD_MODEL_SETTING];
  if (typeof raw !== "string")
    return err(`spec ${spec.name}: settings.${RUNPOD_MODEL_SETTING} is missing (use runpodModelSettings)`);
  let model: RunpodModel;
  try {
    model = JSON.parse(raw) as RunpodModel;
  } catch {
    return err(`spec ${spec.name}: settings.${RUNPOD_MODEL_SETTING} is not JSON`);
  }
  if (typeof model !== "object" || model === null)
    return err(`spec ${spec.name}: settings.${RUNPOD_MODEL_SETTING} is not an object`);
  const problems = validateRunpodModel(model);
  return problems.length === 0 ? ok(model) : err(`spec ${spec.name}: RunpodModel ${problems.join("; ")}`);
}
