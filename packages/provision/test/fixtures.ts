// Shared fixtures for the provision tests: a spec, capabilities, an authorization and instants.
import type {
  ComputeAuthorization,
  DeploymentSpec,
  HostingPolicy,
  Instant,
  ProviderCapabilities,
} from "@pair/provision";

export const CAPS: ProviderCapabilities = {
  provider: "fake",
  idempotencyKeys: false,
  pauseResume: false,
  billingEndedStatuses: ["TERMINATED"],
  chargingStatuses: ["STARTING", "RUNNING", "EXITED"],
  idleStatuses: ["IDLE"],
  billingGranularityMs: 1_000,
  maxListingLagMs: 5_000,
  stopSettleMs: 0,
  stopLatencyMs: 0,
  stopMode: "terminate",
};

export const SPEC: DeploymentSpec = {
  provider: "fake",
  account: "acct",
  name: "pair-llama",
  model: "meta-llama/Llama-3.1-8B-Instruct",
  hardware: "NVIDIA L4",
  region: "us-east-1",
};

export const AUTH: ComputeAuthorization = { ledgerId: "ledger-1", reservationId: "res-1" };
export const POLICY: HostingPolicy = { maxActiveResources: 4, maxLifetimeMs: 3_600_000 };
export const OWNER = "pair:node-a";

export function at(ms: number): Instant {
  return { wallMs: 1_800_000_000_000 + ms, monoMs: ms };
}
