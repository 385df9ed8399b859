/**
 * What the Hugging Face Jobs adapter declares to the hosting contract. A job cannot be paused (no
 * scale-to-zero, the model reloads on every start): the stop is a cancel (`terminate`).
 * - Billing ended: COMPLETED, ERROR (a timeout lands here in the emulator; [?] live), CANCELED,
 *   DELETED — every terminal stage of reference §5.4; docs: "cancel or timeout stops billing" [D].
 * - Charging: RUNNING and UPDATING (live per the Python log follower), and SCHEDULING too: the docs
 *   bill "starting or running" and a job's API stage cannot tell scheduling from starting, so the
 *   cautious reading is taken (the ledger may over-count a few minutes, never under-count).
 * - Per started minute [D]. Listing lag 30 s and stop settle 60 s are margins ([?]): HF answers a
 *   create with the job and lists it at once in every source read; cancel is answered at once.
 *   Stop latency 20 s: the cancel's round trip and HF ending the bill, a margin ([?]).
 * Must not know: HTTP, the transport.
 */

import type { ProviderCapabilities } from "@pair/provision";

/** Provider id in every ResourceKey this adapter makes. */
export const HF_JOB_PROVIDER = "huggingface-job";

export const HF_JOB_CAPABILITIES: ProviderCapabilities = {
  provider: HF_JOB_PROVIDER,
  idempotencyKeys: false,
  pauseResume: false,
  billingEndedStatuses: ["COMPLETED", "ERROR", "CANCELED", "DELETED"],
  chargingStatuses: ["SCHEDULING", "RUNNING", "UPDATING"],
  idleStatuses: [],
  billingGranularityMs: 60_000,
  maxListingLagMs: 30_000,
  stopSettleMs: 60_000,
  stopLatencyMs: 20_000,
  stopMode: "terminate",
};

/** USD per hour added while a job with an exposed port runs (reference §5.7 [D]). */
export const EXPOSED_PORT_USD_PER_HOUR = 0.01;
