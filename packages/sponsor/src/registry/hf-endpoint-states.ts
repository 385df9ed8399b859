/**
 * A Hugging Face endpoint as the sponsor looks it up by name (the Endpoints API), and how its states
 * read as a rented node's states (the seed's table). Moved out of rented-nodes.ts, which uses both.
 * Must not know: HTTP, the transport, routing.
 */

import type { Redacted } from "@pair/cluster";

/** A Hugging Face endpoint as the Endpoints API reports it (the sponsor looks it up by name). */
export interface EndpointLookup {
  /** HF's state word: running, scaledToZero, paused, pending, initializing, updating, failed, … */
  readonly state: string;
  /** The data-plane base URL (without /v1), when HF reports one. */
  readonly url: string | undefined;
  readonly accessType: string;
  /** The model repository it serves. */
  readonly repository: string;
  readonly message: string | undefined;
  /** `compute.accelerator`, `compute.instanceType`, `compute.instanceSize`: what it runs on. */
  readonly accelerator: string | undefined;
  readonly instanceType: string | undefined;
  readonly instanceSize: string | undefined;
}

/** Looks an endpoint up with the sponsor's token; throws with `kind: "rejected_credential"` on 401/403. */
export type EndpointLookupFn = (
  endpoint: { readonly namespace: string; readonly name: string },
  token: Redacted<string>,
) => Promise<EndpointLookup>;

/** Hugging Face endpoint states as PAIR shows them (the seed's table). */
export const HF_STATES: Readonly<
  Record<string, "running" | "scaled_to_zero" | "paused" | "starting" | "failed">
> = {
  running: "running",
  scaledToZero: "scaled_to_zero",
  paused: "paused",
  pending: "starting",
  initializing: "starting",
  updating: "starting",
  failed: "failed",
  updateFailed: "failed",
};
