/**
 * The Runpod adapter behind the hosting contract: capabilities, RunpodModel settings, pod identity
 * and the ProviderPort implementation.
 * Must not know: the daemon, credentials storage.
 */

export { RUNPOD_CAPABILITIES, RUNPOD_PROVIDER } from "./capabilities.js";
export {
  RUNPOD_MODEL_SETTING,
  readRunpodModel,
  runpodModelSettings,
  validateRunpodModel,
  type RunpodModel,
} from "./runpod-model.js";
export {
  IDENTITY_ENV,
  POD_NAME_PREFIX,
  RUNPOD_PROXY_URL,
  RUNPOD_PROXY_URL_TEMPLATE,
  httpPort,
  identityEnv,
  podApiBaseUrl,
  proxyUrlFromTemplate,
  reportOf,
  type PodIdentity,
  type ProxyUrlOf,
} from "./pod-identity.js";
export { podRequest, secretReference, vllmArgs } from "./pod-request.js";
export {
  RUNPOD_CREATE_REFUSAL_CODES,
  RunpodProvider,
  type PlacementAttempt,
  type RunpodProviderOptions,
} from "./runpod-provider.js";
