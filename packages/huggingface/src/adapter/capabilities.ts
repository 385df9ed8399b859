/**
 * What the Hugging Face Inference Endpoints adapter declares to the hosting contract: its provider
 * id, which endpoint states end billing, charge, or do neither, the billing unit, and how long a
 * created endpoint may take to show in a listing. The contract's evidence rules and the ledger's
 * accrual read these; the choices follow the reference's billing notes (§3.1) and are explained below.
 * Must not know: HTTP, the transport, how states are shown to users (node-treatment.ts).
 */

import type { ProviderCapabilities } from "@pair/provision";

/** Provider id in every ResourceKey this adapter makes. */
export const HF_ENDPOINT_PROVIDER = "huggingface-endpoint";

/**
 * Declared capabilities.
 * - `paused` ends billing (docs: "no charges"); a deleted endpoint is absent from the listing, which
 *   is complete (HF's listing is not paginated), so absence is the evidence for a delete.
 * - Charging: `initializing`, `running` (docs), `updating` (replicas keep serving; [?] in the
 *   reference, taken as billed) and `updateFailed` (old replicas may still run; [?], taken as billed
 *   so the ledger never under-counts).
 * - Idle (no charge, obligation stays open): `scaledToZero` (any request wakes it), `pending` (docs
 *   bill "initializing or running" only; the emulator agrees), `failed` (docs bill only successfully
 *   deployed replicas, but an update can redeploy it, so the obligation stays open until paused or
 *   deleted). `pendingCharges: true` moves `pending` to charging (see `capabilitiesFor`).
 * - Per started minute; stop mode pause (keeps the endpoint, bills nothing, needs an explicit resume).
 * - Listing lag 60 s and stop settle 120 s: not documented ([?]); HF answers a create with the endpoint
 *   and lists it from then on in every source read, so these are margins, not measurements.
 * - Stop latency 20 s: the pause's round trip and HF ending the bill; a margin too ([?]): a pause
 *   landing in a new billed minute pays it whole, so the budget stop goes out this much earlier.
 */
export const HF_ENDPOINT_CAPABILITIES: ProviderCapabilities = {
  provider: HF_ENDPOINT_PROVIDER,
  idempotencyKeys: false,
  pauseResume: true,
  billingEndedStatuses: ["paused"],
  chargingStatuses: ["initializing", "running", "updating", "updateFailed"],
  idleStatuses: ["scaledToZero", "pending", "failed"],
  billingGranularityMs: 60_000,
  maxListingLagMs: 60_000,
  stopSettleMs: 120_000,
  stopLatencyMs: 20_000,
  stopMode: "pause",
};

/** The capabilities, with `pending` taken as charging when the operator wants the cautious reading. */
export function capabilitiesFor(options: { readonly pendingCharges?: boolean }): ProviderCapabilities {
  if (options.pendingCharges !== true) return HF_ENDPOINT_CAPABILITIES;
  return {
    ...HF_ENDPOINT_CAPABILITIES,
    chargingStatuses: ["pending", ...HF_ENDPOINT_CAPABILITIES.chargingStatuses],
    idleStatuses: HF_ENDPOINT_CAPABILITIES.idleStatuses.filter((s) => s !== "pending"),
  };
}
