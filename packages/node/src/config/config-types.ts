/**
 * The node's configuration as the rest of the daemon reads it: internal names with the unit in the
 * name (`coldStartMs`, `budgetMicroUsdPerDay`), every default applied, every path absolute, every URL
 * checked and normalised. Nothing here holds a secret: credentials are references into the OS
 * credential store. Values are deeply frozen.
 * Must not know: YAML, file names, how values were validated.
 */

import type { HostPort } from "@pair/cluster";
import type { ContextTokensConfig, CredentialRef, RentedNodeConfig } from "@pair/sponsor";

/** A `host:port` pair: the cluster's own type (peer addresses), which listen addresses share. */
export type { HostPort };

/** What describes a rented node lives in the sponsor, which reads it; the daemon's config holds it. */
export {
  MANAGEABLE_PROVIDERS,
  RENTED_PROVIDERS,
  ROUTING_USES,
  type BaseUrlNode,
  type ContextTokensConfig,
  type CredentialRef,
  type HfJobSettings,
  type HuggingFaceEndpointNode,
  type HuggingFaceJobNode,
  type RentedBudget,
  type RentedLifecycle,
  type RentedNodeConfig,
  type RentedProvider,
  type RoutingUse,
  type RunpodNode,
  type RunpodPodNode,
  type RunpodPodSettings,
} from "@pair/sponsor";

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
