/**
 * Batches (OpenAI's Files and Batch APIs): the durable store, the input file's reading, the runner
 * that spreads lines over the cluster behind users' requests, and the objects clients read.
 * Must not know: HTTP (server/batch-routes.ts), how a line reaches an engine (injected `RunLine`).
 */

export { batchJson, fileJson, listJson, rentalJson, type BatchEvent } from "./batch-json.js";
export {
  BATCH_ENDPOINTS,
  errorLine,
  isBatchEndpoint,
  MAX_BATCH_LINES,
  outputLine,
  readBatchInput,
  windowMs,
  type BatchEndpoint,
  type InputLine,
} from "./batch-input.js";
export {
  BatchRunner,
  DEFAULT_BATCH_LINES,
  type BatchRunnerOptions,
  type Ending,
  type LineReply,
  type RunLine,
} from "./batch-runner.js";
export {
  BatchStore,
  type BatchProblem,
  type BatchStatus,
  type LineCounts,
  type StoredBatch,
  type StoredFile,
  type StoredLine,
} from "./batch-store.js";

/** Codes a batch's routes, lines and input file can give (docs/errors.md lists each). */
export const BATCH_ERROR_CODES = [
  "file_not_found",
  "batch_not_found",
  "file_too_large",
  "batch_cancelled",
  "batch_expired",
  "invalid_json_line",
  "missing_required_parameter",
  "duplicate_custom_id",
  "mismatched_endpoint",
  "empty_file",
  "too_many_requests",
] as const;
export {
  ASSUMED_GPU_TOKENS_PER_S,
  ASSUMED_TOKENS_PER_S,
  DEFAULT_OUTPUT_TOKENS,
  planBatch,
  planRental,
  RENTAL_STARTUP_S,
  type BatchPlan,
  type HistoryRow,
  type ModelPlan,
  type RentableGpu,
  type RentalOption,
  type RentalPlan,
} from "./batch-plan.js";
export {
  BatchRental,
  rentalNodeName,
  type BatchRentalOptions,
  type HookAnswer,
  type RecordEvent,
  type RentalHooks,
  type RentedNodeState,
} from "./batch-rental.js";
export { readRentOptions, type RentOptions } from "./rent-options.js";
export type { RentalState, StoredRental } from "./rental-store.js";
