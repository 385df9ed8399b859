/**
 * Rented nodes held by this node as their sponsor: their config and run-time switches, credentials
 * in memory only, probing over verified HTTPS, what peers may learn, and how requests reach them.
 * The public face of this folder, whose own folders are, top to bottom: routes/ (the admin API),
 * create/ (`pair rented create`), one folder per provider (hf-endpoint/, hf-job/, runpod/) beside
 * registry/ (RentedNodes), and core/ (the ManagedRentedNode contract, the ManagedNodes registry and
 * the ManagedNodeCore every managed node composes).
 * Must not know: the client API, dialects, the CLI.
 */

export { createOutboundAgent, type OutboundOptions } from "./core/outbound-agent.js";
export {
  OFF_LAN_LABEL,
  readRentedPeerViews,
  RENTED_PEER_VIEW_FIELDS,
  type RentedPeerView,
} from "./registry/peer-view.js";
export {
  BUDGET_REASON_PREFIX,
  failureKindOf,
  peerReasonText,
  refusalCodeOfReason,
  RENTED_PROBLEMS,
  rentedProblemOf,
  type RentedProblem,
} from "./registry/peer-reason.js";
export { RENTED_FILE, type RentedOverride } from "./registry/rented-file.js";
export {
  RENTED_CHANGE_CODES,
  RentedNodes,
  type RentedAction,
  type CredentialReader,
  type RentedChange,
  type RentedLink,
  type RentedNodesOptions,
  type RentedNodeView,
  type ManagedStatus,
  type RentedState,
} from "./registry/rented-nodes.js";
export type { EndpointLookup, EndpointLookupFn } from "./registry/hf-endpoint-states.js";
export { isRentedAdminPath, RENTED_ADMIN_PATHS, serveRentedAdmin } from "./routes/rented-admin-routes.js";
export { ADOPT_INCARNATION, AdoptingProvider } from "./hf-endpoint/adopting-provider.js";
export {
  ManagedEndpoint,
  type CreatedInfo,
  type ManagedAction,
  type ManagedView,
  type NewEndpointSpec,
} from "./hf-endpoint/managed-endpoint.js";
export {
  managedConfigs,
  ManagedEndpoints,
  type ManagedEndpointsOptions,
} from "./hf-endpoint/managed-endpoints.js";
export { ManagedLedger, reservationIdOf } from "./core/managed-ledger.js";
export { estimateCostMicroUsd, type CostBasis } from "./core/cost-estimate.js";
export { SharedLedger } from "./core/shared-ledger.js";
export {
  ManagedNodes,
  type ManagedActionName,
  type ManagedRentedNode,
  type NodeRoutingUse,
  type Prepared,
} from "./core/managed-node.js";
export { runpodPodConfigs, RunpodPodNodes, type RunpodPodNodesOptions } from "./runpod/runpod-pod-nodes.js";
export {
  JobManagedNode,
  jobSettingsOf,
  type JobManagedNodeOptions,
  type JobNodeView,
} from "./hf-job/job-node.js";
export { JobNodes, jobNodeConfigs, type JobNodesOptions } from "./hf-job/job-nodes.js";
export { RunpodPodManagedNode, runpodModelOf, type RunpodPodView } from "./runpod/runpod-pod-node.js";
export { attachedRentedConfigs } from "./registry/attached-configs.js";
export {
  DEFAULT_HF_CREDENTIAL,
  hardwareRow,
  RentedCreator,
  type AccountView,
  type HardwareRow,
  type HfAnswer,
  type RentedCreatorOptions,
} from "./create/create-endpoint.js";
export { endpointGpuLabel, gpuLabel, gpuName, jobGpuLabel, podGpuLabel } from "./core/gpu-label.js";
export { HF_ACCOUNT_PATHS, isHfAccountPath, serveHfAccount } from "./routes/hf-account-routes.js";
export {
  DEFAULT_STATE_HISTORY_PER_NODE,
  observedState,
  RentedStateHistory,
  STATE_HISTORY_FILE,
  type ObservedState,
  type StateChange,
  type StateHistoryOptions,
} from "./registry/state-history.js";
export { serveStateHistory, STATE_HISTORY_PATH } from "./routes/state-history-route.js";
export { serveSpend, SPEND_PATH } from "./routes/spend-route.js";
