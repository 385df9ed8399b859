/**
 * `POST /v1/batches`'s two steps before the batch runs: check the request (its fields, its input
 * file read and checked as a whole, its `--rent auto` metadata), then keep the batch and its rental.
 * Must not know: HTTP (batch-routes.ts answers), how lines run.
 */

import { randomBytes } from "node:crypto";
import {
  BATCH_ENDPOINTS,
  isBatchEndpoint,
  readBatchInput,
  readRentOptions,
  windowMs,
  type BatchEndpoint,
  type BatchStore,
  type RentOptions,
  type StoredBatch,
  type StoredFile,
} from "../batch/index.js";

/** A create request that passed every check. */
export interface BatchRequest {
  readonly ok: true;
  readonly endpoint: BatchEndpoint;
  readonly completionWindow: string;
  readonly windowS: number;
  readonly metadata: Record<string, string> | null;
  readonly file: StoredFile;
  /** A file unusable as a whole is not refused: it makes a `failed` batch with its problems. */
  readonly input: ReturnType<typeof readBatchInput>;
  readonly rent: RentOptions | undefined;
}

/** Why a create request is refused, as the route answers it. */
export interface BatchRefusal {
  readonly ok: false;
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly param: string | null;
}

function refused(status: number, code: string, message: string, param: string | null = null): BatchRefusal {
  return { ok: false, status, code, message, param };
}

/** Checks a create request's body, in the order its errors are reported. */
export function readBatchRequest(
  store: BatchStore,
  body: Buffer,
  canRent: boolean,
): BatchRequest | BatchRefusal {
  const o = jsonObject(body);
  if (o === undefined) return refused(400, "invalid_request", "the body must be a JSON object");
  const endpoint = o["endpoint"];
  if (!isBatchEndpoint(endpoint))
    return refused(
      400,
      "invalid_request",
      `endpoint must be one of ${BATCH_ENDPOINTS.join(", ")}`,
      "endpoint",
    );
  const window = o["completion_window"];
  const ms = typeof window === "string" ? windowMs(window) : undefined;
  if (typeof window !== "string" || ms === undefined)
    return refused(
      400,
      "invalid_request",
      'completion_window must be a duration such as "24h" (OpenAI\'s one value), "8h" or "90m", at most 7 days',
      "completion_window",
    );
  const metadata = readMetadata(o["metadata"]);
  if (metadata === false)
    return refused(
      400,
      "invalid_request",
      "metadata must be an object of at most 16 string values",
      "metadata",
    );
  const inputId = o["input_file_id"];
  const file = typeof inputId === "string" ? store.file(inputId) : undefined;
  if (file === undefined || file.purpose !== "batch")
    return refused(
      404,
      "file_not_found",
      `no input file ${String(inputId)} (upload it with purpose "batch")`,
      "input_file_id",
    );
  const input = readBatchInput(store.fileContent(file.id).toString("utf8"), endpoint);
  const windowS = Math.ceil(ms / 1000);
  const rent = readRentOptions(metadata, windowS, input.ok ? input.lines : []);
  if (!rent.ok) return refused(400, "invalid_request", rent.message, "metadata");
  if (rent.rent !== undefined && !canRent)
    return refused(
      400,
      "invalid_request",
      "metadata.pair_rent: this node cannot rent for a batch (no Hugging Face Jobs here); submit without it",
      "metadata",
    );
  return { ok: true, endpoint, completionWindow: window, windowS, metadata, file, input, rent: rent.rent };
}

/** Keeps the new batch (`in_progress`, or `failed` when its file cannot run) and its rental if it rents. */
export function storeBatch(
  store: BatchStore,
  request: BatchRequest,
  requester: string,
  nowS: number,
): StoredBatch {
  const { input, rent } = request;
  const batch: StoredBatch = {
    id: `batch_${randomBytes(12).toString("hex")}`,
    endpoint: request.endpoint,
    inputFileId: request.file.id,
    completionWindow: request.completionWindow,
    status: input.ok ? "in_progress" : "failed",
    requester,
    metadata: request.metadata,
    errors: input.ok ? [] : input.problems,
    outputFileId: null,
    errorFileId: null,
    createdAtS: nowS,
    expiresAtS: nowS + request.windowS,
    inProgressAtS: input.ok ? nowS : null,
    finalizingAtS: null,
    completedAtS: null,
    failedAtS: input.ok ? null : nowS,
    expiredAtS: null,
    cancellingAtS: null,
    cancelledAtS: null,
  };
  store.addBatch(batch, input.ok ? input.lines : []);
  if (rent !== undefined && input.ok)
    store.rentals.add({
      batchId: batch.id,
      model: rent.model,
      credential: rent.credential,
      deadlineAtS: nowS + Math.ceil(rent.deadlineS),
      budgetUsd: rent.budgetUsd,
    });
  return batch;
}

/** The body as a JSON object, or undefined when it is not one. */
function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    return parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** OpenAI's `metadata`: up to 16 string values; null when absent, false when not that. */
function readMetadata(value: unknown): Record<string, string> | null | false {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  if (
    entries.length > 16 ||
    entries.some(([k, v]) => typeof v !== "string" || k.length > 64 || v.length > 512)
  )
    return false;
  return Object.fromEntries(entries) as Record<string, string>;
}
