/**
 * The Hugging Face adapter's own view of endpoints, accounts and hardware: what the rest of PAIR
 * reads, independent of HF's JSON (wire.ts) — e.g. times as epoch ms, the incarnation named as such,
 * a field HF did not report left `undefined` (never guessed, never copied from what was asked).
 * Must not know: HTTP, JSON field names.
 */

export const HF_ENDPOINT_STATES = [
  "pending",
  "initializing",
  "updating",
  "updateFailed",
  "running",
  "paused",
  "failed",
  "scaledToZero",
] as const;

export type HfEndpointState = (typeof HF_ENDPOINT_STATES)[number];

/** `protected` is legacy (reported by old endpoints); PAIR never creates `public`. */
export type HfAccessType = "public" | "authenticated" | "private" | "protected";

export interface HfEndpoint {
  readonly namespace: string;
  readonly name: string;
  /** `status.createdAt` in canonical ms form (`canonicalIncarnation`): with (namespace, name) the identity. */
  readonly incarnation: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** A state this client does not know is reported as `unrecognized` with `rawState`. */
  readonly state: HfEndpointState | "unrecognized";
  readonly rawState: string;
  readonly message: string | undefined;
  /** The data-plane base URL; undefined when HF reports none (pending, paused, failed). */
  readonly url: string | undefined;
  readonly accessType: string;
  readonly vendor: string | undefined;
  readonly region: string | undefined;
  readonly accelerator: string | undefined;
  readonly instanceType: string | undefined;
  readonly instanceSize: string | undefined;
  readonly minReplica: number | undefined;
  readonly maxReplica: number | undefined;
  readonly scaleToZeroTimeoutMin: number | undefined;
  readonly readyReplicas: number | undefined;
  readonly targetReplicas: number | undefined;
  readonly repository: string;
  readonly revision: string | undefined;
  readonly task: string | undefined;
  readonly healthRoute: string | undefined;
  readonly tags: readonly string[];
  /** The container's plain env vars as HF echoes them (secrets are never part of it). */
  readonly env: Readonly<Record<string, string>>;
}

/** What to create (mapped to HF's create body). Secrets go in `secrets` and are never echoed back. */
export interface HfEndpointSpec {
  readonly name: string;
  readonly accessType: "private" | "authenticated";
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly minReplica: number;
  readonly maxReplica: number;
  /** Minutes idle before HF scales to zero (needs minReplica 0). */
  readonly scaleToZeroTimeoutMin?: number;
  readonly repository: string;
  readonly framework?: string;
  readonly revision?: string;
  readonly task?: string;
  /** HF's `model.image` union, e.g. `{ vLLM: { url, port, healthRoute } }` (default `{ huggingface: {} }`). */
  readonly image?: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, string>>;
  readonly secrets?: Readonly<Record<string, string>>;
  readonly tags?: readonly string[];
}

/** A partial update: only the given fields are sent (HF merges them into the current configuration). */
export interface HfEndpointUpdate {
  readonly instanceType?: string;
  readonly instanceSize?: string;
  readonly accelerator?: string;
  readonly minReplica?: number;
  readonly maxReplica?: number;
  readonly scaleToZeroTimeoutMin?: number | null;
  readonly repository?: string;
  readonly revision?: string;
  readonly image?: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, string>>;
  readonly tags?: readonly string[];
  readonly accessType?: "private" | "authenticated";
}

export interface HfAccount {
  /** The user (or org/app) name: the default namespace when `type` is "user". */
  readonly name: string;
  readonly type: string;
  readonly orgs: readonly string[];
  /** The token's role as HF reports it ("read", "write", "fineGrained"), if reported. */
  readonly tokenRole: string | undefined;
}

export interface HfComputeOffer {
  readonly id: string;
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly numAccelerators: number;
  readonly architecture: string | undefined;
  /** Total over all accelerators; undefined on CPU hardware. */
  readonly gpuMemoryGb: number | undefined;
  readonly status: string;
  readonly pricePerHourUsd: number;
  readonly quota: { readonly maxAccelerators: number; readonly usedAccelerators: number } | undefined;
  /** HF's CLI rule: not deprecated/not_available and quota room for this many accelerators. */
  readonly deployable: boolean;
}

export interface HfCatalogDeploy {
  readonly namespace: string;
  readonly repoId: string;
  readonly endpointName?: string;
  readonly accelerator?: "cpu" | "gpu" | "neuron";
}
