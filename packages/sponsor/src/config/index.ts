/**
 * What describes a rented node: its config types and defaults, credential references, and the port
 * through which the daemon's config reader reads one entry. The public face of this folder.
 * Must not know: YAML, the daemon, the credential store.
 */

export {
  configuredWindow,
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
  type RentedConfigReader,
  type RentedLifecycle,
  type RentedNodeConfig,
  type RentedNodeProblem,
  type RentedProvider,
  type RoutingUse,
  type RunpodNode,
  type RunpodPodNode,
  type RunpodPodSettings,
} from "./rented-config.js";
export {
  CREDENTIAL_PREFIX,
  DEFAULT_CREDENTIAL_SERVICE,
  formatCredentialRef,
  LITERAL_SECRET_MESSAGE,
  parseCredentialRef,
  type CredentialRefResult,
} from "./credential-ref.js";
export { RENTED_DEFAULTS } from "./rented-defaults.js";
