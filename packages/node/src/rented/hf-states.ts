/**
 * Hugging Face endpoint states as PAIR shows them (the seed's table).
 * Must not know: how the state was looked up, routing.
 */

import type { RentedState } from "./rented-nodes.js";

export const HF_STATES: Readonly<Record<string, RentedState>> = {
  running: "running",
  scaledToZero: "scaled_to_zero",
  paused: "paused",
  pending: "starting",
  initializing: "starting",
  updating: "starting",
  failed: "failed",
  updateFailed: "failed",
};
