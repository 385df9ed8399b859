/**
 * Requested versus observed. `DeploymentSpec` is what the operator asked for; `ProvisionedDeployment`
 * is what the provider reported. `observe()` fills the observed record from a provider report alone:
 * it never sees the spec, so an unreported field stays `undefined` (unknown), never `false` and never
 * the requested value.
 * Must not know: provider wire formats (adapters turn those into `ResourceReport`).
 */

import type { ResourceKey } from "./identity.js";

/** What the operator asked for. Provider-specific settings ride in `settings`, opaque to the core. */
export interface DeploymentSpec {
  readonly provider: string;
  readonly account: string;
  /** The name to create the resource under. */
  readonly name: string;
  /** The model the resource should serve (exact tag). */
  readonly model: string;
  /** Requested hardware, in the provider's words (`nvidia-l4`, `NVIDIA L40S`, …). */
  readonly hardware: string;
  readonly region?: string;
  /** Adapter-specific settings; the core copies them to the create request and reads nothing else. */
  readonly settings?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * One resource as a provider listing or description reported it. Every field but the key is optional:
 * adapters set only what the provider actually said.
 */
export interface ResourceReport {
  readonly key: ResourceKey;
  /** The provider's own state word (`running`, `paused`, `RUNNING`, `TERMINATED`, …). */
  readonly status?: string;
  /** Owner tag read back from the resource (labels, env, tags). */
  readonly ownerTag?: string;
  /** The request id we wrote into the resource when creating it. */
  readonly requestId?: string;
  /** The lease epoch we wrote into the resource when creating it. */
  readonly epoch?: number;
  /** Where the resource serves, if reported. */
  readonly address?: string;
  /** The model the resource reports serving. */
  readonly servedModel?: string;
  /** Whether the provider reports the resource ready to serve. */
  readonly ready?: boolean;
  readonly hardware?: string;
  /** When the provider says the resource was created (epoch ms). */
  readonly createdAtMs?: number;
  /** A message the provider attached (failure reason, …). */
  readonly message?: string;
}

/** The observed side of a deployment: only what a provider reported, and when. */
export interface ProvisionedDeployment {
  readonly key: ResourceKey;
  readonly observedAtMs: number;
  readonly status?: string;
  readonly ownerTag?: string;
  readonly requestId?: string;
  readonly epoch?: number;
  readonly address?: string;
  readonly servedModel?: string;
  readonly ready?: boolean;
  readonly hardware?: string;
  readonly createdAtMs?: number;
  readonly message?: string;
}

/** Every field of `ProvisionedDeployment` that comes from the report (all but key and time). */
export const OBSERVED_FIELDS = [
  "status",
  "ownerTag",
  "requestId",
  "epoch",
  "address",
  "servedModel",
  "ready",
  "hardware",
  "createdAtMs",
  "message",
] as const satisfies readonly (keyof ResourceReport & keyof ProvisionedDeployment)[];

type ObservedField = (typeof OBSERVED_FIELDS)[number];
// Compile-time proof that OBSERVED_FIELDS names every optional field of ProvisionedDeployment.
type MissingObserved = Exclude<keyof ProvisionedDeployment, ObservedField | "key" | "observedAtMs">;
const everyObservedFieldListed: MissingObserved extends never ? true : MissingObserved = true;
void everyObservedFieldListed;

/** Build the observed record from a provider report. Fields the report lacks stay absent. */
export function observe(report: ResourceReport, observedAtMs: number): ProvisionedDeployment {
  const out: Record<string, unknown> = { key: report.key, observedAtMs };
  for (const field of OBSERVED_FIELDS) {
    const value = report[field];
    if (value !== undefined) out[field] = value;
  }
  return out as unknown as ProvisionedDeployment;
}
