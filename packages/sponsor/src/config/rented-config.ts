/**
 * A rented node's configuration as the sponsor reads it: internal names with the unit in the name
 * (`coldStartMs`, `budgetMicroUsdPerDay`), every default applied, every URL checked and normalised.
 * The daemon's config reader (packages/node/src/config/) validates YAML and saved entries into these,
 * and hands the sponsor its reader for one entry (`RentedConfigReader`).
 * Must not know: YAML, file names, how values were validated.
 */

/** Where a secret lives in the OS credential store (`os-credential-store:SERVICE/ACCOUNT`). */
export interface CredentialRef {
  readonly service: string;
  readonly account: string;
}

/** A window in tokens for every model, or by model name (`"*"`: the rest). */
export type ContextTokensConfig = number | Readonly<Record<string, number>>;

/** The configured `context_tokens` for one model (by name, else `"*"`); undefined: none. */
export function configuredWindow(config: ContextTokensConfig | undefined, model: string): number | undefined {
  if (config === undefined) return undefined;
  if (typeof config === "number") return config;
  return Object.hasOwn(config, model) ? config[model] : config["*"];
}

export const RENTED_PROVIDERS = [
  "huggingface-endpoint",
  "huggingface-job",
  "huggingface-providers",
  "runpod",
  "openai-compatible",
] as const;
export type RentedProvider = (typeof RENTED_PROVIDERS)[number];

/** Providers whose lifecycle PAIR can drive (wake, pause, budget pause, pause on exit). */
export const MANAGEABLE_PROVIDERS: readonly RentedProvider[] = ["huggingface-endpoint", "runpod"];

export const ROUTING_USES = ["when-no-local-node", "overflow", "prefer", "never"] as const;
export type RoutingUse = (typeof ROUTING_USES)[number];

export interface RentedLifecycle {
  /** Adopt and manage (wake, idle pause, budget pause, pause on exit); false: only route to it. */
  readonly managed: boolean;
  readonly wakeOnRequest: boolean;
  readonly idlePauseMs: number;
  readonly pauseOnSponsorExit: boolean;
  /** How long `pair serve` waits at exit for the provider to confirm the pause. */
  readonly exitTimeoutMs: number;
  /**
   * A managed Hugging Face endpoint billing this long without serving its model on `/v1/models` is
   * paused: an engine that cannot serve is a stop obligation, not a warning.
   */
  readonly startupDeadlineMs: number;
}

/** Caps counted in the sponsor's time zone. An absent cap is no cap (the ledger's `Budget` shape). */
export interface RentedBudget {
  readonly budgetMicroUsdPerDay?: number;
  readonly budgetMicroUsdPerMonth?: number;
  /** `budget: { unlimited: true }`: no cap, written down (a managed node must have a cap or this). */
  readonly unlimited?: true;
}

interface RentedNodeCommon {
  readonly name: string;
  /** Absent only where the provider may answer without one (`openai-compatible`). */
  readonly credential?: CredentialRef;
  readonly shareWithCluster: boolean;
  /** Allowlist; empty means no restriction. */
  readonly models: readonly string[];
  /** `explicit`: a job node's `routing.use` was written down (it then holds outside the window too). */
  readonly routing: { readonly use: RoutingUse; readonly explicit?: true };
  /** Requests sent to it at once; more wait in this node's queue. */
  readonly maxConcurrent: number;
  readonly timeouts: {
    /** First-byte timeout and, for Hugging Face, `X-Scale-Up-Timeout`. */
    readonly coldStartMs: number;
  };
  readonly lifecycle: RentedLifecycle;
  readonly budget: RentedBudget;
  /** `context_tokens`: the window assumed instead of the one the node states (docs/context.md). */
  readonly contextTokens?: ContextTokensConfig;
}

/** A Hugging Face Inference Endpoint: its URL and state are looked up through the Endpoints API. */
export interface HuggingFaceEndpointNode extends RentedNodeCommon {
  readonly provider: "huggingface-endpoint";
  readonly endpoint: { readonly namespace: string; readonly name: string };
}

/**
 * A Runpod pod, by id. `baseUrl` is the `base_url` written in the config; without one the sponsor
 * reaches the pod through `providers.runpod.proxy_url` on port 8000, plus `/v1` (rented-probe.ts).
 */
