/**
 * The Hugging Face Inference Endpoints adapter behind the hosting contract: the provider port
 * implementation, its declared capabilities, the state → node treatment table, and the cost, idle
 * and budget policy helpers the sponsor calls.
 * Must not know: PAIR's node (config, CLI, routing).
 */

export { HF_ENDPOINT_CAPABILITIES, HF_ENDPOINT_PROVIDER, capabilitiesFor } from "./capabilities.js";
export {
  CREATE_SETTINGS,
  DEFAULT_ENGINE_IMAGE_URL,
  DEFAULT_SCALE_TO_ZERO_MIN,
  MAX_REPLICAS,
  MAX_SCALE_TO_ZERO_MIN,
  toEndpointSpec,
  vllmImage,
  type CreateRefusal,
  type CreateSettingName,
} from "./create-spec.js";
export {
  HuggingFaceEndpointsProvider,
  type HuggingFaceEndpointsProviderOptions,
} from "./endpoints-provider.js";
export { isOwnershipTag, readOwnership, type OwnershipMarks } from "./ownership.js";
export { endpointKey, isReady, toResourceReport } from "./resource-report.js";
export {
  NODE_TREATMENT_TABLE,
  nodeTreatment,
  type HfNodeTreatment,
  type TreatmentOptions,
} from "./node-treatment.js";
export {
  MAX_IDLE_PAUSE_MS,
  authorizeCreate,
  budgetVerdict,
  idlePauseDueAtMs,
  resumeAllowed,
  shouldIdlePause,
  type BudgetVerdict,
  type ResumeRefusal,
} from "./cost-policy.js";
