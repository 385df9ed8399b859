/**
 * The node's configuration as the rest of the daemon reads it: internal names with the unit in the
 * name (`coldStartMs`, `budgetMicroUsdPerDay`), every default applied, every path absolute, every URL
 * checked and normalised. Nothing here holds a secret: credentials are references into the OS
 * credential store. Values are deeply frozen.
 * Must not know: YAML, file names, how values were validated.
 */

import type { HostPort } from "@pair/cluster";

/** A `host:port` pair: the cluster's own type (peer addresses), which listen addresses share. */
export type { HostPort };

/** Where a secret lives in the OS credential store (`os-credential-store:SERVICE/ACCOUNT`). */
export interface CredentialRef {
  readonly service: string;
  readonly account: string;
}

/**
 * @deprecated Read and checked so older files stay valid, but it authenticates nobody: API keys
 * live hashed in the data dir (`pair apikey create ID`), where the node checks them.
 */
export interface ApiKeyConfig {
  readonly id: string;
  readonly keyCredential: CredentialRef;
}

export interface HistoryRetention {
  /** Workload history keeps at most this many rows. */
  readonly maxRows: number;
  /** … and drops rows older than this. */
  readonly maxAgeMs: number;
}

export interface NodeSettings {
  /** Shown to peers; `x-pair-served-by` for local engines. */
  readonly name: string;
  /** Absolute. SQLite, node identity, admin token — never a secret. */
  readonly dataDir: string;
  /** Client API (OpenAI + Ollama + admin). Beyond loopback only with an active key in the data dir. */
  readonly listen: HostPort;
  /** Peer API, mTLS only. */
  readonly clusterListen: HostPort;
  readonly discovery: { readonly mdns: boolean };
  /** Static peer cluster addresses (pairing still required). */
  readonly peers: readonly HostPort[];
  /** @deprecated See `ApiKeyConfig`. */
  readonly apiKeys: readonly ApiKeyConfig[];
  readonly history: HistoryRetention;
  /** Host names a `Host` header may carry on a loopback listen besides the local ones (lowercased; `*.lan`). */
  readonly allowedHosts: readonly string[];
  /** Browser origin patterns admitted besides the local defaults (lowercased; `*` any run of characters). */
  readonly allowedOrigins: readonly string[];
  /** `max_upstream_body_mb` in bytes: a non-streamed reply or error body larger than this is cut (502). */
  readonly maxUpstreamBodyBytes: number;
}

export const ENGINE_APIS = ["ollama", "openai"] as const;
export type EngineApi = (typeof ENGINE_APIS)[number];

export interface EngineConfig {
  readonly name: string;
  readonly api: EngineApi;
  /** Normalised, no trailing slash. `ollama`: the host; `openai`: ends in `/v1`. */
  readonly baseUrl: string;
  readonly maxConcurrent: number;
  readonly probeIntervalMs: number;
  /** A request with no first byte by then fails over (before the first byte only). */
  readonly firstByteTimeoutMs: number;
  /** `context_tokens`: the window assumed instead of the engine's own (docs/context.md). */
  readonly contextTokens?: ContextTokensConfig;
  /** Ollama `num_ctx: auto | off`: whether PAIR may raise num_ctx so a prompt fits (default auto). */
  readonly raiseNumCtx?: boolean;
}

/** A window in tokens for every model, or by model name (`"*"`: the rest). */
export type ContextTokensConfig = number | Readonly<Record<string, number>>;

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

/** Provider API base URLs without version (PAIR appends it); overridable so emulators can stand in. */
export interface ProviderApis {
  readonly huggingface: {
    readonly endpointsApi: string;
    readonly hubApi: string;
    /** Hugging Face's endpoint catalog (`pair rented catalog`, `create --catalog`). */
    readonly catalogApi: string;
  };
  readonly runpod: {
    readonly api: string;
    /** A pod's proxy base URL template: `{pod_id}` and `{port}` (both present) are replaced. */
    readonly proxyUrl: string;
  };
}

export interface TlsSettings {
  /** One more CA trusted for outbound HTTPS (absolute path); verification stays on. */
  readonly extraCaFile: string | null;
}

/**
 * One model under several names (`model_aliases:`): `name` is the alias, `models` the other names
 * nodes and engines advertise it by (the alias not repeated). A name belongs to one group only.
 */
export interface ModelAlias {
  readonly name: string;
  readonly models: readonly string[];
}

export interface PairConfig {
  readonly node: NodeSettings;
  readonly engines: readonly EngineConfig[];
  readonly rentedNodes: readonly RentedNodeConfig[];
  /** Alias groups; none by default (exact-name routing). */
  readonly modelAliases: readonly ModelAlias[];
  readonly providers: ProviderApis;
  readonly tls: TlsSettings;
}

/** What the configuration's defaults depend on: passed in, never read here. */
export interface ConfigHost {
  /** Expands `~` (data_dir, extra_ca_file, the default config file). */
  readonly homeDir: string;
  /** Default `node.name`. */
  readonly hostName: string;
  /** Default `node.data_dir` (absolute; platform-paths.ts); absent: `~/.local/share/pair`. */
  readonly dataDir?: string;
}
