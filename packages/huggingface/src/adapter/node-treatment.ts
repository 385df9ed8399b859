/**
 * How PAIR treats a rented node in each Hugging Face endpoint state — exactly the seed's table, as
 * one pure function for the node's scheduler and node detail:
 *
 *   running                          → eligible
 *   scaledToZero                     → eligible with a cold start (send X-Scale-Up-Timeout)
 *   paused                           → not eligible; with wake_on_request the sponsor resumes it and
 *                                      the request waits up to the cold-start budget, else the
 *                                      request fails `rented_node_paused`
 *   pending, initializing, updating  → starting; not eligible
 *   failed                           → unhealthy; node detail shows Hugging Face's message
 *
 * Not in the seed's table, decided here: `updateFailed` and any state this client does not know are
 * unhealthy with HF's message (never routed to on a guess).
 * Must not know: HTTP, the scheduler, the contract.
 */

import { HF_ENDPOINT_STATES, type HfEndpointState } from "../model.js";

export type HfNodeTreatment =
  | { readonly kind: "eligible"; readonly eligible: true; readonly coldStart: false }
  /** Serve, but send `X-Scale-Up-Timeout` (the node's cold-start budget) so HF holds the request. */
  | { readonly kind: "cold-start"; readonly eligible: true; readonly coldStart: true }
  | {
      readonly kind: "paused";
      readonly eligible: false;
      /** `wake`: resume, then let the request wait up to the cold-start budget; `refuse`: fail it. */
      readonly onRequest: "wake" | "refuse";
      /** The error a refused request gets (never `model_not_found`). */
      readonly refusalCode: "rented_node_paused";
    }
  | { readonly kind: "starting"; readonly eligible: false }
  | { readonly kind: "unhealthy"; readonly eligible: false; readonly message: string };

export interface TreatmentOptions {
  /** The node's `lifecycle.wake_on_request`. */
  readonly wakeOnRequest: boolean;
}

function isHfState(status: string): status is HfEndpointState {
  return (HF_ENDPOINT_STATES as readonly string[]).includes(status);
}

/**
 * The treatment of an endpoint in `status` (HF's state word, e.g. `ResourceReport.status` or
 * `HfEndpoint.rawState`), with HF's status message for node detail.
 */
export function nodeTreatment(
  status: string | undefined,
  message: string | undefined,
  options: TreatmentOptions,
): HfNodeTreatment {
  const said = (fallback: string): string =>
    message !== undefined && message.trim() !== "" ? message : fallback;
  if (status === undefined || !isHfState(status))
    return {
      kind: "unhealthy",
      eligible: false,
      message: said(
        status === undefined
          ? "Hugging Face reported no state for this endpoint"
          : `Hugging Face reported an unknown state "${status}"`,
      ),
    };
  switch (status) {
    case "running":
      return { kind: "eligible", eligible: true, coldStart: false };
    case "scaledToZero":
      return { kind: "cold-start", eligible: true, coldStart: true };
    case "paused":
      return {
        kind: "paused",
        eligible: false,
        onRequest: options.wakeOnRequest ? "wake" : "refuse",
        refusalCode: "rented_node_paused",
      };
    case "pending":
    case "initializing":
    case "updating":
      return { kind: "starting", eligible: false };
    case "failed":
      return { kind: "unhealthy", eligible: false, message: said("Endpoint failed to deploy") };
    case "updateFailed":
      return { kind: "unhealthy", eligible: false, message: said("Endpoint update failed") };
  }
}

/** The seed's table as data (state → treatment kind), for docs and a test walking every row. */
export const NODE_TREATMENT_TABLE: { readonly [S in HfEndpointState]: HfNodeTreatment["kind"] } = {
  running: "eligible",
  scaledToZero: "cold-start",
  paused: "paused",
  pending: "starting",
  initializing: "starting",
  updating: "starting",
  failed: "unhealthy",
  updateFailed: "unhealthy",
};
