/**
 * The node's configuration: which file, its keys and defaults (docs/reference.md, "Configuration (YAML)"),
 * validation at start, and the typed result the daemon reads. The public face of this folder.
 * Must not know: the daemon, sockets, the credential store, provider APIs.
 */

export {
  CONFIG_PROBLEM_CODES,
  ConfigError,
  formatProblem,
  type ConfigProblem,
  type ConfigProblemCode,
} from "./config-error.js";
export {
  ENGINE_APIS,
  MANAGEABLE_PROVIDERS,
  RENTED_PROVIDERS,
  ROUTING_USES,
  type ApiKeyConfig,
  type BaseUrlNode,
  type ConfigHost,
  type ContextTokensConfig,
  type CredentialRef,
  type EngineApi,
  type EngineConfig,
  type HistoryRetention,
  type HostPort,
  type HfJobSettings,
  type HuggingFaceEndpointNode,
  type HuggingFaceJobNode,
  type ModelAlias,
  type NodeSettings,
  type PairConfig,
  type ProviderApis,
  type RentedBudget,
  type RentedLifecycle,
  type RentedNodeConfig,
  type RentedProvider,
  type RoutingUse,
  type RunpodNode,
  type RunpodPodNode,
  type RunpodPodSettings,
  type TlsSettings,
} from "./config-types.js";
export {
  CREDENTIAL_PREFIX,
  DEFAULT_CREDENTIAL_SERVICE,
  formatCredentialRef,
  parseCredentialRef,
  type CredentialRefResult,
} from "@pair/sponsor";
export { RENTED_DEFAULTS } from "./defaults.js";
export {
  CONFIG_ENV_VAR,
  loadConfig,
  defaultPaths,
  resolveConfigFile,
  type ConfigFileChoice,
  type ConfigFileVia,
  type LoadConfigOptions,
  type LoadedConfig,
} from "./load-config.js";
export {
  formatHostPort,
  isLoopbackHost,
  parseHostPort,
  parseOutboundUrl,
  type Parsed,
} from "./net-address.js";
export {
  DEFAULT_ALLOWED_ORIGINS,
  ORIGINS_ENV_VAR,
  parseAllowedHost,
  parseOriginPattern,
  parseOriginsEnv,
} from "./browser-access.js";
export { defaultConfig, parseConfig } from "./parse-config.js";
export { readRentedNodeValue, RENTED_NODE_KEYS, type RentedNodeProblem } from "./read-rented-nodes.js";
export { closestKey } from "./closest-key.js";
export { platformPaths, type PlatformPaths } from "./platform-paths.js";
