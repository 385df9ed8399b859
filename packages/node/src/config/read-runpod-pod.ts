/**
 * The `pod:` section of a `provider: runpod` rented node: the settings of the pods PAIR creates on
 * demand (every RunpodModel setting, snake_case), plus the node's `vllm_api_key` reference. Each
 * value is checked here with its key's path; the defaults are RUNPOD_POD_DEFAULTS. The vLLM key is
 * never a value in the file: the pod reads it from a Runpod secret (`api_key_secret`, a NAME), the
 * sponsor from the OS credential store (`vllm_api_key`).
 * Must not know: YAML, Runpod's API, the credential store, the ledger.
 */

import type { CredentialRef, RunpodPodSettings } from "./config-types.js";
import { MS_PER_MINUTE, MS_PER_SECOND, RUNPOD_POD_DEFAULTS } from "./defaults.js";
import type { Section } from "./field-reader.js";

export const RUNPOD_POD_KEYS = [
  "model",
  "vllm_model",
  "gpu_types",
  "gpu_count",
  "cloud_type",
  "image",
  "container_disk_gb",
  "volume_gb",
  "network_volume_id",
  "data_center_ids",
  "vllm_args",
  "port",
  "api_key_secret",
  "startup_deadline_s",
  "idle_timeout_min",
  "crash_restart_limit",
  "crash_window_s",
] as const;

const SECONDS = { ms: MS_PER_SECOND, label: "seconds" } as const;
const MINUTES = { ms: MS_PER_MINUTE, label: "minutes" } as const;
const TOKEN = /^\S+$/;
const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const IMAGE = /^\S+:\S+$/;
const DAY_MS = 86_400_000;
/** Set by PAIR from the other keys: never in `vllm_args`. */
const RESERVED_ARGS = ["--model", "--served-model-name", "--port", "--host"];

function token(section: Section, key: string, what: string, pattern = TOKEN): string | undefined {
  const value = section.string(key, { required: true });
  if (value !== undefined && !pattern.test(value)) {
    section.report(key, "invalid_value", what);
    return undefined;
  }
  return value;
}

function tokenList(section: Section, key: string, max: number, what: string): string[] {
  const values = section.stringList(key, max);
  if (values.some((v) => !TOKEN.test(v))) section.report(key, "invalid_value", what);
  return values.filter((v) => TOKEN.test(v));
}

function readGpuTypes(pod: Section): readonly string[] {
  const gpuTypes = pod.stringList("gpu_types", 16);
  if (!pod.has("gpu_types")) pod.missing("gpu_types", " (GPU type ids in order of preference)");
  else if (gpuTypes.length === 0)
    pod.report("gpu_types", "invalid_value", "name at least one GPU type id, e.g. NVIDIA L40S");
  else if (new Set(gpuTypes).size !== gpuTypes.length)
    pod.report("gpu_types", "invalid_value", "a GPU type is listed twice");
  return gpuTypes;
}

function readVllmArgs(pod: Section): string[] {
  const args = tokenList(pod, "vllm_args", 256, "each entry is one argument token, without spaces");
  for (const arg of args) {
    if (arg === "--api-key" || arg.startsWith("--api-key=")) {
      pod.report(
        "vllm_args",
        "invalid_value",
        "--api-key would put the vLLM key in the pod's arguments: name a Runpod secret in api_key_secret",
      );
    } else if (RESERVED_ARGS.some((r) => arg === r || arg.startsWith(`${r}=`))) {
      pod.report("vllm_args", "invalid_value", `${arg} is set by PAIR from model, vllm_model and port`);
    }
  }
  return args;
}

