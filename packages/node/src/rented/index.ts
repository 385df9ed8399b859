/**
 * Rented nodes held by this node as their sponsor: their config and run-time switches, credentials
 * in memory only, probing over verified HTTPS, what peers may learn, and how requests reach them.
 * The public face of this folder.
 * Must not know: the client API, dialects, the CLI.
 */

export { createOutboundAgent, type OutboundOptions } from "./outbound-agent.js";
export {
  OFF_LAN_LABEL,
  readRentedPeerViews,
  RENTED_PEER_VIEW_FIELDS,
  type RentedPeerView,
} from "./peer-view.js";
export {
  BUDGET_REASON_PREFIX,
  failureKindOf,
  peerReasonText,
  refusalCodeOfReason,
  RENTED_PROBLEMS,
  rentedProblemOf,
  type RentedProblem,
} from "./peer-reason.js";
export { RENTED_FILE, type RentedOverride } from "./rented-file.js";
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
} from "./rented-nodes.js";
export type { EndpointLookup, EndpointLookupFn } from "./hf-endpoint-states.js";
export { isRentedAdminPath, RENTED_ADMIN_PATHS, serveRentedAdmin } from "./rented-admin-routes.js";
export { ADOPT_INCARNATION, AdoptingProvider } from "./adopting-provider.js";
export {
  ManagedEndpoint,
  type CreatedInfo,
  type ManagedAction,
  type ManagedView,
  type NewEndpointSpec,
} from "./managed-endpoint.js";
export {
  managedConfigs,
  ManagedEndpoints,
  SYSTEM_CLOCK,
  SYSTEM_TIMERS,
  type ManagedEndpointsOptions,
  type TimerSeam,
} from "./managed-endpoints.js";
export { ManagedLedger, reservationIdOf } from "./managed-ledger.js";
export { estimateCostMicroUsd, type CostBasis } from "./cost-estimate.js";
export { SharedLedger } from "./shared-ledger.js";
export {
  ManagedNodes,
  type ManagedActionName,
  type ManagedRentedNode,
  type NodeRoutingUse,
  type Prepared,
} from "./managed-node.js";
export { runpodPodConfigs, RunpodPodNodes, type RunpodPodNodesOptions } from "./runpod-pod-nodes.js";
export { JobManagedNode, jobSettingsOf, type JobManagedNodeOptions, type JobNodeView } from "./job-node.js";
export { JobNodes, jobNodeConfigs, type JobNodesOptions } from "./job-nodes.js";
export { RunpodPodManagedNode, runpodModelOf, type RunpodPodView } from "./runpod-pod-node.js";
export { attachedRentedConfigs } from "./attached-configs.js";
export {
  DEFAULT_HF_CREDENTIAL,
  hardwareRow,
  RentedCreator,
  type AccountView,
  type HardwareRow,
  type HfAnswer,
  type RentedCreatorOptions,
} from "./create-endpoint.js";
export { endpointGpuLabel, gpuLabel, gpuName, jobGpuLabel, podGpuLabel } from "./gpu-label.js";
export { HF_ACCOUNT_PATHS, isHfAccountPath, serveHfAccount } from "./hf-account-routes.js";
export {
  DEFAULT_STATE_HISTORY_PER_NODE,
  observedState,
  RentedStateHistory,
  STATE_HISTORY_FILE,
  type ObservedState,
  type StateChange,
  type StateHistoryOptions,
} from "./state-history.js";
export { serveStateHistory, STATE_HISTORY_PATH } from "./state-history-route.js";
export { serveSpend, SPEND_PATH } from "./spend-route.js";
