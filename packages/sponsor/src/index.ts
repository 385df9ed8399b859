/**
 * @pair/sponsor: the rented nodes a node holds as their sponsor: their config and run-time switches,
 * credentials in memory only, probing over verified HTTPS, what peers may learn, how requests reach
 * them, and each provider's lifecycle shell. Its folders, top to bottom: create/ (`pair rented
 * create`), one folder per provider (hf-endpoint/, hf-job/, runpod/) beside registry/ (RentedNodes),
 * core/ (the ManagedRentedNode contract, the ManagedNodes registry and the ManagedNodeCore every
 * managed node composes) and config/ (what describes a rented node). The admin routes over it are
 * the daemon's (packages/node/src/sponsor-routes/).
 * Must not know: the client API, the daemon's config reader, HTTP serving, the CLI.
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
export { AdoptingProvider } from "./hf-endpoint/adopting-provider.js";
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
export {
  DEFAULT_STATE_HISTORY_PER_NODE,
  observedState,
  RentedStateHistory,
  STATE_HISTORY_FILE,
  type ObservedState,
  type StateChange,
  type StateHistoryOptions,
} from "./registry/state-history.js";
export * from "./config/index.js";
export { boundedText } from "./core/bounded-text.js";
