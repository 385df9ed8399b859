/**
 * The port the Jobs adapter talks through: every Jobs API call it makes, in PAIR's job model. The
 * HTTPS implementation and any test double implement it; every failure is a `HuggingFaceApiError`
 * with a stable `kind`.
 * Must not know: HTTP, URLs, retries, tokens.
 */

import type { HfAccount } from "../model.js";
import type { HfJob, HfJobFlavor, HfJobPage, HfJobSpec } from "./jobs-model.js";

export interface JobsListFilter {
  /** Repeatable `stage=` (any of). */
  readonly stages?: readonly string[];
  /** Repeatable `label=key=value` (all of). */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface JobsTransport {
  whoami(): Promise<HfAccount>;
  /** One page; pass `page.next` back as `pageUrl` for the following one. */
  listJobsPage(namespace: string, filter?: JobsListFilter, pageUrl?: string): Promise<HfJobPage>;
  /** Throws `not_found` when absent. */
  getJob(namespace: string, id: string): Promise<HfJob>;
  /** Never retried. A lost answer throws `uncertain`: list by the owner labels to find out. */
  createJob(namespace: string, spec: HfJobSpec): Promise<HfJob>;
  /** Idempotent: a cancel of an ended job changes nothing. Returns the job as HF answered it. */
  cancelJob(namespace: string, id: string): Promise<HfJob | undefined>;
  /** Flavors with per-minute prices. */
  hardware(): Promise<HfJobFlavor[]>;
  close(): Promise<void>;
}
