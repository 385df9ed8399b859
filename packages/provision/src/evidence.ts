/**
 * Evidence: the only things that discharge a stop obligation. The vocabulary is shared with the
 * spending ledger, whose ConfirmStopped takes exactly these. A disconnect, an expired lease, a
 * restart or a partial listing is not evidence and has no constructor here.
 * Must not know: how evidence was gathered (the shell) or what it costs (the ledger).
 */

export const EVIDENCE_KINDS = [
  "absent-from-complete-listing",
  "provider-reported-billing-ended",
  "stop-accepted",
  "external-confirmation",
] as const;

export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

export type Evidence =
  | {
      readonly kind: "absent-from-complete-listing";
      /** When the complete listing that lacked the resource was requested. */
      readonly listingStartedAtMs: number;
      readonly observedAtMs: number;
    }
  | {
      readonly kind: "provider-reported-billing-ended";
      /** The provider's state word, one the adapter declared as ending billing. */
      readonly status: string;
      readonly observedAtMs: number;
    }
  | {
      readonly kind: "stop-accepted";
      readonly mode: "pause" | "terminate";
      readonly observedAtMs: number;
    }
  | {
      readonly kind: "external-confirmation";
      /** Who confirmed (an operator, the provider's billing console, …). */
      readonly confirmedBy: string;
      readonly note: string;
      readonly observedAtMs: number;
    };

/** Why a deployment must be stopped now. */
export const STOP_REASONS = [
  "user-request",
  "lifetime-exceeded",
  "max-active-exceeded",
  "budget-exceeded",
  "idle",
  "sponsor-exit",
  "orphan",
  "billing-after-stop",
  "unhealthy",
  /** A rental window (a batch's Hugging Face Job, …) has ended, whatever the provider's own timeout. */
  "window-ended",
] as const;

export type StopReason = (typeof STOP_REASONS)[number];

/**
 * Permission to spend, issued by the spending ledger against a reservation. Declaring a deployment
 * without one is refused.
 */
export interface ComputeAuthorization {
  readonly ledgerId: string;
  readonly reservationId: string;
}
