/**
 * @pair/provision: the hosting contract. Identity, lifecycle, stop obligations, leases, policy and
 * reconciliation, as a pure core (`decide`, `reconcile`, `restore`), plus the controller shell that
 * runs it against a provider port and a store port. No dependencies, no I/O, no clock of its own.
 */

export * from "./result.js";
export * from "./time.js";
export * from "./identity.js";
export * from "./deployment.js";
export * from "./evidence.js";
export * from "./lifecycle.js";
export * from "./provider-port.js";
export * from "./state.js";
export * from "./policy.js";
export * from "./window.js";
export * from "./inputs.js";
export { decide, reportEndsBilling, reportIsCharging } from "./decide.js";
export * from "./reconcile.js";
export * from "./restore.js";
export * from "./stop-backoff.js";
export * from "./controller.js";
export * from "./memory-store.js";
