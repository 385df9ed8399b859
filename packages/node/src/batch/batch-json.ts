/**
 * The OpenAI objects of the Files and Batch APIs, as the official clients read them: a file
 * (`object: "file"`), a batch (`object: "batch"`, its statuses, times in unix seconds, `request_counts`,
 * `errors` as a list or null), and the lists they come in. PAIR adds `pair` to a batch: what its lines
 * are doing now (running, waiting, re-run after a crash), for `pair batch status`.
 * Must not know: where they are stored, HTTP.
 */

import type { LineCounts, StoredBatch, StoredFile } from "./batch-store.js";
import type { StoredRental } from "./rental-store.js";

/** A batch's lifecycle event, as the rented nodes' state history keeps it. */
export interface BatchEvent {
  readonly at: string;
  readonly state: string;
  readonly reason: string | null;
}

export function fileJson(f: StoredFile): Record<string, unknown> {
  return {
    id: f.id,
    object: "file",
    bytes: f.bytes,
    created_at: f.createdAtS,
    filename: f.filename,
    purpose: f.purpose,
    status: "processed",
    status_details: null,
  };
}

/** What PAIR knows of a batch beyond its row: lines in flight, by node, its rental and events. */
export interface BatchLive {
  readonly inFlight: number;
  /** Completed lines by serving node. */
  readonly byNode: Readonly<Record<string, number>>;
  readonly rent?: StoredRental | undefined;
  readonly events?: readonly BatchEvent[];
}

export function batchJson(b: StoredBatch, counts: LineCounts, live: BatchLive): Record<string, unknown> {
  const { inFlight, rent, events = [] } = live;
  return {
    id: b.id,
    object: "batch",
    endpoint: b.endpoint,
    errors:
      b.errors.length === 0
        ? null
        : {
            object: "list",
            data: b.errors.map((e) => ({
              code: e.code,
              message: e.message,
              param: null,
              line: e.line ?? null,
            })),
          },
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: b.createdAtS,
    in_progress_at: b.inProgressAtS,
    expires_at: b.expiresAtS,
    finalizing_at: b.finalizingAtS,
    completed_at: b.completedAtS,
    failed_at: b.failedAtS,
    expired_at: b.expiredAtS,
    cancelling_at: b.cancellingAtS,
    cancelled_at: b.cancelledAtS,
    request_counts: { total: counts.total, completed: counts.completed, failed: counts.failed },
    metadata: b.metadata,
    pair: {
      requester: b.requester,
      pending: counts.pending,
      running: inFlight,
      reruns: counts.reruns,
      by_node: live.byNode,
      rent: rent === undefined ? null : rentalJson(rent),
      events,
    },
  };
}

/** A `--rent auto` batch's rental (`pair.rent`): times in unix seconds, money in USD. */
export function rentalJson(r: StoredRental): Record<string, unknown> {
  return {
    state: r.state,
    model: r.model,
    deadline_at: r.deadlineAtS,
    budget_usd: r.budgetUsd,
    node: r.node,
    flavor: r.flavor,
    gpu: r.gpu,
    usd_per_hour: r.usdPerHour,
    rented_at: r.rentedAtS,
    serving_at: r.servingAtS,
    stopped_at: r.stoppedAtS,
    stop_reason: r.stopReason,
    spent_usd: r.spentUsd,
    measured_tokens_per_s: r.measuredTokensPerS,
    note: r.note,
  };
}

/** A page of a list, with OpenAI's cursor fields. */
export function listJson(
  data: readonly Record<string, unknown>[],
  hasMore: boolean,
): Record<string, unknown> {
  return {
    object: "list",
    data,
    first_id: data[0]?.["id"] ?? null,
    last_id: data.at(-1)?.["id"] ?? null,
    has_more: hasMore,
  };
}
