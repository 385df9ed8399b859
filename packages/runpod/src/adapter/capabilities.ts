/**
 * What the Runpod adapter declares to the hosting contract. Only TERMINATED ends billing: EXITED
 * (stopped) and ERROR still bill the pod volume, so they count as charging and are terminated,
 * never treated as paused. Runpod has no idempotency key and no pause that stops billing.
 * Must not know: HTTP, pods' wire shape.
 */

import type { ProviderCapabilities } from "@pair/provision";

export const RUNPOD_PROVIDER = "runpod";

/**
 * `maxListingLagMs`: the reference gives no figure, only "retry a few times, because listing lags"
 * (runpod-api.md §1.4); 30 s is our assumption, checked by the live conformance suite.
 * `stopSettleMs`: after a DELETE the pod may still show its old status briefly; 60 s, assumed.
 * `stopLatencyMs`: a DELETE's round trip plus Runpod ending the bill; 20 s is a margin, not a
 * measurement (billed per second, so the margin is all a budget stop gives away).
 */
export const RUNPOD_CAPABILITIES: ProviderCapabilities = {
  provider: RUNPOD_PROVIDER,
  idempotencyKeys: false,
  pauseResume: false,
  billingEndedStatuses: ["TERMINATED"],
  chargingStatuses: ["PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR"],
  idleStatuses: [],
  billingGranularityMs: 1_000,
  maxListingLagMs: 30_000,
  stopSettleMs: 60_000,
  stopLatencyMs: 20_000,
  stopMode: "terminate",
};
