/**
 * @pair/ledger: the spending ledger. Reservations (a budget envelope per rented node), compute
 * authorizations, accrual of billed time in episodes fed by the hosting contract's events, per-token
 * costs with estimates reserved before dispatch, caps that stop a node before a billed granule would
 * cross them, attribution of cost to workloads, and the store port with an in-memory store.
 * Pure: no I/O, no clock of its own; it imports only @pair/provision.
 */

export * from "./money.js";
export * from "./time-zone.js";
export * from "./state.js";
export * from "./entries.js";
export * from "./inputs.js";
export { decide } from "./decide.js";
export { issuedAuthorization } from "./reservations.js";
export {
  capOf,
  firstUnaffordableGranuleMs,
  markHolds,
  standings,
  stopLeadMsFor,
  stopSchedule,
  windowAt,
  type StopAllowance,
  type StopSchedule,
  type WindowStanding,
} from "./budget.js";
export { hourlyRate, runCostMicroUsd } from "./accrual.js";
export * from "./queries.js";
export * from "./spend-series.js";
export * from "./validate.js";
export * from "./store-port.js";
export * from "./memory-store.js";
