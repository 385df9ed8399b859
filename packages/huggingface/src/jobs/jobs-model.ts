/**
 * Hugging Face Jobs in PAIR's words: a job as observed (id, stage, message, labels, plain env,
 * secret names, flavor, timeout, exposed URLs, times), the spec of a job to run, and a flavor with
 * its price. Wire shapes live in jobs-wire.ts.
 * Must not know: HTTP, the hosting contract.
 */

import type { RevealableToken } from "../secret-token.js";

/** Stages (reference §5.4 [C]); any other word HF sends is kept verbatim in `rawStage`. */
export const HF_JOB_STAGES = ["SCHEDULING", "RUNNING", "COMPLETED", "ERROR", "CANCELED", "DELETED"] as const;
export type HfJobStage = (typeof HF_JOB_STAGES)[number];

export interface HfJob {
  readonly namespace: string;
  /** 24-hex, stable: the incarnation. */
  readonly id: string;
  readonly stage: HfJobStage | "unknown";
  readonly rawStage: string;
  readonly message: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly environment: Readonly<Record<string, string>>;
  readonly secretNames: readonly string[];
  readonly flavor: string | undefined;
  readonly timeoutSeconds: number | undefined;
  readonly dockerImage: string | undefined;
  readonly command: readonly string[];
  readonly exposeUrls: readonly string[];
  readonly createdAtMs: number;
  readonly startedAtMs: number | undefined;
  readonly finishedAtMs: number | undefined;
}

/** A job to run. Secret values stay wrapped until the create body is written. */
export interface HfJobSpec {
  readonly dockerImage: string;
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, RevealableToken>>;
  readonly flavor: string;
  readonly timeoutSeconds: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly exposePorts: readonly number[];
}

export interface HfJobFlavor {
  readonly name: string;
  readonly prettyName: string | undefined;
  /** null for CPU flavors. */
  readonly gpuModel: string | null;
  readonly gpuCount: number;
  /** USD per minute as HF lists it (`unitCostUSD` with `unitLabel: "minute"`). */
  readonly usdPerMinute: number;
}

/** One page of a listing: the jobs and the next page's URL (from `Link: <…>; rel="next"`). */
export interface HfJobPage {
  readonly jobs: readonly HfJob[];
  readonly next: string | undefined;
}
