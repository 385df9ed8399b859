/**
 * The Hugging Face emulator's public surface: start it, its options, and the types tests read
 * (views, meter, fault switches, hardware and catalog entries).
 * Must not know: anything beyond re-exports.
 */

export {
  startHuggingFaceEmulator,
  type ControlRequestSeen,
  type EndpointView,
  type HuggingFaceEmulator,
} from "./server.js";
export type { HuggingFaceEmulatorOptions } from "./options.js";
export type { BillingMeter, BilledStretch, RouterCharge } from "./billing-meter.js";
export type { ControlFaults, FaultFilter } from "./control-faults.js";
export { ENDPOINT_STATES, TRANSITIONS, isBilled, type EndpointState } from "./endpoint-states.js";
export { DEFAULT_CATALOG, DEFAULT_HARDWARE, type CatalogItem, type ComputeOption } from "./hardware.js";
export { DEFAULT_ROUTER_MODELS, type RouterModel } from "./inference-router.js";
export type { TokenGrant, TokenRole } from "./tokens.js";
export type { LifecycleTimings } from "./world.js";
