/**
 * Everything that can go wrong talking to Runpod, as one typed error: a stable `kind`, the HTTP
 * status and problem fields when there was an answer, `retryAfterMs` and the rate-limit state,
 * whether a retry can help, and the cause. The body parser accepts v2's RFC 9457 problem+json and,
 * defensively, the shapes v1 was seen to send (`{error,status}`, `{message}`, `[{error?,problems[]}]`,
 * plain text). Capacity refusals are recognised by wording (v1: a 500; v2: a 400 or 403 whose
 * free-text detail says so), funds by 402 or wording; anything else keeps its status's kind.
 * `uncertain` is the create whose outcome is unknown: the pod may exist and bill; the caller must
 * reconcile by listing, never retry blindly. Messages carry no secret.
 * Must not know: undici, the key, PAIR's retry policy.
 */

import type { RateLimitState } from "./rate-limit.js";

export type RunpodErrorKind =
  | "unauthorized" // 401: the key is missing, malformed or invalid
  | "forbidden" // 403: the key lacks access
  | "not_found" // 404
  | "conflict" // 409: the action is not valid in the pod's status
  | "invalid_request" // 400, 405, 413, 422: the request is wrong; retrying cannot help
  | "rate_limited" // 429: see retryAfterMs
  | "no_capacity" // no GPU of that type (create) or on the host (start): try another type or later
  | "insufficient_funds" // the account balance cannot cover the pod: a person must add funds
  | "server" // 5xx on a call that is safe to repeat
  | "uncertain" // a create may or may not have happened: reconcile by name before anything else
  | "network" // the request never reached Runpod (refused, DNS, connect timeout)
  | "timeout" // no (complete) answer in time, on a call that is safe to repeat
  | "tls" // certificate verification failed: never retried, never bypassed
  | "protocol"; // an answer that is not what the spec promises

export type RunpodOperation =
  "createPod" | "listPods" | "getPod" | "podAction" | "deletePod" | "listGpuCatalog";

export interface ProblemFields {
  readonly title?: string;
  readonly detail?: string;
  readonly errors: readonly string[];
}

export class RunpodApiError extends Error {
  readonly kind: RunpodErrorKind;
  readonly operation: RunpodOperation;
  readonly status: number | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  readonly errors: readonly string[];
  readonly retryAfterMs: number | undefined;
  readonly rateLimit: RateLimitState | undefined;

  constructor(fields: {
    kind: RunpodErrorKind;
    operation: RunpodOperation;
    message: string;
    status?: number;
    problem?: ProblemFields;
    retryAfterMs?: number;
    rateLimit?: RateLimitState;
    cause?: unknown;
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = "RunpodApiError";
    this.kind = fields.kind;
    this.operation = fields.operation;
    this.status = fields.status;
    this.title = fields.problem?.title;
    this.detail = fields.problem?.detail;
    this.errors = fields.problem?.errors ?? [];
    this.retryAfterMs = fields.retryAfterMs;
    this.rateLimit = fields.rateLimit;
  }

  /** Whether repeating the same call later can succeed. Never true for `uncertain`: reconcile first. */
  get retryable(): boolean {
    switch (this.kind) {
      case "rate_limited":
      case "server":
      case "network":
      case "timeout":
      case "no_capacity":
        return true;
      case "unauthorized":
      case "forbidden":
      case "not_found":
      case "conflict":
      case "invalid_request":
      case "insufficient_funds":
      case "uncertain":
      case "tls":
      case "protocol":
        return false;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const MAX_TEXT = 500;

/** The problem fields of an error body, whichever shape it came in. */
export function parseProblem(text: string): ProblemFields {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const trimmed = text.trim().slice(0, MAX_TEXT);
    return trimmed === "" ? { errors: [] } : { detail: trimmed, errors: [] };
  }
  if (Array.isArray(value)) {
    const errors: string[] = [];
    for (const item of value) {
      if (!isRecord(item)) continue;
      if (typeof item["error"] === "string") errors.push(item["error"]);
      if (Array.isArray(item["problems"]))
        for (const p of item["problems"]) if (typeof p === "string") errors.push(p);
    }
    return { detail: errors.join("; ").slice(0, MAX_TEXT), errors };
  }
  if (!isRecord(value)) return { detail: text.trim().slice(0, MAX_TEXT), errors: [] };
  const detail = [value["detail"], value["error"], value["message"]].find(
    (v): v is string => typeof v === "string",
  );
  const errors = Array.isArray(value["errors"])
    ? value["errors"].filter((e): e is string => typeof e === "string")
    : [];
  return {
    ...(typeof value["title"] === "string" ? { title: value["title"] } : {}),
    ...(detail !== undefined ? { detail } : {}),
    errors,
  };
}

const CAPACITY = [
  "no longer any instances",
  "no instances currently available",
  "instances available",
  "not enough free gpus",
  "does not have the resources",
];
/** Broader wordings, trusted only on a 4xx (a 5xx "unavailable" to a create may have created a pod). */
const CAPACITY_4XX = [
  "no instances",
  "capacity",
  "no gpus available",
  "not available",
  "unavailable",
  "out of stock",
  "not enough",
];
const FUNDS = ["balance is too low", "add funds", "insufficient funds", "insufficient balance"];

/** A refusal for lack of capacity, recognised by its wording (any status). */
export function isCapacityRefusal(problem: ProblemFields): boolean {
  return mentions(problem, CAPACITY);
}

function mentions(problem: ProblemFields, phrases: readonly string[]): boolean {
  const text = [problem.detail ?? "", ...problem.errors].join("\n").toLowerCase();
  return phrases.some((phrase) => text.includes(phrase));
}

/**
 * The kind of an HTTP error answer to `operation`. Capacity and balance refusals are definite
 * (nothing was created) whatever their status; any other 5xx to a create is `uncertain`, because
 * Runpod was seen to answer 500 after creating a billing pod (reference §1.4, PR #2305).
 */
export function kindOfAnswer(
  operation: RunpodOperation,
  status: number,
  problem: ProblemFields,
): RunpodErrorKind {
  if (status === 402) return "insufficient_funds";
  if (status >= 400 && (operation === "createPod" || operation === "podAction")) {
    if (mentions(problem, FUNDS)) return "insufficient_funds";
    if (isCapacityRefusal(problem)) return "no_capacity";
    // v2's free-text refusal (400, sometimes 403); a 400 listing field `errors` is a schema rejection.
    const schema = status === 400 && problem.errors.length > 0;
    if (status < 500 && !schema && mentions(problem, CAPACITY_4XX)) return "no_capacity";
  }
  if (status >= 500) return operation === "createPod" ? "uncertain" : "server";
  switch (status) {
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 429:
      return "rate_limited";
    default:
      return status >= 400 && status < 500 ? "invalid_request" : "protocol";
  }
}
