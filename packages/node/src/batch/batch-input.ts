/**
 * A batch's input file read as OpenAI's Batch API defines it: JSONL, one request per line,
 * `{"custom_id", "method": "POST", "url", "body"}`. What makes the file unusable as a whole (a line
 * that is not JSON, a missing or repeated `custom_id`, another route than the batch's) fails the batch
 * with the line numbers, as OpenAI does; a body that is not a valid request for its route is that
 * line's error (`invalid_request` in the error file) and the batch goes on.
 * Must not know: how lines run, where files are kept.
 */

import { randomBytes } from "node:crypto";
import { pairErrorOfInvalidRequest, validateRequest, type DialectRoute } from "@pair/dialects";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../http/json-depth.js";
import type { BatchProblem } from "./batch-store.js";

/** The routes a batch may run, as OpenAI's Batch API allows them. */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** OpenAI's own limit of requests per batch. */
export const MAX_BATCH_LINES = 50_000;

export function isBatchEndpoint(value: unknown): value is BatchEndpoint {
  return typeof value === "string" && (BATCH_ENDPOINTS as readonly string[]).includes(value);
}

export interface InputLine {
  readonly customId: string;
  /** The request body, as JSON text. */
  readonly body: string;
  /** The model it asks for ("" when the body has none). */
  readonly model: string;
  /** Set when the line cannot run: its error-file line. */
  readonly result?: string;
}

export type ReadInput =
  | { readonly ok: true; readonly lines: readonly InputLine[] }
  | { readonly ok: false; readonly problems: readonly BatchProblem[] };

/** At most this many problems are listed: a file wrong on every line needs only the first few. */
const MAX_PROBLEMS = 20;

export function readBatchInput(text: string, endpoint: BatchEndpoint): ReadInput {
  const problems: BatchProblem[] = [];
  const lines: InputLine[] = [];
  const seen = new Set<string>();
  const raw = text.split("\n");
  raw.forEach((source, i) => {
    const line = i + 1;
    if (source.trim() === "" || problems.length >= MAX_PROBLEMS) return;
    const problem = (code: string, message: string): void => void problems.push({ code, message, line });
    if (jsonNestsDeeperThan(Buffer.from(source)))
      return problem("invalid_json_line", `line ${line} nests deeper than ${MAX_JSON_DEPTH} levels`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(source);
    } catch {
      return problem("invalid_json_line", `line ${line} is not JSON`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return problem("invalid_json_line", `line ${line} is not a JSON object`);
    const o = parsed as Record<string, unknown>;
    const customId = o["custom_id"];
    if (typeof customId !== "string" || customId === "" || customId.length > 512)
      return problem(
        "missing_required_parameter",
        `line ${line} has no custom_id (a string of 1–512 characters)`,
      );
    if (seen.has(customId))
      return problem(
        "duplicate_custom_id",
        `line ${line} repeats custom_id "${customId}": each must be unique`,
      );
    seen.add(customId);
    if (o["method"] !== "POST") return problem("invalid_request", `line ${line}: method must be "POST"`);
    if (o["url"] !== endpoint)
      return problem(
        "mismatched_endpoint",
        `line ${line}: url ${JSON.stringify(o["url"])} is not the batch's endpoint ${endpoint}`,
      );
    const body = o["body"];
    if (typeof body !== "object" || body === null || Array.isArray(body))
      return problem("invalid_request", `line ${line}: body must be a JSON object`);
    const model =
      typeof (body as Record<string, unknown>)["model"] === "string"
        ? String((body as Record<string, unknown>)["model"])
        : "";
    const text = JSON.stringify(body);
    const valid = validateRequest(endpoint as DialectRoute, body);
    if (valid.ok) return void lines.push({ customId, body: text, model });
    const error = pairErrorOfInvalidRequest(valid.error);
    return void lines.push({
      customId,
      body: text,
      model,
      result: errorLine(customId, null, error.code, error.message),
    });
  });
  if (problems.length > 0) return { ok: false, problems };
  if (lines.length === 0)
    return { ok: false, problems: [{ code: "empty_file", message: "the input file holds no request" }] };
  if (lines.length > MAX_BATCH_LINES)
    return {
      ok: false,
      problems: [
        {
          code: "too_many_requests",
          message: `the file holds ${lines.length} requests; a batch takes at most ${MAX_BATCH_LINES}`,
        },
      ],
    };
  return { ok: true, lines };
}

/** An output file's line: the reply as the route gave it. */
export function outputLine(customId: string, response: BatchResponse): string {
  return JSON.stringify({ id: requestLineId(), custom_id: customId, response, error: null });
}

/** An error file's line: the reply when there was one, and PAIR's code and message. */
export function errorLine(
  customId: string,
  response: BatchResponse | null,
  code: string,
  message: string,
): string {
  return JSON.stringify({ id: requestLineId(), custom_id: customId, response, error: { code, message } });
}

export interface BatchResponse {
  readonly status_code: number;
  readonly request_id: string;
  readonly body: unknown;
}

function requestLineId(): string {
  return `batch_req_${randomBytes(12).toString("hex")}`;
}

const WINDOW_UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A `completion_window` in ms: `24h` (OpenAI's one value), or minutes/hours/days up to 7 days. */
export function windowMs(text: string): number | undefined {
  const m = /^(\d{1,5})(m|h|d)$/.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * WINDOW_UNIT_MS[m[2] as keyof typeof WINDOW_UNIT_MS];
  return ms >= 60_000 && ms <= 7 * 86_400_000 ? ms : undefined;
}
