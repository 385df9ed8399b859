/**
 * The endpoint lifecycle as one literal table: states, the transitions allowed between them, which
 * states bill, which count against quota, and the status message of each. The world refuses any
 * transition not in the table (a bug, not a user error).
 * Must not know: HTTP, clocks, billing amounts.
 */

export const ENDPOINT_STATES = [
  "pending",
  "initializing",
  "updating",
  "updateFailed",
  "running",
  "paused",
  "failed",
  "scaledToZero",
] as const;

export type EndpointState = (typeof ENDPOINT_STATES)[number];

/**
 * from → allowed next states. Creation enters `pending`; deletion leaves from any state.
 *   pending → initializing (scheduled) | paused
 *   initializing → running | failed (deploy failed) | paused | scaledToZero
 *   running → updating (config change) | paused | scaledToZero (request or idle timeout)
 *   updating → running | updateFailed | paused | scaledToZero
 *   updateFailed → updating | paused
 *   paused → pending (resume)
 *   failed → pending (an update redeploys) | paused
 *   scaledToZero → initializing (a request or resume wakes it) | paused
 */
export const TRANSITIONS: { readonly [S in EndpointState]: readonly EndpointState[] } = {
  pending: ["initializing", "paused"],
  initializing: ["running", "failed", "paused", "scaledToZero"],
  running: ["updating", "paused", "scaledToZero"],
  updating: ["running", "updateFailed", "paused", "scaledToZero"],
  updateFailed: ["updating", "paused"],
  paused: ["pending"],
  failed: ["pending", "paused"],
  scaledToZero: ["initializing", "paused"],
};

/**
 * States billed per started minute. Docs: "initializing and running"; `updating` is billed too here
 * (its replicas keep serving while the update rolls out; reference §7.6 leaves it open).
 */
export function isBilled(state: EndpointState): boolean {
  return state === "initializing" || state === "running" || state === "updating";
}

/** States whose accelerators count against the namespace quota (paused and failed do not). */
export function countsAgainstQuota(state: EndpointState): boolean {
  return state !== "paused" && state !== "failed";
}

/** States in which the data plane serves requests (`updateFailed`: the old replicas still serve). */
export function isServing(state: EndpointState): boolean {
  return state === "running" || state === "updating" || state === "updateFailed";
}

/** States in which a replica is on its way (a request may be held with X-Scale-Up-Timeout). */
export function isStarting(state: EndpointState): boolean {
  return state === "pending" || state === "initializing" || state === "scaledToZero";
}

export function defaultMessage(state: EndpointState): string {
  switch (state) {
    case "pending":
      return "Endpoint waiting to be scheduled";
    case "initializing":
      return "Endpoint is initializing";
    case "updating":
      return "Endpoint waiting for the update";
    case "updateFailed":
      return "Endpoint update failed";
    case "running":
      return "Endpoint is ready";
    case "paused":
      return "Endpoint is paused";
    case "failed":
      return "Endpoint failed to deploy";
    case "scaledToZero":
      return "Endpoint is scaled to zero";
  }
}