/** The `pod:` section; undefined (every problem reported) when it cannot be used. */
export function readRunpodPod(entry: Section): RunpodPodSettings | undefined {
  const pod = entry.section("pod", RUNPOD_POD_KEYS);
  const before = pod.problems.count;
  const model = token(pod, "model", "the served model name, without spaces");
  const vllmModel = token(pod, "vllm_model", "the weights to load, e.g. Qwen/Qwen2.5-7B-Instruct");
  const gpuTypes = readGpuTypes(pod);
  const image = token(
    pod,
    "image",
    "a pinned image reference name:tag, e.g. vllm/vllm-openai:v0.11.0",
    IMAGE,
  );
  const apiKeySecret = token(
    pod,
    "api_key_secret",
    "the NAME of a Runpod secret (letters, digits, _ - .), never the key itself",
    SECRET_NAME,
  );
  const networkVolumeId = pod.has("network_volume_id")
    ? token(pod, "network_volume_id", "a network volume id, without spaces")
    : undefined;
  const volumeGb = pod.integer("volume_gb", { min: 0, max: 4_000 }, RUNPOD_POD_DEFAULTS.volume_gb);
  if (networkVolumeId !== undefined && volumeGb > 0)
    pod.report(
      "volume_gb",
      "invalid_value",
      "must be 0 with network_volume_id (Runpod mounts one or the other)",
    );
  const settings = {
    model: model ?? "",
    vllmModel: vllmModel ?? "",
    gpuTypes,
    gpuCount: pod.integer("gpu_count", { min: 1, max: 8 }, RUNPOD_POD_DEFAULTS.gpu_count),
    cloudType: pod.oneOf("cloud_type", ["SECURE", "COMMUNITY"] as const, RUNPOD_POD_DEFAULTS.cloud_type),
    image: image ?? "",
    containerDiskGb: pod.integer(
      "container_disk_gb",
      { min: 1, max: 4_000 },
      RUNPOD_POD_DEFAULTS.container_disk_gb,
    ),
    volumeGb,
    ...(networkVolumeId === undefined ? {} : { networkVolumeId }),
    dataCenterIds: tokenList(pod, "data_center_ids", 64, "each entry is a data-centre id, without spaces"),
    vllmArgs: readVllmArgs(pod),
    port: pod.integer("port", { min: 1, max: 65_535 }, RUNPOD_POD_DEFAULTS.port),
    apiKeySecret: apiKeySecret ?? "",
    startupDeadlineMs: pod.durationMs(
      "startup_deadline_s",
      SECONDS,
      RUNPOD_POD_DEFAULTS.startup_deadline_s * MS_PER_SECOND,
      DAY_MS,
    ),
    idleTimeoutMs: pod.durationMs(
      "idle_timeout_min",
      MINUTES,
      RUNPOD_POD_DEFAULTS.idle_timeout_min * MS_PER_MINUTE,
    ),
    crashRestartLimit: pod.integer(
      "crash_restart_limit",
      { min: 0, max: 100 },
      RUNPOD_POD_DEFAULTS.crash_restart_limit,
    ),
    crashWindowMs: pod.durationMs(
      "crash_window_s",
      SECONDS,
      RUNPOD_POD_DEFAULTS.crash_window_s * MS_PER_SECOND,
      DAY_MS,
    ),
  };
  if (settings.startupDeadlineMs < MS_PER_SECOND)
    pod.report("startup_deadline_s", "invalid_value", "must be at least 1 second");
  if (settings.crashWindowMs < MS_PER_SECOND)
    pod.report("crash_window_s", "invalid_value", "must be at least 1 second");
  return pod.problems.count > before ? undefined : settings;
}

/** `vllm_api_key`: required with `pod:` (the sponsor's calls need it), refused without. */
export function readVllmApiKey(entry: Section, managed: boolean): CredentialRef | undefined {
  if (!managed) {
    if (entry.has("vllm_api_key"))
      entry.report(
        "vllm_api_key",
        "invalid_value",
        "only a Runpod node with a pod: section takes vllm_api_key",
      );
    return undefined;
  }
  return entry.credential("vllm_api_key", { required: true });
}