export interface RunpodNode extends RentedNodeCommon {
  readonly provider: "runpod";
  readonly podId: string;
  readonly baseUrl?: string;
}

/** Anything reached by an OpenAI-compatible base URL. */
export interface BaseUrlNode extends RentedNodeCommon {
  readonly provider: "openai-compatible" | "huggingface-job" | "huggingface-providers";
  readonly baseUrl: string;
}

/** A Runpod pod's settings (`pod:`): what PAIR creates on demand (RunpodModel, snake_case in YAML). */
export interface RunpodPodSettings {
  /** The served model name clients ask for (vLLM `--served-model-name`). */
  readonly model: string;
  /** The weights vLLM loads (`--model`). */
  readonly vllmModel: string;
  /** GPU type ids in order of preference; no capacity on one tries the next. */
  readonly gpuTypes: readonly string[];
  readonly gpuCount: number;
  readonly cloudType: "SECURE" | "COMMUNITY";
  readonly image: string;
  readonly containerDiskGb: number;
  readonly volumeGb: number;
  readonly networkVolumeId?: string;
  readonly dataCenterIds: readonly string[];
  /** Further vLLM arguments, verbatim; `--api-key` is refused (the key is a Runpod secret). */
  readonly vllmArgs: readonly string[];
  readonly port: number;
  /** The NAME of the Runpod secret holding the vLLM key (sent as `{{ RUNPOD_SECRET_<name> }}`). */
  readonly apiKeySecret: string;
  readonly startupDeadlineMs: number;
  readonly idleTimeoutMs: number;
  readonly crashRestartLimit: number;
  readonly crashWindowMs: number;
}

/**
 * A managed, on-demand Runpod pod: PAIR creates it for the first request, terminates it when idle, over
 * budget or at sponsor exit. `credential` is the Runpod API key; `vllmApiKey` the sponsor's copy of the
 * vLLM key (the pod gets it from the Runpod secret `pod.apiKeySecret`).
 */
export interface RunpodPodNode extends RentedNodeCommon {
  readonly provider: "runpod";
  readonly pod: RunpodPodSettings;
  readonly vllmApiKey: CredentialRef;
}

/** The `job:` section of a managed Hugging Face Jobs node: what PAIR runs for a batch window. */
export interface HfJobSettings {
  /** The model repository vLLM serves (and the served model name), e.g. `Qwen/Qwen3-0.6B`. */
  readonly repo: string;
  /** A Jobs flavor, e.g. `l4x1`. */
  readonly flavor: string;
  /** How long one job runs at most (its `timeoutSeconds`, and the window's `window-ended` stop). */
  readonly windowMs: number;
  /** An image with `vllm` on the PATH (the adapter's default when absent). */
  readonly image?: string;
  /** Job secrets by environment name, each a credential reference (never a value in the file). */
  readonly secrets: Readonly<Record<string, CredentialRef>>;
}

/**
 * A managed Hugging Face Jobs node: PAIR runs `vllm serve` as a Job for the first request, cancels it
 * at the window's end, when idle, over budget or at sponsor exit. `credential` is the HF token (the
 * Jobs API and the exposed port's bearer token).
 */
export interface HuggingFaceJobNode extends RentedNodeCommon {
  readonly provider: "huggingface-job";
  readonly job: HfJobSettings;
}

export type RentedNodeConfig =
  HuggingFaceEndpointNode | HuggingFaceJobNode | RunpodNode | RunpodPodNode | BaseUrlNode;

/** A problem with one rented node given as plain values, its path relative to the node. */
export interface RentedNodeProblem {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/**
 * Reads one rented node given as plain values (`pair rented attach | create` at run time, the data
 * dir's file) by exactly the rules of the config file's `rented_nodes:` entries: the daemon's config
 * reader, which the sponsor is given rather than imports (the config sits above it).
 */
export type RentedConfigReader = (
  value: unknown,
  nodeName: string,
) =>
  | { readonly ok: true; readonly node: RentedNodeConfig }
  | { readonly ok: false; readonly problems: RentedNodeProblem[] };
